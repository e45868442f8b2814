import { isObservable, Subscription } from 'rxjs';
import { ConfigurationError, describeValue, NoRetryError } from '../core/errors.js';
import type { ResourceEvent } from '../core/events.js';
import {
  underlyingCause,
  type EventCause,
  type ReconcileCause,
  type ReconcileOutcome,
  type RetryInfo,
} from '../core/outcome.js';
import { resourceKey, type ResourceID } from '../core/resource.js';
import {
  MIN_RATE_LIMIT_DELAY,
  type ResolvedReconcileOptions,
  type RunFn,
  type RunOutput,
  type RunResult,
} from './options.js';
import { FifoSet } from './queue.js';
import { scheduleOnce } from './timers.js';

/**
 * Where a resource stands. At most one of: a timer (waiting/postponed), a place in the ready
 * queue (queued), a run in flight (running).
 */
type Phase =
  | 'idle' // nothing owed
  | 'waiting' // a retry, reschedule or max-interval timer is armed
  | 'postponed' // a run is owed but the rate limiter holds it until its timer fires
  | 'queued' // a run is owed now; waiting for a slot or for activation
  | 'running';

type TimerCause = Exclude<ReconcileCause, EventCause>;

class ResourceState {
  phase: Phase = 'idle';
  /** Cause of the owed run (waiting, postponed, queued). */
  cause: ReconcileCause | undefined;
  timer: Subscription | undefined;
  /** Events that arrived during the current run, coalesced (EP2). */
  dirty: EventCause | undefined;
  /** The primary was deleted during the current run (EP5). */
  deleted = false;
  /** Retry runs made in the current failure streak (EP7/EP8). */
  retriesMade = 0;
  rateState: unknown = undefined;
  /** Identifies the run in flight, so late settlements of an abandoned run are ignored. */
  run: { readonly abort: AbortController; readonly subscription: Subscription } | undefined;

  constructor(
    readonly key: string,
    readonly id: ResourceID,
  ) {}
}

type Settlement = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface SchedulerSink {
  next(outcome: ReconcileOutcome): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * The per-resource state machine behind `reconcileEach` (EP1–EP5, EP7–EP12): one instance per
 * subscription. Feed it events, activation changes and completion; it calls `run` and reports
 * one outcome per run to the sink.
 */
export class ResourceScheduler {
  private readonly states = new Map<string, ResourceState>();
  private readonly ready = new FifoSet<ResourceState>();
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
  }

  onEvent(event: ResourceEvent): void {
    if (!this.closed) this.guard(() => this.handleEvent(event));
  }

  setActive(active: boolean): void {
    if (this.closed || this.active === active) return;
    this.active = active;
    this.guard(() => this.afterChange());
  }

  /** The event source completed: finish what is running or due, arm no more timers (graceful drain). */
  drain(): void {
    if (this.closed) return;
    this.draining = true;
    for (const state of this.states.values()) {
      if (state.phase === 'waiting') this.toIdle(state);
    }
    this.guard(() => this.afterChange());
  }

  private handleEvent(event: ResourceEvent): void {
    const key = resourceKey(event.id);
    let state = this.states.get(key);
    if (event.primary && event.action === 'deleted') {
      if (state) this.forget(state);
    } else if (state && !state.deleted) {
      this.trigger(state, eventCause(event));
    } else if (event.primary) {
      // EP4: only primary events create state. A primary event after a delete during a run
      // revives the state: the resource was re-created under the same name.
      if (state) state.deleted = false;
      else this.states.set(key, (state = new ResourceState(key, event.id)));
      this.trigger(state, eventCause(event));
    }
    this.afterChange();
  }

  /** Stops every timer and aborts every run in flight; nothing is reported afterwards. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.states.values()) {
      state.timer?.unsubscribe();
      if (state.run) {
        state.run.subscription.unsubscribe();
        state.run.abort.abort();
      }
    }
    this.states.clear();
    this.ready.clear();
  }

  private trigger(state: ResourceState, cause: EventCause): void {
    switch (state.phase) {
      case 'running':
        state.dirty = coalesce(state.dirty, cause);
        return;
      case 'queued':
      case 'postponed': // the rate limit keeps precedence (EP11); the event joins the owed run
        state.cause = coalesce(state.cause, cause);
        return;
      case 'waiting': // EP8/EP9: an event runs now; the pending retry or reschedule is moot
      case 'idle':
        this.enqueue(state, cause);
        return;
    }
  }

  /** Primary deleted (EP5): drop every trace of the resource, or mark it if a run is in flight. */
  private forget(state: ResourceState): void {
    if (state.phase === 'running') {
      state.deleted = true;
      state.dirty = undefined;
      state.retriesMade = 0;
      state.rateState = undefined;
      return;
    }
    this.toIdle(state);
    this.states.delete(state.key);
  }

  private toIdle(state: ResourceState): void {
    if (state.phase === 'postponed') this.postponed--;
    if (state.phase === 'queued') this.ready.delete(state);
    state.timer?.unsubscribe();
    state.timer = undefined;
    state.cause = undefined;
    state.phase = 'idle';
  }

  private enqueue(state: ResourceState, cause: ReconcileCause): void {
    this.toIdle(state);
    state.phase = 'queued';
    state.cause = cause;
    this.ready.push(state);
  }

  private arm(state: ResourceState, cause: TimerCause, delay: number): number {
    this.toIdle(state);
    state.phase = cause.type === 'rateLimit' ? 'postponed' : 'waiting';
    if (state.phase === 'postponed') this.postponed++;
    state.cause = cause;
    state.timer = scheduleOnce(this.options.scheduler, delay, () => this.guard(() => this.fire(state)));
    return this.now() + delay;
  }

  private fire(state: ResourceState): void {
    state.timer = undefined;
    const cause = state.cause;
    if (this.closed || cause === undefined) return;
    // A postponed run stays a rate-limit run even if events joined it meanwhile.
    this.enqueue(state, state.phase === 'postponed' ? { type: 'rateLimit', postponed: underlyingCause(cause) } : cause);
    this.afterChange();
  }

  /** Starts due runs while slots are free. Re-entrant calls (from synchronous runs) fall through to the running loop. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.active && !this.closed && this.running < this.options.maxConcurrency) {
        const state = this.ready.shift();
        if (!state) break;
        this.start(state);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(state: ResourceState): void {
    const cause = state.cause as ReconcileCause;
    state.cause = undefined;
    state.phase = 'idle';
    const now = this.now();
    if (this.options.exists && !this.options.exists(state.id)) {
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
        this.arm(state, { type: 'rateLimit', postponed: underlyingCause(cause) }, Math.max(decision.waitMs, MIN_RATE_LIMIT_DELAY));
        return;
      }
    }
    const owed = underlyingCause(cause);
    if (owed.type === 'retry') state.retriesMade = owed.attempt;
    const retry: RetryInfo = { attempt: state.retriesMade, lastAttempt: this.retryDelay(state.retriesMade + 1) === undefined };

    state.phase = 'running';
    this.running++;
    const abort = new AbortController();
    const subscription = new Subscription();
    const handle = { abort, subscription };
    state.run = handle;
    let settled = false;
    const settle = (settlement: Settlement): void => {
      if (settled || this.closed || state.run !== handle) return;
      settled = true;
      this.guard(() => this.settle(state, cause, now, settlement));
    };

    let output: RunOutput;
    try {
      output = this.run(state.id, { retry, signal: abort.signal, cause });
    } catch (error) {
      settle({ ok: false, error });
      return;
    }
    if (isObservable(output)) {
      // Tear the run's observable down before settling, so its finalizers run before a follow-up starts.
      const end = (settlement: Settlement): void => {
        subscription.unsubscribe();
        settle(settlement);
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
        (value) => settle({ ok: true, value }),
        (error: unknown) => settle({ ok: false, error }),
      );
    } else {
      settle({ ok: true, value: output });
    }
  }

  private settle(state: ResourceState, cause: ReconcileCause, startedAt: number, settlement: Settlement): void {
    this.running--;
    state.run = undefined;
    state.phase = 'idle';
    const endedAt = this.now();
    const base = { id: state.id, cause, startedAt, endedAt };
    let outcome: ReconcileOutcome;

    const result = settlement.ok ? checkResult(settlement.value) : settlement;
    const dirty = state.dirty;
    state.dirty = undefined;
    if (state.deleted) {
      // EP5: deleted during the run — nothing follows, the state goes.
      this.states.delete(state.key);
      outcome = result.ok ? { ...base, result: 'success' } : { ...base, result: 'failure', error: unwrap(result.error) };
    } else if (result.ok) {
      state.retriesMade = 0; // EP8: a success resets the retry state
      outcome = { ...base, result: 'success', ...this.afterRun(state, dirty, result.value?.rescheduleAfter) };
    } else if (dirty) {
      // EP8: events arrived during the failing run; they run now and this failure is not retried.
      outcome = { ...base, result: 'failure', error: unwrap(result.error) };
      this.enqueue(state, dirty);
    } else if (result.error instanceof NoRetryError) {
      state.retriesMade = 0;
      outcome = { ...base, result: 'failure', error: result.error.cause, ...this.afterRun(state, undefined, undefined) };
    } else {
      const attempt = state.retriesMade + 1;
      const delay = this.retryDelay(attempt);
      const error = unwrap(result.error);
      if (delay === undefined || this.draining) {
        // Retries exhausted or disabled: the max interval is the safety net (EP10).
        outcome = { ...base, result: 'failure', error, ...this.afterRun(state, undefined, undefined) };
      } else {
        outcome = { ...base, result: 'failure', error, retry: { attempt, at: this.arm(state, { type: 'retry', attempt }, delay) } };
      }
    }
    this.emit(outcome);
    this.afterChange();
  }

  /** What follows a run that asks for no retry: the coalesced events, else a reschedule or the max interval. */
  private afterRun(
    state: ResourceState,
    dirty: EventCause | undefined,
    rescheduleAfter: number | undefined,
  ): Pick<ReconcileOutcome, 'reschedule'> {
    if (dirty) {
      this.enqueue(state, dirty);
      return {};
    }
    if (this.draining) return {};
    if (rescheduleAfter !== undefined) {
      return { reschedule: { at: this.arm(state, { type: 'reschedule' }, rescheduleAfter), reason: 'requested' } };
    }
    const interval = this.options.maxReconciliationInterval;
    if (interval > 0) {
      return { reschedule: { at: this.arm(state, { type: 'maxInterval' }, interval), reason: 'maxInterval' } };
    }
    return {};
  }

  private retryDelay(attempt: number): number | undefined {
    const retry = this.options.retry;
    if (!retry) return undefined;
    const delay = retry.delayBefore(attempt);
    if (delay !== undefined && !(typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) {
      throw new ConfigurationError('retry', `delayBefore(${attempt}) returned ${describeValue(delay)}`);
    }
    return delay;
  }

  private emit(outcome: ReconcileOutcome): void {
    if (!this.closed) this.sink.next(outcome);
  }

  /** Runs after every change: start what can start, report load, complete a finished drain. */
  private afterChange(): void {
    if (this.closed) return;
    this.pump();
    this.report();
    if (this.draining && this.running === 0 && (!this.active || (this.ready.size === 0 && this.postponed === 0))) {
      this.dispose();
      this.sink.complete();
    }
  }

  private report(): void {
    const probe = this.options.probe;
    if (!probe) return;
    const last = this.lastLoad;
    if (last.running === this.running && last.queued === this.ready.size && last.resources === this.states.size) return;
    this.lastLoad = { running: this.running, queued: this.ready.size, resources: this.states.size };
    probe(this.lastLoad);
  }

  /** Errors of our own callbacks (strategies, probe) raised from timers or promises fail the stream instead of escaping. */
  private guard(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.dispose();
      this.sink.error(error);
    }
  }

  private now(): number {
    return this.options.scheduler.now();
  }
}

function eventCause(event: ResourceEvent): EventCause {
  return { type: 'event', source: event.source, action: event.action, primary: event.primary, coalesced: 1 };
}

/** The newest event wins; the count says how many events one run now covers (EP2). */
function coalesce(previous: ReconcileCause | undefined, next: EventCause): EventCause {
  const before = previous === undefined ? 0 : eventsIn(previous);
  return before === 0 ? next : { ...next, coalesced: before + next.coalesced };
}

function eventsIn(cause: ReconcileCause): number {
  const owed = underlyingCause(cause);
  return owed.type === 'event' ? owed.coalesced : 0;
}

function unwrap(error: unknown): unknown {
  return error instanceof NoRetryError ? error.cause : error;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** A run's value must be void or a RunResult with a sane rescheduleAfter; anything else is a failure of that run. */
function checkResult(value: unknown): { readonly ok: true; readonly value: RunResult | undefined } | { readonly ok: false; readonly error: unknown } {
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
