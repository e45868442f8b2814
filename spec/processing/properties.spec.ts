import { expect } from 'chai';
import fc from 'fast-check';
import { finalize, map, mergeMap, Subject, throwError, timer } from 'rxjs';
import type { ResourceEvent } from '../../lib/core/events.js';
import { underlyingCause, type ReconcileOutcome } from '../../lib/core/outcome.js';
import { GenericRetry, LinearRateLimiter, reconcileEach, type RunFn } from '../../lib/processing/index.js';
import { ev, testScheduler } from './helpers.js';

interface Scenario {
  readonly resources: number;
  readonly maxConcurrentReconciliations: number;
  readonly events: ReadonlyArray<{ readonly at: number; readonly resource: number; readonly kind: 'primary' | 'secondary' | 'delete' }>;
  readonly runs: ReadonlyArray<{ readonly duration: number; readonly fails: boolean; readonly rescheduleAfter: number | undefined }>;
  readonly retryInterval: number | undefined;
  readonly rateLimit: { readonly limit: number; readonly period: number } | undefined;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  resources: fc.integer({ min: 1, max: 6 }),
  maxConcurrentReconciliations: fc.integer({ min: 1, max: 4 }),
  events: fc.array(
    fc.record({
      at: fc.integer({ min: 0, max: 300 }),
      resource: fc.nat(5),
      kind: fc.constantFrom('primary', 'primary', 'primary', 'secondary', 'secondary', 'delete'),
    }),
    { minLength: 1, maxLength: 60 },
  ),
  runs: fc.array(
    fc.record({
      duration: fc.integer({ min: 0, max: 30 }),
      fails: fc.boolean(),
      rescheduleAfter: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 20 },
  ),
  retryInterval: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  rateLimit: fc.option(fc.record({ limit: fc.integer({ min: 1, max: 3 }), period: fc.integer({ min: 10, max: 120 }) }), { nil: undefined }),
});

type Entry =
  | { readonly kind: 'event'; readonly seq: number; readonly name: string; readonly event: ResourceEvent }
  | { readonly kind: 'start'; readonly seq: number; readonly at: number; readonly name: string; readonly outcomeIndex: number };

/** Plays a scenario in virtual time and returns the interleaved log of events, run starts and outcomes. */
function play(s: Scenario) {
  const ts = testScheduler();
  const log: Entry[] = [];
  const outcomes: ReconcileOutcome[] = [];
  const violations: string[] = [];
  let completed = false;
  ts.run(() => {
    const running = new Set<string>();
    let runCount = 0;
    let seq = 0;
    const run: RunFn = (id, ctx) => {
      if (running.has(id.name)) violations.push(`EP1: ${id.name} started twice at ${ts.now()}`);
      running.add(id.name);
      if (running.size > s.maxConcurrentReconciliations) violations.push(`EP1: ${running.size} runs in flight at ${ts.now()}`);
      if (!ctx.cause) violations.push(`run of ${id.name} without a cause`);
      log.push({ kind: 'start', seq: seq++, at: ts.now(), name: id.name, outcomeIndex: outcomes.length });
      const behaviour = s.runs[runCount++ % s.runs.length];
      const done = timer(behaviour.duration).pipe(finalize(() => running.delete(id.name)));
      return behaviour.fails
        ? done.pipe(mergeMap(() => throwError(() => new Error('fails'))))
        : done.pipe(map(() => (behaviour.rescheduleAfter === undefined ? undefined : { rescheduleAfter: behaviour.rescheduleAfter })));
    };
    const events$ = new Subject<ResourceEvent>();
    const sorted = [...s.events].sort((a, b) => a.at - b.at);
    for (const e of sorted) {
      const name = `r${e.resource % s.resources}`;
      const event =
        e.kind === 'delete'
          ? ev(name, 'deleted')
          : e.kind === 'secondary'
            ? ev(name, 'modified', { primary: false })
            : ev(name, 'modified');
      ts.schedule(() => {
        log.push({ kind: 'event', seq: seq++, name, event });
        events$.next(event);
      }, e.at);
    }
    ts.schedule(() => events$.complete(), sorted[sorted.length - 1].at);
    events$
      .pipe(
        reconcileEach(run, {
          scheduler: ts,
          maxConcurrentReconciliations: s.maxConcurrentReconciliations,
          maxReconciliationInterval: 0,
          retry: s.retryInterval === undefined ? false : GenericRetry.defaults().withMaxAttempts(2).withInitialMs(s.retryInterval),
          ...(s.rateLimit ? { rateLimiter: new LinearRateLimiter(s.rateLimit.limit, s.rateLimit.period) } : {}),
        }),
      )
      .subscribe({ next: (o) => outcomes.push(o), complete: () => (completed = true) });
  });
  return { log, outcomes, violations, completed };
}

/** Checks every property of one played scenario; returns the violations. */
function check(s: Scenario): string[] {
  const { log, outcomes, violations, completed } = play(s);
  if (!completed) violations.push('the output did not complete after the source completed');
  const starts = log.filter((e) => e.kind === 'start');
  const completedRuns = outcomes.filter((o) => o.result !== 'skipped').length;
  if (completedRuns !== starts.length) violations.push(`${starts.length} runs started but ${completedRuns} outcomes`);

  // Per resource: replay the log with a model of which events the scheduler must remember.
  const names = new Set(log.map((e) => e.name));
  for (const name of names) {
    let known = false; // EP4: state exists after a primary event, until a primary delete
    let owed = 0; // countable events since the last run start (or delete)
    let lastOwedSeq = -1;
    let lastStartSeq = -1;
    let previousOutcome: ReconcileOutcome | undefined;
    for (const entry of log.filter((e) => e.name === name)) {
      if (entry.kind === 'event') {
        const { event } = entry;
        if (event.primary && event.action === 'deleted') {
          known = false;
          owed = 0;
        } else if (event.primary || known) {
          known = true;
          owed++;
          lastOwedSeq = entry.seq;
        }
        continue;
      }
      const outcome = outcomes.filter((o) => o.id.name === name && o.result !== 'skipped')[countStartsBefore(log, name, entry.seq)];
      if (!outcome) {
        violations.push(`${name}: run at ${entry.at} has no outcome`);
        continue;
      }
      const cause = underlyingCause(outcome.cause);
      if (cause.type === 'event') {
        // EP2: one run covers exactly the events since the previous run.
        if (cause.coalesced !== owed) violations.push(`${name}: run at ${entry.at} covers ${cause.coalesced} events, ${owed} were owed`);
      } else if (owed > 0) {
        violations.push(`${name}: ${cause.type} run at ${entry.at} while ${owed} events were owed`);
      } else if (cause.type === 'retry' && previousOutcome?.retry?.attempt !== cause.attempt) {
        violations.push(`${name}: retry ${cause.attempt} at ${entry.at} was never scheduled`);
      } else if (cause.type === 'reschedule' && previousOutcome?.reschedule?.reason !== 'requested') {
        violations.push(`${name}: reschedule at ${entry.at} was never requested`);
      } else if (cause.type === 'maxInterval') {
        violations.push(`${name}: max-interval run at ${entry.at} although it is disabled`);
      }
      if (!known && cause.type === 'event') violations.push(`${name}: event run at ${entry.at} for a deleted resource`);
      owed = 0;
      lastStartSeq = entry.seq;
      previousOutcome = outcome;
    }
    // Liveness: after the last remembered event, some run started.
    if (known && lastOwedSeq > lastStartSeq) violations.push(`${name}: no run after its last event`);
  }
  return violations;
}

function countStartsBefore(log: readonly Entry[], name: string, seq: number): number {
  return log.filter((e) => e.kind === 'start' && e.name === name && e.seq < seq).length;
}

describe('reconcileEach properties (fast-check, virtual time)', () => {
  it('EP1/EP2/EP4/EP5/EP7/EP11: over random interleavings of events, run durations and failures the scheduling rules hold', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        expect(check(s)).to.deep.equal([]);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });
});
