import { expect } from 'chai';
import { finalize, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import {
  causeCode,
  failAfter,
  outcomeCode,
  resourceEvent,
  succeedAfter,
  testScheduler as sharedTestScheduler,
} from '../../lib/testing/index.js';
import type { EventAction, ResourceEvent } from '../../lib/core/events.js';
import type { ReconcileOutcome } from '../../lib/core/outcome.js';
import type { ResourceID } from '../../lib/core/resource.js';
import type { RunContext, RunFn, RunResult } from '../../lib/processing/options.js';

export { causeCode, outcomeCode };

export function testScheduler(): TestScheduler {
  return sharedTestScheduler((actual, expected) => expect(actual).to.deep.equal(expected));
}

export function ev(
  name: string,
  action: EventAction = 'modified',
  options: { primary?: boolean; source?: string; listed?: boolean } = {},
): ResourceEvent {
  return resourceEvent(name, action, { namespace: 'ns', ...options });
}

/** Succeeds after `ms` of virtual time (inside TestScheduler.run, asyncScheduler is virtual). */
export const ok = succeedAfter;

/** Fails after `ms` of virtual time. */
export function fail(ms: number, error: unknown = new Error('boom')): Observable<RunResult | void> {
  return failAfter(ms, error);
}

export interface RunRecord {
  readonly at: number;
  readonly name: string;
  readonly attempt: number;
  readonly lastAttempt: boolean;
  readonly cause: string;
}

/**
 * A RunFn driven by a per-resource script: the n-th run of a resource uses the n-th step
 * (the last step repeats). Records every start and the peak concurrency.
 */
export function scripted(
  now: () => number,
  steps:
    | Record<string, ReadonlyArray<(ctx: RunContext) => Observable<RunResult | void>>>
    | ((id: ResourceID, ctx: RunContext) => Observable<RunResult | void>),
): { run: RunFn; starts: RunRecord[]; peak: () => number; signals: AbortSignal[] } {
  const starts: RunRecord[] = [];
  const signals: AbortSignal[] = [];
  const counts = new Map<string, number>();
  let running = 0;
  let peak = 0;
  const run: RunFn = (id, ctx) => {
    const n = counts.get(id.name) ?? 0;
    counts.set(id.name, n + 1);
    starts.push({ at: now(), name: id.name, attempt: ctx.retry.attempt, lastAttempt: ctx.retry.lastAttempt, cause: causeCode(ctx.cause) });
    signals.push(ctx.signal);
    let work: Observable<RunResult | void>;
    if (typeof steps === 'function') work = steps(id, ctx);
    else {
      const list = steps[id.name] ?? [() => ok(10)];
      work = list[Math.min(n, list.length - 1)](ctx);
    }
    running++;
    peak = Math.max(peak, running);
    return work.pipe(finalize(() => running--));
  };
  return { run, starts, peak: () => peak, signals };
}

export interface Harness {
  readonly ts: TestScheduler;
  readonly hot: <V>(marbles: string, values?: Record<string, V>) => Observable<V>;
  readonly cold: <V>(marbles: string, values?: Record<string, V>, error?: unknown) => Observable<V>;
  readonly expectObservable: (
    actual: Observable<unknown>,
    subscriptionMarbles?: string | null,
  ) => { toBe(marbles: string, values?: unknown): void };
}

/** Runs `body` in virtual time (TestScheduler.run) and flushes; returns what `body` returned. */
export function virtual<R>(body: (h: Harness) => R): R {
  const ts = testScheduler();
  let result: R | undefined;
  ts.run((helpers) => {
    result = body({ ts, hot: helpers.hot, cold: helpers.cold, expectObservable: helpers.expectObservable });
  });
  return result as R;
}

/** Subscribes and records `[virtual time, outcomeCode]` per outcome; `until` unsubscribes at that frame. */
export function record(
  ts: TestScheduler,
  outcomes$: Observable<ReconcileOutcome>,
  until?: number,
): { log: Array<[number, string]>; outcomes: ReconcileOutcome[]; completedAt: () => number | undefined } {
  const log: Array<[number, string]> = [];
  const outcomes: ReconcileOutcome[] = [];
  let completedAt: number | undefined;
  const subscription = outcomes$.subscribe({
    next: (o) => {
      outcomes.push(o);
      log.push([ts.now(), outcomeCode(o)]);
    },
    complete: () => (completedAt = ts.now()),
  });
  if (until !== undefined) ts.schedule(() => subscription.unsubscribe(), until);
  return { log, outcomes, completedAt: () => completedAt };
}

/** `[time, name, attempt, cause]` of each run start, for compact assertions. */
export function startsOf(starts: readonly RunRecord[]): Array<[number, string, number, string]> {
  return starts.map((s) => [s.at, s.name, s.attempt, s.cause]);
}
