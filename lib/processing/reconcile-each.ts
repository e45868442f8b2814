/** reconcileEach: the RxJS operator that runs a reconciler per resource, with every scheduling rule. */
import { Observable, type OperatorFunction } from 'rxjs';
import { type ReconcileOutcome, requireFunction, type ResourceEvent } from '../core/index.js';
import { resolveReconcileOptions, type ReconcileOptions, type RunFn } from './options.js';
import { ResourceScheduler } from './resource-scheduler.js';

/**
 * Runs `run` per resource as events arrive and emits one ReconcileOutcome per run: one run per
 * resource at a time, at most `maxConcurrentReconciliations` overall, events during a run coalesced into one
 * follow-up, retries, reschedules, the max interval and the rate limit, fresh changes before listed ones (EP1–EP5, EP7–EP13).
 *
 * Options are validated here, at construction. Unsubscribing cancels every timer and aborts
 * the signal of every run in flight. Completion of the source is a graceful drain: runs in
 * flight finish, runs already due (also rate-limited ones) still happen, but no retry,
 * reschedule or max-interval timer is armed any more; the output completes when that is done
 * (at once for held-back runs while `active$` is false).
 */
export function reconcileEach<T = unknown>(run: RunFn, options?: ReconcileOptions): OperatorFunction<ResourceEvent<T>, ReconcileOutcome> {
  requireFunction('run', run);
  const resolved = resolveReconcileOptions(options);
  return (events$) =>
    new Observable<ReconcileOutcome>((subscriber) => {
      const scheduler = new ResourceScheduler(run, resolved, subscriber);
      const activation = resolved.active$?.subscribe({
        next: (active) => scheduler.setActive(active === true),
        error: (error: unknown) => {
          scheduler.dispose();
          subscriber.error(error);
        },
      });
      const aborting = resolved.abortRuns$?.subscribe({
        next: () => scheduler.abortRunsInFlight(),
        error: (error: unknown) => {
          scheduler.dispose();
          subscriber.error(error);
        },
      });
      const source = events$.subscribe({
        next: (event) => scheduler.onEvent(event),
        error: (error: unknown) => {
          scheduler.dispose();
          subscriber.error(error);
        },
        complete: () => scheduler.drain(),
      });
      return () => {
        source.unsubscribe();
        activation?.unsubscribe();
        aborting?.unsubscribe();
        scheduler.dispose();
      };
    });
}
