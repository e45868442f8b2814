import { defer, retry, timer, asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { backoffDelay, WATCH_BACKOFF, type BackoffPolicy } from '../kube/index.js';

export interface ReconnectFailure {
  readonly error: unknown;
  /** 0 for the first failure since the last reset. */
  readonly attempt: number;
  /** How long the source waits before it is subscribed again. */
  readonly delayMs: number;
}

export interface ReconnectOptions {
  /** ES1 defaults: 800 ms → 30 s, factor 2, jitter 1, reset after 2 min (WATCH_BACKOFF). */
  backoff?: Partial<BackoffPolicy> | undefined;
  scheduler?: SchedulerLike | undefined;
  /** Returns [0, 1); `() => 0` removes the jitter. */
  random?: (() => number) | undefined;
  /** Called on every failure, before the delay starts (health, logs, metrics). */
  onFailure?: ((failure: ReconnectFailure) => void) | undefined;
}

/**
 * ES1: resubscribes to the source after every error, forever, after a backoff delay. When the
 * source ran without failing for `resetAfterMs` before an error, the delays start again from
 * `initialMs`. Every timer runs on the given scheduler.
 */
export function reconnectWithBackoff<T>(options: ReconnectOptions = {}): MonoTypeOperatorFunction<T> {
  const policy: BackoffPolicy = { ...WATCH_BACKOFF, ...options.backoff };
  backoffDelay(0, policy); // validates the policy now rather than at the first failure
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  return (source) =>
    defer(() => {
      let attempt = 0;
      let runningSince = scheduler.now();
      return defer(() => {
        runningSince = scheduler.now();
        return source;
      }).pipe(
        retry({
          delay: (error: unknown) => {
            if (scheduler.now() - runningSince >= policy.resetAfterMs) attempt = 0;
            const delayMs = backoffDelay(attempt, policy, random);
            options.onFailure?.({ error, attempt, delayMs });
            attempt++;
            return timer(delayMs, scheduler);
          },
        }),
      );
    });
}
