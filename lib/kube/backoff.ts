export interface BackoffPolicy {
  /** Delay before the first retry. */
  initialMs: number;
  /** No delay is longer than this, jitter included. */
  maxMs: number;
  factor: number;
  /** Up to this fraction of the delay is added at random (client-go uses 1.0). */
  jitter: number;
  /** After this long without a failure, the next failure starts again from initialMs. */
  resetAfterMs: number;
}

/** ES1: how client-go and kube-rs reconnect watches: 800 ms → 30 s, factor 2, jitter, reset after 2 min. */
export const WATCH_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 120_000,
});

/**
 * The delay before retry number `attempt` (0 = first retry). `random` returns [0, 1); pass
 * `() => 0` for the delays without jitter (800, 1600, 3200, ... 30000).
 */
export function backoffDelay(attempt: number, policy: Partial<BackoffPolicy> = {}, random: () => number = Math.random): number {
  const p = { ...WATCH_BACKOFF, ...policy };
  if (!Number.isInteger(attempt) || attempt < 0) throw new Error(`backoffDelay: attempt must be a non-negative integer (got ${attempt})`);
  if (!(p.initialMs > 0) || !(p.maxMs >= p.initialMs) || !(p.factor >= 1) || !(p.jitter >= 0)) {
    throw new Error(`backoffDelay: invalid policy ${JSON.stringify(p)} (need initialMs > 0, maxMs >= initialMs, factor >= 1, jitter >= 0)`);
  }
  const base = Math.min(p.maxMs, p.initialMs * p.factor ** Math.min(attempt, 64));
  return Math.min(p.maxMs, Math.round(base * (1 + p.jitter * random())));
}
