/**
 * The one backoff vocabulary: how a delay grows after failures. The informers' reconnects and the
 * resubscription of failed event sources take it whole; GenericRetry's retries use its names
 * (`initialMs`, `maxMs`, `factor`) without jitter or reset.
 */
export interface BackoffPolicy {
  /** Delay before the first retry. */
  initialMs: number;
  /** No delay is longer than this, jitter included. */
  maxMs: number;
  /** Each delay is the previous one times this (>= 1). */
  factor: number;
  /** Up to this fraction of the delay is added at random (client-go uses 1.0). */
  jitter: number;
  /** After this long healthy, the next failure starts again from initialMs. */
  resetAfterMs: number;
}

/**
 * ES1: 800 ms doubling, up to 100 % jitter, never more than 30 s; reset after 30 s of health.
 * The reset period equals the longest delay, so a loop that resets makes no more attempts per
 * minute than one sitting at the cap (client-go waits 2 min, counted from its last backoff).
 */
export const WATCH_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 30_000,
});

/**
 * The delay before retry number `attempt` (0 = first retry): `base × (1 + jitter × random())`,
 * where the base grows by `factor` from `initialMs` and stops where the jittered delay could pass
 * `maxMs` (`maxMs / (1 + jitter)`), so jitter stays visible at the cap instead of being cut off
 * (with the defaults: 800–1600, 1600–3200, ..., then 15–30 s). `random` returns [0, 1); pass
 * `() => 0` for the bases (800, 1600, ... 12800, 15000).
 */
export function backoffDelay(attempt: number, policy: Partial<BackoffPolicy> = {}, random: () => number = Math.random): number {
  const p = { ...WATCH_BACKOFF, ...policy };
  if (!Number.isInteger(attempt) || attempt < 0) throw new Error(`backoffDelay: attempt must be a non-negative integer (got ${attempt})`);
  if (!(p.initialMs > 0) || !(p.maxMs >= p.initialMs) || !(p.factor >= 1) || !(p.jitter >= 0) || !(p.resetAfterMs >= 0)) {
    throw new Error(
      `backoffDelay: invalid policy ${JSON.stringify(p)} (need initialMs > 0, maxMs >= initialMs, factor >= 1, jitter >= 0, resetAfterMs >= 0)`,
    );
  }
  const ceiling = Math.max(p.initialMs, p.maxMs / (1 + p.jitter));
  const base = Math.min(ceiling, p.initialMs * p.factor ** Math.min(attempt, 64));
  return Math.min(p.maxMs, Math.round(base * (1 + p.jitter * random())));
}
