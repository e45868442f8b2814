/** The options of reconcileEach and what a run is given and may answer, validated and resolved. */
import { asyncScheduler, isObservable, type Observable, type SchedulerLike } from 'rxjs';
import {
  ConfigurationError,
  describeValue,
  type ReconcileCause,
  requireFunction,
  requireKnownKeys,
  requireMethods,
  requirePositiveInteger,
  type ResourceID,
  type RetryInfo,
} from '../core/index.js';
import type { RateLimiter } from './rate-limit.js';
import { GenericRetry, probeRetry, type Retry } from './retry.js';

/** What a run may ask for when it succeeds. */
export interface RunResult {
  /** Run again at the latest after this many ms (EP9); an event-triggered run cancels it. */
  readonly rescheduleAfter?: number;
}

export interface RunContext {
  readonly retry: RetryInfo;
  /**
   * Aborted when the pipeline is unsubscribed while the run is in flight, and at the run's
   * deadline (EP14; the reason is then a RunTimeoutError).
   */
  readonly signal: AbortSignal;
  readonly cause: ReconcileCause;
  /** How long the run waited in the queue, from the moment it was owed and could start (ms). */
  readonly queuedMs: number;
  /**
   * EP14: gives this run a deadline `timeoutMs` after its start, instead of the controller's
   * `runTimeoutMs` (a longer one for a cleanup, say); <= 0 takes the deadline away.
   */
  setRunTimeout(timeoutMs: number): void;
}

/** What a run may return: a result (void = nothing to schedule) now, as a promise, or as an observable (first value counts). */
export type RunOutput = RunResult | void | PromiseLike<RunResult | void> | Observable<RunResult | void>;

/**
 * One run for one resource. Throwing, rejecting or erroring is a failure and is retried per
 * the retry policy; throw a `NoRetryError` to fail without retry.
 */
export type RunFn = (id: ResourceID, ctx: RunContext) => RunOutput;

/** What `reconcileEach` asks of a controller's primaries: whether a resource still has one. */
export interface PrimaryPresence {
  has(id: ResourceID): boolean;
}

/** Load figures for metrics gauges; reported only when one of them changes. */
export interface SchedulingLoad {
  /** Runs in flight. */
  readonly running: number;
  /** Resources with a run due, waiting for a free slot or for `active$` (rate-limited ones excluded). */
  readonly queued: number;
  /** Resources with per-resource state. */
  readonly resources: number;
}

export interface ReconcileOptions {
  /** Every timer goes through it. Default: asyncScheduler. */
  readonly scheduler?: SchedulerLike;
  /** Runs in flight across all resources (EP1). Default 50. */
  readonly maxConcurrentReconciliations?: number;
  /** @deprecated the old name of `maxConcurrentReconciliations`. */
  readonly maxConcurrency?: number;
  /** Retry policy (EP7); `false` disables retries. Default `GenericRetry.defaults()`. */
  readonly retry?: Retry | false;
  /** Per-resource rate limit (EP11). Default: none. */
  readonly rateLimiter?: RateLimiter;
  /** ms after which a resource runs again without an event (EP10); <= 0 disables. Default 10 h. */
  readonly maxReconciliationInterval?: number;
  /**
   * The controller's primaries (anything with `has(id)`): a due run whose primary is not there
   * any more is skipped (EP3). Default: every resource has one.
   */
  readonly primaries?: PrimaryPresence;
  /** Whether a due run may still start for this resource (with `primaries`, both must agree); a false one is skipped. Default: always. */
  readonly exists?: (id: ResourceID) => boolean;
  /** While false (and until the first value), runs are held back; events are kept (EP12, leader election). Default: always active. */
  readonly active$?: Observable<boolean>;
  /** Each emission aborts the signal of every run in flight (OB4: leadership lost); the runs still settle. */
  readonly abortRuns$?: Observable<unknown>;
  /**
   * Asked at the moment each due run would start: false holds it back, as `active$` false does
   * (OB4: leadership judged on the clock at each decision, not only when a timer says it ended).
   * Whoever answers false must also make `active$` emit false, or nothing starts the run later.
   */
  readonly mayStart?: () => boolean;
  /** Called with the new load whenever it changes (for metrics gauges). */
  readonly probe?: (load: SchedulingLoad) => void;
  /**
   * EP14: each run's deadline, in ms from its start (a run may set its own: `ctx.setRunTimeout`).
   * At the deadline its signal aborts and the run is a failure with a RunTimeoutError, reported
   * when it really ends. Default: none (<= 0 too).
   */
  readonly runTimeoutMs?: number;
  /** EP14: called when a run passes its deadline, before its signal aborts (for a log line and a metric). */
  readonly onRunTimeout?: (id: ResourceID, timeoutMs: number) => void;
}

const RECONCILE_OPTIONS = {
  scheduler: true,
  maxConcurrentReconciliations: true,
  maxConcurrency: true,
  retry: true,
  rateLimiter: true,
  maxReconciliationInterval: true,
  primaries: true,
  exists: true,
  active$: true,
  abortRuns$: true,
  mayStart: true,
  probe: true,
  runTimeoutMs: true,
  onRunTimeout: true,
} as const satisfies Record<keyof ReconcileOptions, true>;

export const DEFAULT_MAX_CONCURRENT_RECONCILIATIONS = 50;
export const DEFAULT_MAX_RECONCILIATION_INTERVAL = 10 * 60 * 60 * 1000;
/** A rate-limited run is postponed at least this long (EP11). */
export const MIN_RATE_LIMIT_DELAY = 50;

export interface ResolvedReconcileOptions {
  readonly scheduler: SchedulerLike;
  readonly maxConcurrentReconciliations: number;
  readonly retry: Retry | undefined;
  readonly rateLimiter: RateLimiter | undefined;
  /** 0 = disabled. */
  readonly maxReconciliationInterval: number;
  readonly primaries: PrimaryPresence | undefined;
  readonly exists: ((id: ResourceID) => boolean) | undefined;
  readonly active$: Observable<boolean> | undefined;
  readonly abortRuns$: Observable<unknown> | undefined;
  readonly mayStart: (() => boolean) | undefined;
  readonly probe: ((load: SchedulingLoad) => void) | undefined;
  /** 0 = no deadline. */
  readonly runTimeoutMs: number;
  readonly onRunTimeout: ((id: ResourceID, timeoutMs: number) => void) | undefined;
}

/** Validates options and fills in defaults; throws ConfigurationError naming the first bad option. */
export function resolveReconcileOptions(options: ReconcileOptions = {}): ResolvedReconcileOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('options', `must be an object, got ${describeValue(options)}`);
  }
  requireKnownKeys('', options, RECONCILE_OPTIONS);
  const scheduler = requireMethods('scheduler', options.scheduler ?? asyncScheduler, ['now', 'schedule']);
  if (options.maxConcurrency !== undefined && options.maxConcurrentReconciliations !== undefined) {
    throw new ConfigurationError(
      'maxConcurrency',
      'is the old name of maxConcurrentReconciliations; give only maxConcurrentReconciliations',
    );
  }
  const maxConcurrentReconciliations = requirePositiveInteger(
    options.maxConcurrency === undefined ? 'maxConcurrentReconciliations' : 'maxConcurrency',
    options.maxConcurrentReconciliations ?? options.maxConcurrency ?? DEFAULT_MAX_CONCURRENT_RECONCILIATIONS,
  );
  const retry =
    options.retry === false ? undefined : probeRetry(requireMethods('retry', options.retry ?? GenericRetry.defaults(), ['delayBefore']));
  const rateLimiter = options.rateLimiter === undefined ? undefined : requireMethods('rateLimiter', options.rateLimiter, ['acquire']);
  const interval = options.maxReconciliationInterval ?? DEFAULT_MAX_RECONCILIATION_INTERVAL;
  if (typeof interval !== 'number' || Number.isNaN(interval) || interval === Infinity) {
    throw new ConfigurationError(
      'maxReconciliationInterval',
      `must be a finite number of milliseconds (<= 0 disables), got ${describeValue(interval)}`,
    );
  }
  const primaries = options.primaries === undefined ? undefined : requirePrimaries(options.primaries);
  const exists = options.exists === undefined ? undefined : requireFunction('exists', options.exists);
  if (options.active$ !== undefined && !isObservable(options.active$)) {
    throw new ConfigurationError('active$', `must be an Observable<boolean>, got ${describeValue(options.active$)}`);
  }
  if (options.abortRuns$ !== undefined && !isObservable(options.abortRuns$)) {
    throw new ConfigurationError('abortRuns$', `must be an Observable, got ${describeValue(options.abortRuns$)}`);
  }
  const probe = options.probe === undefined ? undefined : requireFunction('probe', options.probe);
  const mayStart = options.mayStart === undefined ? undefined : requireFunction('mayStart', options.mayStart);
  const runTimeoutMs = options.runTimeoutMs ?? 0;
  if (typeof runTimeoutMs !== 'number' || Number.isNaN(runTimeoutMs)) {
    throw new ConfigurationError(
      'runTimeoutMs',
      `must be a number of milliseconds (<= 0: no deadline), got ${describeValue(runTimeoutMs)}`,
    );
  }
  const onRunTimeout = options.onRunTimeout === undefined ? undefined : requireFunction('onRunTimeout', options.onRunTimeout);
  return {
    scheduler,
    maxConcurrentReconciliations,
    retry,
    rateLimiter,
    maxReconciliationInterval: interval > 0 ? interval : 0,
    primaries,
    exists,
    active$: options.active$,
    abortRuns$: options.abortRuns$,
    mayStart,
    probe,
    runTimeoutMs: runTimeoutMs > 0 && runTimeoutMs !== Infinity ? runTimeoutMs : 0,
    onRunTimeout,
  };
}

function requirePrimaries(primaries: PrimaryPresence): PrimaryPresence {
  if (primaries === null || typeof primaries !== 'object' || typeof primaries.has !== 'function') {
    throw new ConfigurationError('primaries', `must have a has(id) method (the controller's primaries), got ${describeValue(primaries)}`);
  }
  return primaries;
}
