/**
 * Kubernetes Events about the objects a controller reconciles (`events.k8s.io/v1`), written the
 * way client-go's recorders write them: a repeated event is one Event whose `series.count` grows,
 * writes per object are rate-limited by a token bucket (client-go's spam filter: a burst of 25,
 * then one every 5 minutes), and recording never throws, never waits and never fails a run.
 */
import { hostname } from 'node:os';
import type { KubernetesObject } from '@kubernetes/client-node';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { describeError } from '../core/index.js';
import { classifyError, type KubeClient, type ResourceClient } from '../kube/index.js';
import type { Logger } from './logging.js';
import type { ControllerLabels, RxkubeMetrics } from './metrics.js';

export type KubeEventType = 'Normal' | 'Warning';

export interface EventOptions {
  /** What was done or failed (`Reconcile`, `Cleanup`, ...); at most 128 characters. Default: the run's action. */
  readonly action?: string;
}

/**
 * Records Kubernetes Events about one object: `ctx.events` in a run (client-go's and
 * controller-runtime's EventRecorder, bound to its object). Not `ResourceEvent`, the trigger of a run.
 */
export interface EventRecorder {
  /** Something worth telling happened (`kubectl describe` lists it under Events). */
  normal(reason: string, message: string, options?: EventOptions): void;
  /** Something went wrong that a human may need to look at. */
  warning(reason: string, message: string, options?: EventOptions): void;
}

/** @deprecated Renamed `EventRecorder`; this alias goes in the next release. */
export type ResourceEvents = EventRecorder;

export interface EventBroadcasterOptions {
  readonly client: KubeClient;
  /** `reportingController` of every Event: a qualified name (`example.com/my-controller`, `webpage`). */
  readonly reportingController: string;
  /** Default `<reportingController>-<hostname>` (client-go's default), at most 128 characters. */
  readonly reportingInstance?: string;
  readonly logger: Logger;
  readonly metrics?: RxkubeMetrics | undefined;
  /** The labels of the metrics (`rxkube_events_recorded_total`, `rxkube_events_dropped_total`). */
  readonly labels?: ControllerLabels;
  /** Writes per object before the rate limit holds them back (default 25, as client-go). */
  readonly burst?: number;
  /** One more write per object every this many ms (default 300,000: client-go's 1/300 qps). */
  readonly refillMs?: number;
  /** A repeat after this long without one starts a new Event (default 6 min, as client-go's series). */
  readonly seriesIdleMs?: number;
  /** Series kept in memory (default 4096); the least recently seen is forgotten first. */
  readonly maxSeries?: number;
  readonly scheduler?: SchedulerLike;
}

/** The Event as written; `series` once it has repeated. */
interface EventBody extends KubernetesObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: KubeEventType;
  note: string;
  regarding: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  series?: { count: number; lastObservedTime: string };
}

interface Series {
  readonly key: string;
  /** Whose token bucket the writes take from. */
  readonly object: string;
  readonly event: EventBody;
  /** The Event's name once it was created. */
  name: string | undefined;
  count: number;
  written: number;
  lastObserved: number;
  /** A write held back by the rate limit, scheduled for when a token is there. */
  deferred: Subscription | undefined;
  /** Writes of one series run one after the other. */
  chain: Promise<void>;
}

const EVENTS = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true } as const;
const MAX_REASON = 128;
const MAX_ACTION = 128;
const MAX_NOTE_BYTES = 1024;

/**
 * The Events of one controller, as client-go's EventBroadcaster: it hands out a recorder per
 * object (`about`) and writes what they record. A class because it holds state: the series seen in the last
 * minutes, a token bucket per object, deferred writes — `stop()` ends them.
 */
export class EventBroadcaster {
  private readonly events: ResourceClient<EventBody>;
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly scheduler: SchedulerLike;
  private readonly reportingInstance: string;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly seriesIdleMs: number;
  private readonly maxSeries: number;
  private sequence = 0;
  private stopped = false;

  constructor(private readonly options: EventBroadcasterOptions) {
    this.events = options.client.resource<EventBody>(EVENTS);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.reportingInstance = (options.reportingInstance ?? `${options.reportingController}-${hostname()}`).slice(0, 128);
    this.burst = options.burst ?? 25;
    this.refillMs = options.refillMs ?? 300_000;
    this.seriesIdleMs = options.seriesIdleMs ?? 6 * 60_000;
    this.maxSeries = options.maxSeries ?? 4096;
  }

  /** The recorder of Events about `regarding`; `action` is the default action of its events. */
  about(regarding: KubernetesObject, action: string): EventRecorder {
    return {
      normal: (reason, message, options) => this.record(regarding, 'Normal', reason, message, options?.action ?? action),
      warning: (reason, message, options) => this.record(regarding, 'Warning', reason, message, options?.action ?? action),
    };
  }

  /** Records one event (never throws: a bad argument is logged and dropped). */
  record(regarding: KubernetesObject, type: KubeEventType, reason: string, message: string, action: string): void {
    try {
      this.observe(regarding, type, reason, message, action);
    } catch (err) {
      this.drop('invalid', { err, reason }, 'event not recorded');
    }
  }

  /** Resolves once every write under way has ended (or after `timeoutMs`). Deferred writes are not waited for. */
  async flush(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all([...this.series.values()].map((s) => s.chain)), deadline]);
    clearTimeout(timer);
  }

  /** Records nothing more, drops deferred writes and waits (up to `timeoutMs`) for writes under way. */
  async stop(timeoutMs?: number): Promise<void> {
    this.stopped = true;
    for (const s of this.series.values()) this.cancelDeferred(s);
    await this.flush(timeoutMs);
  }

  private observe(regarding: KubernetesObject, type: KubeEventType, reason: string, message: string, action: string): void {
    if (this.stopped) return;
    if (typeof reason !== 'string' || reason === '' || reason.length > MAX_REASON) {
      throw new TypeError(`reason must be a non-empty string of at most ${MAX_REASON} characters, got ${JSON.stringify(reason)}`);
    }
    if (typeof action !== 'string' || action === '' || action.length > MAX_ACTION) {
      throw new TypeError(`action must be a non-empty string of at most ${MAX_ACTION} characters, got ${JSON.stringify(action)}`);
    }
    const note = truncateBytes(typeof message === 'string' ? message : describeError(message), MAX_NOTE_BYTES);
    const meta = regarding.metadata ?? {};
    const ref = { apiVersion: regarding.apiVersion, kind: regarding.kind, name: meta.name, namespace: meta.namespace, uid: meta.uid };
    if (!ref.name) throw new TypeError('the regarding object has no metadata.name');
    this.options.metrics?.eventRecorded(this.labels(), type);
    const object = meta.uid ?? `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
    // Like the legacy recorder's key: the same object, type, reason, action and message.
    const key = JSON.stringify([object, type, reason, action, note]);
    const now = this.scheduler.now();
    let series = this.series.get(key);
    if (series && now - series.lastObserved > this.seriesIdleMs) {
      this.forget(series); // a finished series: the next occurrence is a new Event
      series = undefined;
    }
    if (series) {
      series.count++;
      series.lastObserved = now;
      this.series.delete(key); // most recently seen last (the map is the LRU order)
      this.series.set(key, series);
    } else {
      series = {
        key,
        object,
        event: {
          apiVersion: EVENTS.apiVersion,
          kind: EVENTS.kind,
          metadata: { name: this.eventName(ref.name, now), namespace: ref.namespace ?? 'default' },
          eventTime: microTime(now),
          reportingController: this.options.reportingController,
          reportingInstance: this.reportingInstance,
          action,
          reason,
          type,
          note,
          regarding: Object.fromEntries(Object.entries(ref).filter(([, v]) => v !== undefined)),
        },
        name: undefined,
        count: 1,
        written: 0,
        lastObserved: now,
        deferred: undefined,
        chain: Promise.resolve(),
      };
      this.series.set(key, series);
      for (const oldest of this.series.values()) {
        if (this.series.size <= this.maxSeries) break;
        this.forget(oldest);
      }
    }
    this.write(series);
  }

  /** Queues a write of what the series has not written yet, if the object's bucket has a token. */
  private write(series: Series): void {
    if (series.deferred) return; // the deferred write will carry this occurrence too
    series.chain = series.chain.then(async () => {
      if (series.written === series.count || this.series.get(series.key) !== series) return;
      const wait = this.takeToken(series.object);
      if (wait > 0) {
        series.deferred = this.scheduler.schedule(() => ((series.deferred = undefined), this.write(series)), wait);
        if (this.stopped) this.cancelDeferred(series);
        return;
      }
      const count = series.count;
      try {
        await this.send(series, count);
        series.written = count;
      } catch (err) {
        this.drop(
          'writeFailed',
          { err, kind: classifyError(err), event: series.event.metadata?.name, reason: series.event.reason },
          'event write failed',
          'warn',
        );
        series.written = count; // not retried: the next occurrence tries again
      }
    });
  }

  private async send(series: Series, count: number): Promise<void> {
    const lastObservedTime = microTime(series.lastObserved);
    if (series.name !== undefined) {
      try {
        await this.events.mergePatch(
          { name: series.name, namespace: series.event.metadata?.namespace },
          { series: { count, lastObservedTime } },
        );
        return;
      } catch (err) {
        if (classifyError(err) !== 'notFound') throw err;
        series.name = undefined; // expired on the server (events have a TTL): start it again
      }
    }
    const body: EventBody = count > 1 ? { ...series.event, series: { count, lastObservedTime } } : series.event;
    const created = await this.events.create(body);
    series.name = created.metadata?.name ?? series.event.metadata?.name;
  }

  /** 0 when a token was taken, else the ms until the object's bucket has one. */
  private takeToken(object: string): number {
    const now = this.scheduler.now();
    const bucket = this.buckets.get(object) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) / this.refillMs);
    bucket.at = now;
    this.buckets.delete(object);
    this.buckets.set(object, bucket);
    for (const oldest of this.buckets.keys()) {
      if (this.buckets.size <= this.maxSeries) break;
      this.buckets.delete(oldest); // forgetting a bucket refills it: bounded memory over exactness
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) * this.refillMs);
  }

  private forget(series: Series): void {
    this.series.delete(series.key);
    this.cancelDeferred(series);
  }

  private cancelDeferred(series: Series): void {
    if (!series.deferred) return;
    series.deferred.unsubscribe();
    series.deferred = undefined;
    if (series.count > series.written)
      this.drop(
        'rateLimited',
        { reason: series.event.reason, unwritten: series.count - series.written },
        'rate-limited event occurrences were never written',
      );
  }

  private drop(
    cause: 'invalid' | 'writeFailed' | 'rateLimited',
    fields: Record<string, unknown>,
    message: string,
    level: 'debug' | 'warn' | 'error' = cause === 'invalid' ? 'error' : 'debug',
  ): void {
    this.options.metrics?.eventDropped(this.labels(), cause);
    this.options.logger[level]({ ...fields, reportingController: this.options.reportingController }, message);
  }

  private labels(): ControllerLabels {
    return this.options.labels ?? { controller: this.options.reportingController, group: '', version: '', kind: '' };
  }

  /** client-go's `<name>.<hex nanoseconds>`, unique within this recorder. */
  private eventName(name: string, now: number): string {
    const suffix = (BigInt(Math.floor(now)) * 1_000_000n + BigInt(this.sequence++ % 1_000_000)).toString(16);
    return `${name.slice(0, 253 - suffix.length - 1)}.${suffix}`;
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let cut = text.slice(0, max);
  while (Buffer.byteLength(cut) > max - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
