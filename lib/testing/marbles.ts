/**
 * Helpers for marble tests of reconciliation in virtual time: inside `TestScheduler.run`, every
 * timer of `reconcileEach` (retries, reschedules, rate limits) and of these runs is virtual.
 */
import { deepStrictEqual } from 'node:assert';
import { map, mergeMap, throwError, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { ReconcileCause, ReconcileOutcome } from '../core/index.js';
import type { RunResult } from '../processing/index.js';

/**
 * A TestScheduler that compares frames deeply (node:assert, or the assertion you pass). Used
 * outside `run()` as well (as the `scheduler` option, then `flush()`), it has no frame limit:
 * RxJS's default of 750 frames would silently drop every timer due later (a 2000 ms retry).
 * So `flush()` runs every timer; one that repeats forever must be ended by the test.
 */
export function testScheduler(assertDeepEqual: (actual: unknown, expected: unknown) => void = deepStrictEqual): TestScheduler {
  const scheduler = new TestScheduler((actual, expected) => assertDeepEqual(actual, expected));
  scheduler.maxFrames = Number.POSITIVE_INFINITY;
  return scheduler;
}

/** A run that succeeds after `ms` of (virtual) time, optionally asking for a reschedule. */
export function succeedAfter(ms: number, result?: RunResult): Observable<RunResult | void> {
  return timer(ms).pipe(map(() => result));
}

/** A run that fails after `ms` of (virtual) time. */
export function failAfter(ms: number, error: unknown = new Error('reconcile failed')): Observable<RunResult | void> {
  return timer(ms).pipe(mergeMap(() => throwError(() => error)));
}

/** `event`, `event*3` (three coalesced), `retry2`, `reschedule`, `maxInterval`, `rateLimit(retry1)`. */
export function causeCode(cause: ReconcileCause): string {
  switch (cause.type) {
    case 'event':
      return cause.coalesced > 1 ? `event*${cause.coalesced}` : 'event';
    case 'retry':
      return `retry${cause.attempt}`;
    case 'rateLimit':
      return `rateLimit(${causeCode(cause.postponed)})`;
    default:
      return cause.type;
  }
}

/** A compact, comparable outcome for marble values: `a success event +retry1@2010`. */
export function outcomeCode(outcome: ReconcileOutcome): string {
  let code = `${outcome.id.name} ${outcome.result} ${causeCode(outcome.cause)}`;
  if (outcome.retry) code += ` +retry${outcome.retry.attempt}@${outcome.retry.at}`;
  if (outcome.reschedule) code += ` +${outcome.reschedule.reason}@${outcome.reschedule.at}`;
  return code;
}
