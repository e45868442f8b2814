/** Resubscribing a failed list or watch with backoff; a dropped connection resumes at once. */
import { defer, retry, tap, timer, asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { backoffDelay, WATCH_BACKOFF, type BackoffPolicy } from '../core/index.js';

export interface ReconnectFailure {
  readonly error: unknown;
  /** The backoff step this failure used: 0 for the first failure since the last reset. */
  readonly attempt: number;
  /** How long the source waits before it is subscribed again (0 for a drop retried at once). */
  readonly delayMs: number;
  /** A dropped connection retried at once: no backoff step used. */
  readonly dropped: boolean;
}

export interface ReconnectOptions<T = unknown> {
  /** ES1 defaults: 800 ms → 30 s, factor 2, jitter 1, reset after 30 s of health (WATCH_BACKOFF). */
  backoff?: Partial<BackoffPolicy> | undefined;
  scheduler?: SchedulerLike | undefined;
  /** Returns [0, 1); `() => 0` removes the jitter. */
  random?: (() => number) | undefined;
  /** Called on every failure, before the delay starts (health, logs, metrics). */
  onFailure?: ((failure: ReconnectFailure) => void) | undefined;
  /** Which values show the source healthy (default: every value); health counts from the first. */
  isHealthy?: ((value: T) => boolean) | undefined;
  /** Which failures are a dropped connection, as opposed to an error answer (default: none). */
  isDropped?: ((error: unknown) => boolean) | undefined;
}

/**
 * A connection must have been healthy this long for its drop to be retried at once; shorter, it
 * backs off like an error (client-go's "very short watch" guard against a reconnect loop).
 */
export const SHORT_CONNECTION_MS = 1000;

/**
 * ES1: resubscribes to the source after every failure, forever.
 * - A dropped connection that had been healthy for SHORT_CONNECTION_MS is retried at once and
 *   uses no backoff step; if the retry fails too, that failure backs off.
 * - Any other failure waits `backoffDelay(attempt)`, and the next one waits longer.
 * - A source healthy for `resetAfterMs` before it fails starts again from `initialMs`; drops
 *   resumed at once do not interrupt that healthy time.
 * Every timer runs on the given scheduler.
 */
export function reconnectWithBackoff<T>(options: ReconnectOptions<T> = {}): MonoTypeOperatorFunction<T> {
  const policy: BackoffPolicy = { ...WATCH_BACKOFF, ...options.backoff };
  backoffDelay(0, policy); // validates the policy now rather than at the first failure
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  const isHealthy = options.isHealthy ?? (() => true);
  const isDropped = options.isDropped ?? (() => false);
  return (source) =>
    defer(() => {
      let attempt = 0;
      // Health of the loop, which a drop resumed at once does not interrupt; and of this connection.
      let healthySince: number | undefined;
      let connectedSince: number | undefined;
      return source.pipe(
        tap((value) => {
          if (connectedSince !== undefined || !isHealthy(value)) return;
          connectedSince = scheduler.now();
          healthySince ??= connectedSince;
        }),
        retry({
          delay: (error: unknown) => {
            const now = scheduler.now();
            const connectedMs = connectedSince === undefined ? -1 : now - connectedSince;
            connectedSince = undefined;
            if (connectedMs >= SHORT_CONNECTION_MS && isDropped(error)) {
              options.onFailure?.({ error, attempt, delayMs: 0, dropped: true });
              return timer(0, scheduler);
            }
            if (healthySince !== undefined && now - healthySince >= policy.resetAfterMs) attempt = 0;
            healthySince = undefined;
            const delayMs = backoffDelay(attempt, policy, random);
            options.onFailure?.({ error, attempt, delayMs, dropped: false });
            attempt++;
            return timer(delayMs, scheduler);
          },
        }),
      );
    });
}
