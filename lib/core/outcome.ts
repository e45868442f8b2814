/** What a run was for and how it ended: its cause, its result and the outcome reported for it. */
import type { EventAction } from './events.js';
import type { ResourceID } from './resource.js';

/** What the retry policy says about the current run. */
export interface RetryInfo {
  /** 0 on the first try; n on the n-th retry. Event-triggered runs keep the count of the failure streak. */
  readonly attempt: number;
  /** True when a failure of this run will not be retried (retries exhausted or disabled). */
  readonly lastAttempt: boolean;
}

/** The newest event behind a run, without its payload (EP3: runs read the cache, not the event). */
export interface EventCause {
  readonly type: 'event';
  readonly source: string;
  readonly action: EventAction;
  readonly primary: boolean;
  /** How many events this run covers (EP2 coalescing): 1 or more. */
  readonly coalesced: number;
}

export interface RetryCause {
  readonly type: 'retry';
  /** The retry number, 1 for the first retry. */
  readonly attempt: number;
}

export interface RescheduleCause {
  readonly type: 'reschedule';
}

export interface MaxIntervalCause {
  readonly type: 'maxInterval';
}

/** The run was postponed by the rate limiter (EP11); `postponed` is what it was owed for. */
export interface RateLimitCause {
  readonly type: 'rateLimit';
  readonly postponed: EventCause | RetryCause | RescheduleCause | MaxIntervalCause;
}

/** Why a run happened. */
export type ReconcileCause = EventCause | RetryCause | RescheduleCause | MaxIntervalCause | RateLimitCause;

export type ReconcileResult = 'success' | 'failure' | 'skipped';

/** One per run (or skipped run): what triggered it, how it ended, and what was scheduled next. */
export interface ReconcileOutcome {
  readonly id: ResourceID;
  readonly cause: ReconcileCause;
  /** scheduler.now() when the run started (for `skipped`: when it would have). */
  readonly startedAt: number;
  readonly endedAt: number;
  /** `skipped`: the primary was not in the cache when the run was due (EP3). */
  readonly result: ReconcileResult;
  readonly error?: unknown;
  /** A retry was scheduled: its attempt number and when it is due. */
  readonly retry?: { readonly attempt: number; readonly at: number };
  /** A run was scheduled without an event: asked for by the run, or the max-interval safety net. */
  readonly reschedule?: { readonly at: number; readonly reason: 'requested' | 'maxInterval' };
}

/** The cause a rate-limited run was owed for (the cause itself when it was not postponed). */
export function underlyingCause(cause: ReconcileCause): Exclude<ReconcileCause, RateLimitCause> {
  return cause.type === 'rateLimit' ? cause.postponed : cause;
}

/** What a user callback may return: the value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;
