/** The state machine behind reconcileEach: per resource its runs, queue place, timers, retries and rate limit. */
import { isObservable, Subscription } from 'rxjs';
import {
  ConfigurationError,
  describeError,
  describeValue,
  type EventAction,
  NoRetryError,
  type ReconcileCause,
  type ReconcileOutcome,
  type ResourceEvent,
  type ResourceID,
  resourceKey,
  type RetryInfo,
  RunTimeoutError,
} from '../core/index.js';
import {
  MIN_RATE_LIMIT_DELAY,
  type ResolvedReconcileOptions,
  type RunContext,
  type RunFn,
  type RunOutput,
  type RunResult,
} from './options.js';
import { FifoSet, type FifoLinks } from './queue.js';
import { Deadlines, type Deadline } from './deadlines.js';
import { retryDelayOf } from './retry.js';

/**
 * Where a resource stands. A timer exists only while waiting or postponed, a place in the
 * ready queue only while queued.
 */
type Phase =
  | 'idle' // nothing owed
  | 'waiting' // a retry, reschedule or max-interval timer is armed
  | 'postponed' // a run is owed but the rate limiter holds it until its timer fires
  | 'queued' // a run is owed now; waiting for a slot or for activation (in `fresh` or `backlog`)
  | 'running';

/** A run owed without an event. */
type TimerCause = Extract<ReconcileCause, { type: 'retry' | 'reschedule' | 'maxInterval' }>;

/** A run in flight; `abort` is created only if the run reads `ctx.signal`, `subscription` only for an observable run. */
interface RunHandle {
  readonly cause: ReconcileCause;
  readonly startedAt: number;
  abort: AbortController | undefined;
  subscription: Subscription | undefined;
  /** EP14: the run's deadline while one is armed, and how long it is (ms from the start). */
  deadline: Deadline | undefined;
  timeoutMs: number;
  /** EP14: when the deadline passed; the run is a RunTimeoutError failure however it ends. */
  timedOutAt: number | undefined;
}

/** What a run sees; a class so that the lazy `signal` getter is not redefined per run. */
class Context implements RunContext {
  constructor(
    readonly retry: RetryInfo,
    readonly queuedMs: number,
    private readonly handle: RunHandle,
    private readonly deadlines: (handle: RunHandle, timeoutMs: number) => void,
  ) {}

  get cause(): ReconcileCause {
    return this.handle.cause;
  }

  // AbortControllers are costly to create (~µs); most runs never look at the signal.
  get signal(): AbortSignal {
    return (this.handle.abort ??= new AbortController()).signal;
  }

  setRunTimeout(timeoutMs: number): void {
    this.deadlines(this.handle, timeoutMs);
  }
}

class ResourceState implements FifoLinks<ResourceState> {
  phase: Phase = 'idle';
  fifoPrev: ResourceState | undefined = undefined;
  fifoNext: ResourceState | undefined = undefined;
  fifoMember = false;
  /**
   * Events not yet covered by a started run (EP2: a counter, not a queue) and the newest one's
   * source. While running these are the "dirty" events that call for one follow-up run.
   */
  events = 0;
  lastSource = '';
  lastAction: EventAction = 'modified';
  lastPrimary = false;
  /** Why a run is owed when no event is. */
  timerCause: TimerCause | undefined;
  /** The owed run was postponed by the rate limiter (EP11). */
  rateLimited = false;
  /**
   * EP13: what is owed includes a fresh change (a watch or secondary event, a retry, a
   * reschedule), not only listed events or the max interval: the run queues in `fresh`.
   */
  urgent = false;
  /** Which queue holds the state while queued: the two share the state's links. */
  inBacklog = false;
  timer: Deadline | undefined;
  /** When the owed run entered the queue (for `queuedMs`). */
  queuedAt = 0;
  /** The primary was deleted during the current run (EP5). */
  deleted = false;
  /** Retry runs made in the current failure streak (EP7/EP8). */
  retriesMade = 0;
  rateState: unknown = undefined;
  run: RunHandle | undefined;

  constructor(
    readonly key: string,
    readonly id: ResourceID,
  ) {}

  /** The cause of the owed run: events win over timers; the rate limit wraps either. */
  owedCause(): ReconcileCause {
    const owed: Exclude<ReconcileCause, { type: 'rateLimit' }> =
      this.events > 0
        ? { type: 'event', source: this.lastSource, action: this.lastAction, primary: this.lastPrimary, coalesced: this.events }
        : (this.timerCause ?? { type: 'maxInterval' });
    return this.rateLimited ? { type: 'rateLimit', postponed: owed } : owed;
  }

  consumeOwed(): void {
    this.events = 0;
    this.timerCause = undefined;
    this.rateLimited = false;
    this.urgent = false;
  }
}

type Settlement = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface SchedulerSink {
  next(outcome: ReconcileOutcome): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * The per-resource state machine behind `reconcileEach` (EP1–EP5, EP7–EP14): one instance per
 * subscription. Feed it events, activation changes and completion; it calls `run` and reports
 * one outcome per run to the sink.
 */
export class ResourceScheduler {
  private readonly states = new Map<string, ResourceState>();
  /**
   * EP13: runs owed for fresh changes start before runs owed only for listed events (the initial
   * list, relists) or the max interval, so that a change made during a cold start of many
   * resources does not wait behind all of them. Each queue keeps arrival order (EP1).
   */
  private readonly fresh = new FifoSet<ResourceState>();
  private readonly backlog = new FifoSet<ResourceState>();
  /** Every resource's retry, reschedule, max-interval and rate-limit timer, on one scheduler timer. */
  private readonly deadlines: Deadlines<ResourceState>;
  /** EP14: the deadline of every run in flight that has one. */
  private readonly runDeadlines: Deadlines<ResourceState>;
  private running = 0;
  private postponed = 0;
  private active: boolean;
  private draining = false;
  private closed = false;
  private pumping = false;
  private lastLoad = { running: -1, queued: -1, resources: -1 };

  constructor(
    private readonly run: RunFn,
    private readonly options: ResolvedReconcileOptions,
    private readonly sink: SchedulerSink,
  ) {
    this.active = options.active$ === undefined;
    this.deadlines = new Deadlines<ResourceState>(options.scheduler, (state) => this.guard(() => this.fire(state)));
    this.runDeadlines = new Deadlines<ResourceState>(options.scheduler, (state) => this.guard(() => this.timeOut(state)));
  }

  onEvent(event: ResourceEvent): void {
    if (this.closed) return;
    try {
      this.handleEvent(event);
    } catch (error) {
      this.fail(error);
    }
  }

  setActive(active: boolean): void {
    if (this.closed || this.active === active) return;
    this.active = active;
    this.guard(() => this.afterChange());
  }

  /**
   * OB4: an instance that stops leading must not go on acting: the signal of every run in flight
   * is aborted. Their outcomes still settle, so one run per resource holds here too.
   */
  abortRunsInFlight(): void {
    for (const state of this.states.values()) if (state.run) abortSignalOf(state.run);
  }

  /** The event source completed: finish what is running or due, arm no more timers (graceful drain). */
  drain(): void {
    if (this.closed) return;
    this.draining = true;
    for (const state of this.states.values()) {
      if (state.phase === 'waiting') {
        this.toIdle(state);
        state.timerCause = undefined;
      }
    }
    this.guard(() => this.afterChange());
  }

  /** Stops every timer and aborts every run in flight; nothing is reported afterwards. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.deadlines.dispose();
    this.runDeadlines.dispose();
    for (const state of this.states.values()) {
      if (state.run) {
        state.run.subscription?.unsubscribe();
        abortSignalOf(state.run);
      }
    }
    this.states.clear();
    this.fresh.clear();
    this.backlog.clear();
  }

  private handleEvent(event: ResourceEvent): void {
    const key = resourceKey(event.id);
    let state = this.states.get(key);
    if (event.primary && event.action === 'deleted') {
      if (state) this.forget(state);
    } else if (state && !state.deleted) {
      this.trigger(state, event);
    } else if (event.primary) {
      // EP4: only primary events create state. A primary event after a delete during a run
      // revives the state: the resource was re-created under the same name.
      if (state) state.deleted = false;
      else this.states.set(key, (state = new ResourceState(key, event.id)));
      this.trigger(state, event);
    }
    this.afterChange();
  }

  private trigger(state: ResourceState, event: ResourceEvent): void {
    state.events++;
    state.lastSource = event.source;
    state.lastAction = event.action;
    state.lastPrimary = event.primary;
    if (event.listed !== true) state.urgent = true;
    switch (state.phase) {
      case 'running': // EP2: remembered for one follow-up run
      case 'postponed': // the rate limit keeps precedence (EP11); the event joins the owed run
        return;
      case 'queued': // EP13: a fresh change moves a run owed for a listed event ahead
        if (state.urgent && state.inBacklog) {
          this.backlog.delete(state);
          this.enqueue(state);
        }
        return;
      case 'waiting': // EP8/EP9: an event runs now; the pending retry or reschedule is moot
        this.toIdle(state);
        this.enqueue(state);
        return;
      case 'idle':
        this.enqueue(state);
        return;
    }
  }

  /** Primary deleted (EP5): drop every trace of the resource, or mark it if a run is in flight. */
  private forget(state: ResourceState): void {
    state.consumeOwed();
    state.retriesMade = 0;
    state.rateState = undefined;
    if (state.phase === 'running') {
      state.deleted = true;
      return;
    }
    this.toIdle(state);
    this.states.delete(state.key);
  }

  /** Cancels the timer or the queue place; what is owed stays recorded on the state. */
  private toIdle(state: ResourceState): void {
    if (state.phase === 'postponed') this.postponed--;
    if (state.phase === 'queued') (state.inBacklog ? this.backlog : this.fresh).delete(state);
    if (state.timer) this.deadlines.cancel(state.timer);
    state.timer = undefined;
    state.phase = 'idle';
  }

  private enqueue(state: ResourceState): void {
    state.phase = 'queued';
    state.queuedAt = this.now();
    state.inBacklog = !state.urgent;
    (state.inBacklog ? this.backlog : this.fresh).push(state);
  }

  /** Arms the retry, reschedule or max-interval timer; returns when it is due. */
  private arm(state: ResourceState, cause: TimerCause, delay: number): number {
    state.phase = 'waiting';
    state.timerCause = cause;
    state.timer = this.deadlines.add(delay, state);
    return this.now() + delay;
  }

  private postpone(state: ResourceState, delay: number): void {
    state.phase = 'postponed';
    state.rateLimited = true;
    this.postponed++;
    state.timer = this.deadlines.add(delay, state);
  }

  private fire(state: ResourceState): void {
    if (this.closed) return;
    // EP13: a retry or reschedule was asked for by a run; only the max interval is a resync.
    if (state.phase === 'waiting' && state.timerCause?.type !== 'maxInterval') state.urgent = true;
    this.toIdle(state);
    this.enqueue(state);
    this.afterChange();
  }

  /** Starts due runs while slots are free. Re-entrant calls (from synchronous runs) fall through to the running loop. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.active && !this.closed && this.running < this.options.maxConcurrentReconciliations) {
        if (this.fresh.size + this.backlog.size === 0 || this.options.mayStart?.() === false) break;
        const state = this.fresh.shift() ?? this.backlog.shift();
        if (!state) break;
        this.start(state);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(state: ResourceState): void {
    state.phase = 'idle';
    const now = this.now();
    const { primaries, exists } = this.options;
    if ((primaries && !primaries.has(state.id)) || (exists && !exists(state.id))) {
      const cause = state.owedCause();
      state.consumeOwed();
      this.emit({ id: state.id, cause, startedAt: now, endedAt: now, result: 'skipped' });
      return;
    }
    if (this.options.rateLimiter) {
      const decision = this.options.rateLimiter.acquire(state.rateState, now);
      state.rateState = decision.state;
      if (!(decision.waitMs <= 0)) {
        if (!Number.isFinite(decision.waitMs)) {
          throw new ConfigurationError('rateLimiter', `acquire() returned waitMs ${describeValue(decision.waitMs)}`);
        }
        this.postpone(state, Math.max(decision.waitMs, MIN_RATE_LIMIT_DELAY));
        return;
      }
    }
    const cause = state.owedCause();
    state.consumeOwed();
    const owed = cause.type === 'rateLimit' ? cause.postponed : cause;
    if (owed.type === 'retry') state.retriesMade = owed.attempt;
    const retry: RetryInfo = { attempt: state.retriesMade, lastAttempt: this.retryDelay(state.retriesMade + 1).delay === undefined };

    state.phase = 'running';
    this.running++;
    const handle: RunHandle = {
      cause,
      startedAt: now,
      abort: undefined,
      subscription: undefined,
      deadline: undefined,
      timeoutMs: 0,
      timedOutAt: undefined,
    };
    state.run = handle;
    if (this.options.runTimeoutMs > 0) this.setDeadline(state, handle, this.options.runTimeoutMs);

    let output: RunOutput;
    try {
      output = this.run(state.id, new Context(retry, now - state.queuedAt, handle, (h, ms) => this.setDeadline(state, h, ms)));
    } catch (error) {
      this.settleRun(state, handle, cause, now, { ok: false, error });
      return;
    }
    if (isObservable(output)) {
      // Tear the run's observable down before settling, so its finalizers run before a follow-up starts.
      const subscription = (handle.subscription = new Subscription());
      const end = (settlement: Settlement): void => {
        subscription.unsubscribe();
        this.settleRun(state, handle, cause, now, settlement);
      };
      subscription.add(
        output.subscribe({
          next: (value) => end({ ok: true, value }),
          error: (error: unknown) => end({ ok: false, error }),
          complete: () => end({ ok: true, value: undefined }),
        }),
      );
    } else if (isPromiseLike(output)) {
      output.then(
        (value) => this.settleRun(state, handle, cause, now, { ok: true, value }),
        (error: unknown) => this.settleRun(state, handle, cause, now, { ok: false, error }),
      );
    } else {
      this.settleRun(state, handle, cause, now, { ok: true, value: output });
    }
  }

  /**
   * EP14: (re)arms the deadline of the run in flight at `timeoutMs` from its start; <= 0 takes it
   * away. A run past its deadline keeps the timeout.
   */
  private setDeadline(state: ResourceState, handle: RunHandle, timeoutMs: number): void {
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs)) {
      throw new ConfigurationError('runTimeoutMs', `must be a number of milliseconds (<= 0: no deadline), got ${describeValue(timeoutMs)}`);
    }
    if (this.closed || state.run !== handle || handle.timedOutAt !== undefined) return;
    if (handle.deadline) this.runDeadlines.cancel(handle.deadline);
    handle.deadline = undefined;
    handle.timeoutMs = timeoutMs > 0 && timeoutMs !== Infinity ? timeoutMs : 0;
    if (handle.timeoutMs > 0) handle.deadline = this.runDeadlines.add(handle.startedAt + handle.timeoutMs - this.now(), state);
  }

  /**
   * EP14: the run's deadline passed: its signal aborts (with the RunTimeoutError as reason). A
   * promise cannot be stopped, so the slot stays taken until it settles; an observable run is
   * unsubscribed and ends here.
   */
  private timeOut(state: ResourceState): void {
    const handle = state.run;
    if (this.closed || !handle) return;
    handle.deadline = undefined;
    handle.timedOutAt = this.now();
    this.options.onRunTimeout?.(state.id, handle.timeoutMs);
    abortSignalOf(handle, new RunTimeoutError(handle.timeoutMs, 0));
    if (handle.subscription) {
      handle.subscription.unsubscribe();
      this.settleRun(state, handle, handle.cause, handle.startedAt, { ok: false, error: undefined });
    }
  }

  /** A run ended: report it unless the scheduler closed or the run was superseded meanwhile. */
  private settleRun(state: ResourceState, handle: RunHandle, cause: ReconcileCause, startedAt: number, settlement: Settlement): void {
    if (this.closed || state.run !== handle) return;
    state.run = undefined;
    if (handle.deadline) this.runDeadlines.cancel(handle.deadline);
    if (handle.timedOutAt !== undefined) {
      const ownError = settlement.ok ? undefined : settlement.error;
      settlement = { ok: false, error: new RunTimeoutError(handle.timeoutMs, this.now() - handle.timedOutAt, ownError) };
    }
    try {
      this.settle(state, cause, startedAt, settlement);
    } catch (error) {
      this.fail(error);
    }
  }

  private settle(state: ResourceState, cause: ReconcileCause, startedAt: number, settlement: Settlement): void {
    this.running--;
    state.phase = 'idle';
    const result = settlement.ok ? checkResult(settlement.value) : settlement;
    const outcome: Mutable<ReconcileOutcome> = {
      id: state.id,
      cause,
      startedAt,
      endedAt: this.now(),
      result: result.ok ? 'success' : 'failure',
    };
    if (!result.ok) outcome.error = result.error instanceof NoRetryError ? result.error.cause : result.error;

    if (state.deleted) {
      // EP5: deleted during the run — nothing follows, the state goes.
      this.states.delete(state.key);
    } else if (state.events > 0) {
      // EP2: events arrived during the run: one follow-up now. EP8: after a failure this run
      // is not retried and the follow-up does not count as an attempt.
      if (result.ok) state.retriesMade = 0;
      this.enqueue(state);
    } else if (result.ok) {
      state.retriesMade = 0; // EP8: a success resets the retry state
      this.armFollowUp(state, outcome, result.value?.rescheduleAfter);
    } else if (result.error instanceof NoRetryError) {
      state.retriesMade = 0;
      this.armFollowUp(state, outcome, result.error.rescheduleAfter);
    } else {
      const attempt = state.retriesMade + 1;
      const { delay, broken } = this.draining ? { delay: undefined } : this.retryDelay(attempt);
      // A broken policy is this run's failure, named, and no retry: processing goes on.
      if (broken)
        outcome.error = new ConfigurationError(
          'retry',
          `${broken.message.slice('retry: '.length)}; not retried after: ${describeError(outcome.error)}`,
          { cause: outcome.error },
        );
      if (delay === undefined)
        this.armFollowUp(state, outcome, undefined); // exhausted or disabled: EP10 safety net
      else outcome.retry = { attempt, at: this.arm(state, { type: 'retry', attempt }, delay) };
    }
    this.emit(outcome);
    this.afterChange();
  }

  /** After a run that schedules no retry: the requested reschedule (EP9), else the max interval (EP10). */
  private armFollowUp(state: ResourceState, outcome: Mutable<ReconcileOutcome>, rescheduleAfter: number | undefined): void {
    if (this.draining) return;
    if (rescheduleAfter !== undefined) {
      outcome.reschedule = { at: this.arm(state, { type: 'reschedule' }, rescheduleAfter), reason: 'requested' };
    } else if (this.options.maxReconciliationInterval > 0) {
      const interval = this.options.maxReconciliationInterval;
      outcome.reschedule = { at: this.arm(state, { type: 'maxInterval' }, interval), reason: 'maxInterval' };
    }
  }

  /** The policy's delay; a policy that throws or answers no delay means no retry, and `broken` says why. */
  private retryDelay(attempt: number): { readonly delay: number | undefined; readonly broken?: ConfigurationError } {
    const retry = this.options.retry;
    if (!retry) return { delay: undefined };
    try {
      return { delay: retryDelayOf(retry, attempt) };
    } catch (err) {
      return { delay: undefined, broken: err as ConfigurationError };
    }
  }

  private emit(outcome: ReconcileOutcome): void {
    if (!this.closed) this.sink.next(outcome);
  }

  /** Runs after every change: start what can start, report load, complete a finished drain. */
  private afterChange(): void {
    if (this.closed) return;
    this.pump();
    this.report();
    if (this.draining && this.running === 0 && (!this.active || (this.queued() === 0 && this.postponed === 0))) {
      this.dispose();
      this.sink.complete();
    }
  }

  private report(): void {
    const probe = this.options.probe;
    if (!probe) return;
    const last = this.lastLoad;
    const queued = this.queued();
    if (last.running === this.running && last.queued === queued && last.resources === this.states.size) return;
    this.lastLoad = { running: this.running, queued, resources: this.states.size };
    probe(this.lastLoad);
  }

  /** Errors of our own callbacks (strategies, probe) raised from timers or promises fail the stream instead of escaping. */
  private guard(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    this.dispose();
    this.sink.error(error);
  }

  private queued(): number {
    return this.fresh.size + this.backlog.size;
  }

  private now(): number {
    return this.options.scheduler.now();
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** A run's value must be void or a RunResult with a sane rescheduleAfter; anything else is a failure of that run. */
function checkResult(
  value: unknown,
): { readonly ok: true; readonly value: RunResult | undefined } | { readonly ok: false; readonly error: unknown } {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  if (typeof value !== 'object') {
    return { ok: false, error: new TypeError(`a run must return void or { rescheduleAfter?: number }, got ${describeValue(value)}`) };
  }
  const rescheduleAfter = (value as { rescheduleAfter?: unknown }).rescheduleAfter;
  if (rescheduleAfter !== undefined && !(typeof rescheduleAfter === 'number' && Number.isFinite(rescheduleAfter) && rescheduleAfter >= 0)) {
    return {
      ok: false,
      error: new RangeError(`rescheduleAfter must be a finite number of milliseconds >= 0, got ${describeValue(rescheduleAfter)}`),
    };
  }
  return { ok: true, value: rescheduleAfter === undefined ? undefined : { rescheduleAfter } };
}

/** Aborts a run's signal, created here if the run has not read it yet so that a later read sees it aborted. */
function abortSignalOf(handle: RunHandle, reason?: unknown): void {
  (handle.abort ??= new AbortController()).abort(reason);
}
