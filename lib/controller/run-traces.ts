/**
 * A traced controller's runs: a root span per run, named for the controller and linked to the
 * spans of the changes that caused it; the run works with it active, so that the run's requests,
 * its dependents, its writes and the reconciler's own spans nest under it. It ends with the run's
 * outcome, which says the retry or reschedule the run led to.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  isMarkedForDeletion,
  resourceKey,
  underlyingCause,
  type ReconcileCause,
  type ReconcileOutcome,
  type ResourceEvent,
  type ResourceID,
} from '../core/index.js';
import { MAX_LINKS, type OpenSpan, type SpanAttributes, type SpanRef, type TraceIds, type Tracing } from '../observe/index.js';
import type { RunContext, RunResult } from '../processing/index.js';
import type { Primaries } from './primaries.js';

type Run = (id: ResourceID, ctx: RunContext) => Promise<RunResult | void>;

/** The changes a resource's next run links to: the first few, and how many more there were. */
interface Causes {
  readonly links: SpanRef[];
  more: number;
}

export class RunTraces<P extends KubernetesObject> {
  /** One run per resource at a time (EP1): its span by resource key. */
  private readonly open = new Map<string, OpenSpan>();
  private readonly causes = new Map<string, Causes>();

  constructor(
    private readonly tracing: Tracing,
    private readonly controller: string,
    private readonly primaries: Primaries<P>,
  ) {}

  /**
   * A change arrived: marked by a span of its own (under the span that emitted it, when a source
   * emits inside one) for the run it causes to link to.
   */
  eventArrived(event: ResourceEvent): void {
    const key = resourceKey(event.id);
    if (event.primary && event.action === 'deleted') {
      this.causes.delete(key);
      return;
    }
    // A secondary event of a resource without a primary causes no run (EP4): nothing to remember.
    if (!event.primary && !this.primaries.get(event.id)) return;
    const ref = this.tracing.mark(`${this.controller} ${event.action}`, {
      'rxkube.controller': this.controller,
      'rxkube.event.source': event.source,
      'rxkube.event.action': event.action,
      'rxkube.event.listed': event.listed === true,
      'rxkube.resource.namespace': event.id.namespace,
      'rxkube.resource.name': event.id.name,
    });
    const causes = this.causes.get(key) ?? { links: [], more: 0 };
    if (causes.links.length < MAX_LINKS) causes.links.push(ref);
    else causes.more++;
    this.causes.set(key, causes);
  }

  /** The run in its span; the span stays open until `ended` sees the run's outcome. */
  wrap(run: Run): Run {
    return (id, ctx) => {
      const key = resourceKey(id);
      const causes = this.causes.get(key);
      this.causes.delete(key);
      const primary = this.primaries.get(id);
      const span = this.tracing.startRoot(
        this.controller,
        {
          'rxkube.controller': this.controller,
          'rxkube.run': primary && isMarkedForDeletion(primary) ? 'cleanup' : 'reconcile',
          'rxkube.resource.kind': primary?.kind,
          'rxkube.resource.namespace': id.namespace,
          'rxkube.resource.name': id.name,
          'rxkube.resource.uid': primary?.metadata?.uid,
          'rxkube.resource.generation': primary?.metadata?.generation,
          'rxkube.queue.duration_ms': ctx.queuedMs,
          'rxkube.retry.attempt': ctx.retry.attempt,
          'rxkube.retry.last_attempt': ctx.retry.lastAttempt,
          ...causeAttributes(ctx.cause),
          ...(causes && causes.more > 0 ? { 'rxkube.cause.links_dropped': causes.more } : {}),
        },
        causes?.links ?? [],
      );
      this.open.get(key)?.end(); // a run torn down without an outcome (never, but a span must end)
      this.open.set(key, span);
      return span.within(() => run(id, ctx));
    };
  }

  /** EP14: the run passed its deadline; it goes on until it really ends. */
  timedOut(id: ResourceID, timeoutMs: number): void {
    this.open.get(resourceKey(id))?.addEvent('deadline passed', { 'rxkube.run.timeout_ms': timeoutMs });
  }

  /** The run's outcome ends its span; answers the span's ids for the outcome's log line. */
  ended(outcome: ReconcileOutcome): TraceIds | undefined {
    const key = resourceKey(outcome.id);
    const span = this.open.get(key);
    if (!span || outcome.result === 'skipped') return undefined;
    this.open.delete(key);
    const attributes: SpanAttributes = { 'rxkube.outcome': outcome.result };
    if (outcome.retry) {
      attributes['rxkube.retry.next_attempt'] = outcome.retry.attempt;
      attributes['rxkube.retry.after_ms'] = outcome.retry.at - outcome.endedAt;
    }
    if (outcome.reschedule) {
      attributes['rxkube.reschedule.after_ms'] = outcome.reschedule.at - outcome.endedAt;
      attributes['rxkube.reschedule.reason'] = outcome.reschedule.reason;
    }
    span.setAttributes(attributes);
    span.end(outcome.result === 'failure' ? (outcome.error ?? new Error('the run failed')) : undefined);
    return span.ids;
  }

  /** The controller stopped: spans of runs that will report no outcome end here. */
  dispose(): void {
    for (const span of this.open.values()) span.end(new Error('the controller stopped before the run ended'));
    this.open.clear();
    this.causes.clear();
  }
}

function causeAttributes(cause: ReconcileCause): SpanAttributes {
  const owed = underlyingCause(cause);
  const attributes: SpanAttributes = { 'rxkube.cause': owed.type, 'rxkube.cause.rate_limited': cause.type === 'rateLimit' };
  if (owed.type === 'event') {
    attributes['rxkube.cause.source'] = owed.source;
    attributes['rxkube.cause.action'] = owed.action;
    attributes['rxkube.cause.coalesced'] = owed.coalesced;
  } else if (owed.type === 'retry') {
    attributes['rxkube.cause.retry_attempt'] = owed.attempt;
  }
  return attributes;
}
