/** Rate limiters of runs: how long a resource waits before its next run. */
import { requirePositiveDuration, requirePositiveInteger } from '../core/index.js';

/** What a rate limiter decided for one run. */
export interface RateDecision<S> {
  /** The resource's limiter state to pass to the next call. */
  readonly state: S;
  /** 0: the run may start now (and was counted). > 0: milliseconds until it may. */
  readonly waitMs: number;
}

/**
 * A per-resource rate limit (EP11). The scheduler keeps one state per resource, passes it in
 * on every run that is about to start and stores the returned state; the state is dropped
 * when the resource is deleted. Implementations should be pure.
 */
export interface RateLimiter<S = unknown> {
  /** @param state what the previous call returned for this resource; undefined the first time. */
  acquire(state: S | undefined, now: number): RateDecision<S>;
}

export interface LinearRateState {
  readonly windowStart: number;
  readonly count: number;
}

/**
 * At most `limitForPeriod` runs per resource within `refreshPeriod` ms (JOSDK's
 * LinearRateLimiter). A window opens with the first run after the previous one expired.
 */
export class LinearRateLimiter implements RateLimiter<LinearRateState> {
  readonly limitForPeriod: number;
  readonly refreshPeriod: number;

  constructor(limitForPeriod: number, refreshPeriod = 10_000) {
    this.limitForPeriod = requirePositiveInteger('rateLimiter.limitForPeriod', limitForPeriod);
    this.refreshPeriod = requirePositiveDuration('rateLimiter.refreshPeriod', refreshPeriod);
  }

  acquire(state: LinearRateState | undefined, now: number): RateDecision<LinearRateState> {
    if (state === undefined || now - state.windowStart >= this.refreshPeriod) {
      return { state: { windowStart: now, count: 1 }, waitMs: 0 };
    }
    if (state.count < this.limitForPeriod) {
      return { state: { windowStart: state.windowStart, count: state.count + 1 }, waitMs: 0 };
    }
    return { state, waitMs: state.windowStart + this.refreshPeriod - now };
  }
}
