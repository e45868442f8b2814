/** Leader election on a coordination.k8s.io Lease, with client-go's timings and jitter. */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
// From its own module: client-node's entry point loads the whole generated API.
import { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
import { asyncScheduler, BehaviorSubject, distinctUntilChanged, type Observable, type SchedulerLike } from 'rxjs';
import type { Logger } from 'pino';
import { ConfigurationError, requireKnownKeys, requirePositiveDuration } from '../core/index.js';
import { classifyError, errorMessage, shareConnections } from '../kube/index.js';
import { abortAfter } from './deadline.js';
import { kubeLeaseClient, watchLease, type LeaseClient } from './lease-client.js';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  leaseName: string;
  leaseNamespace: string;
  /** Unique per instance (default `<hostname>_<uuid>`). */
  identity?: string;
  /** How long a lease is valid after its last renewal (default 15000 ms; written as whole seconds, rounded up). */
  leaseDurationMs?: number;
  /** A leader that has not renewed for this long stops leading (default 10000 ms; must be < leaseDurationMs). */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew (default 2000 ms; jittered up to ×2.2 while not leading). */
  retryPeriodMs?: number;
  /** Give the lease up on stop() so another instance takes over at once (default true). */
  releaseOnStop?: boolean;
  logger?: Logger;
  /** Clock and timers (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Source of jitter in [0, 1) (default Math.random). */
  random?: () => number;
  /** How the lease is read, written and watched (default: client-node on `kubeConfig`); tests pass a fake server. */
  leaseClient?: LeaseClient;
}

const LEADER_ELECTION_OPTIONS = {
  kubeConfig: true,
  leaseName: true,
  leaseNamespace: true,
  identity: true,
  leaseDurationMs: true,
  renewDeadlineMs: true,
  retryPeriodMs: true,
  releaseOnStop: true,
  logger: true,
  scheduler: true,
  random: true,
  leaseClient: true,
} as const satisfies Record<keyof LeaderElectionOptions, true>;

export interface LeaderElectionConfig {
  readonly leaseName: string;
  readonly leaseNamespace: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly releaseOnStop: boolean;
}

/** client-go's JitterFactor: a candidate waits retryPeriod × [1, 2.2) between attempts. */
export const LEADER_JITTER_FACTOR = 1.2;

export const LEADER_ELECTION_DEFAULTS = Object.freeze({
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
});

/** Validates the options the way client-go does; every error names the option. */
export function leaderElectionConfig(options: LeaderElectionOptions): LeaderElectionConfig {
  if (!options || typeof options !== 'object') throw new ConfigurationError('leaderElection', 'options are required');
  requireKnownKeys('leaderElection', options, LEADER_ELECTION_OPTIONS);
  if (!options.kubeConfig) throw new ConfigurationError('leaderElection.kubeConfig', 'is required');
  const name = (option: string, value: unknown): string => {
    if (typeof value !== 'string' || value.trim() === '')
      throw new ConfigurationError(option, `must be a non-empty string, got ${JSON.stringify(value)}`);
    return value;
  };
  const leaseDurationMs = requirePositiveDuration(
    'leaderElection.leaseDurationMs',
    options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
  );
  const renewDeadlineMs = requirePositiveDuration(
    'leaderElection.renewDeadlineMs',
    options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
  );
  const retryPeriodMs = requirePositiveDuration(
    'leaderElection.retryPeriodMs',
    options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs,
  );
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new ConfigurationError(
      'leaderElection.renewDeadlineMs',
      `must be less than leaseDurationMs (${renewDeadlineMs} >= ${leaseDurationMs}), or a leader could act after its lease expired`,
    );
  }
  if (renewDeadlineMs <= LEADER_JITTER_FACTOR * retryPeriodMs) {
    throw new ConfigurationError(
      'leaderElection.renewDeadlineMs',
      `must be greater than ${LEADER_JITTER_FACTOR} × retryPeriodMs (${renewDeadlineMs} <= ${LEADER_JITTER_FACTOR * retryPeriodMs}), or one failed renewal loses the lease`,
    );
  }
  return Object.freeze({
    leaseName: name('leaderElection.leaseName', options.leaseName),
    leaseNamespace: name('leaderElection.leaseNamespace', options.leaseNamespace),
    identity: name('leaderElection.identity', options.identity ?? `${hostname()}_${randomUUID()}`),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    releaseOnStop: options.releaseOnStop ?? true,
  });
}

type Attempt = 'acquired' | 'heldByOther' | 'failed';

/** What this instance last saw of the lease, and when (its own clock) that record first appeared. */
interface Observation {
  readonly holder: string;
  readonly durationMs: number;
  readonly record: string;
  readonly at: number;
  /** Counts changes of the record, so a wait knows whether it has learnt something new. */
  readonly seq: number;
}

/** A lease watch being opened or open; `closed` once we closed it or it ended. */
interface WatchHandle {
  closed: boolean;
  close?: () => void;
  openedAt: number;
}

/** A watch that ended sooner than this after it opened is not reopened at once (no busy loop). */
const WATCH_REOPEN_MIN_MS = 1_000;

/**
 * A holder renews every retry period; a candidate that has seen nothing new for this fraction of
 * a retry period longer reads the lease: either the holder is gone (the read finds nothing new)
 * or the candidate's watch is dead (the read finds the renewal, late by at most this slack).
 */
const RENEWAL_SLACK = 0.25;

/**
 * OB4: Lease-based leader election, as client-go's leaderelection does it. The holder renews
 * every retry period; a lease held by another is taken only after it has not changed for its
 * full duration, measured on this instance's clock (no trust in other clocks). All writes are
 * conditional on the read resourceVersion, so two candidates cannot both win (409 = lost the race).
 *
 * Candidates read the lease every jittered retry period and also watch it: a renewal is seen
 * when the server stores it, so a candidate knows when the lease expires and tries at that
 * moment (or at once when the lease is released), not at its next jittered poll. A renewal
 * that is overdue (a quarter of a retry period late) makes a candidate read at once, so a watch
 * that went silent without ending costs at most that slack. Failover after a holder dies is then
 * the lease duration plus a few requests.
 *
 * Safety: a leader whose last successful renewal is renewDeadline old emits false at that moment,
 * whatever its requests are doing; since renewDeadline < leaseDuration, it has stopped leading
 * before anyone else can consider the lease expired.
 */
export class LeaderElector {
  readonly config: LeaderElectionConfig;
  /** Replays the current state, then every change. Starts false. */
  readonly isLeader$: Observable<boolean>;

  private readonly leader = new BehaviorSubject<boolean>(false);
  private readonly client: LeaseClient;
  private readonly scheduler: SchedulerLike;
  private readonly random: () => number;
  private readonly log: Logger | undefined;
  private stopping: AbortController | undefined;
  private loop: Promise<void> | undefined;
  /** The last lease we read or wrote: writes start from it. */
  private lease: V1Lease | undefined;
  private observation: Observation | undefined;
  /** Set while a candidate waits: re-plans the wait when a new record is seen. */
  private onObservation: (() => void) | undefined;
  private watchHandle: WatchHandle | undefined;
  /** While leading: when the last successful attempt started, and how to end the term. */
  private term: { renewedAt: number; readonly end: AbortController } | undefined;

  constructor(options: LeaderElectionOptions) {
    this.config = leaderElectionConfig(options);
    this.client = options.leaseClient ?? kubeLeaseClient(shareConnections(options.kubeConfig));
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.random = options.random ?? Math.random;
    this.log = options.logger?.child({ lease: `${this.config.leaseNamespace}/${this.config.leaseName}`, identity: this.config.identity });
    this.isLeader$ = this.leader.pipe(distinctUntilChanged());
  }

  get identity(): string {
    return this.config.identity;
  }

  get isLeader(): boolean {
    return this.leader.value;
  }

  /**
   * Whether this instance may act as leader at this very moment: it leads, and its last successful
   * renewal started less than the renew deadline ago, judged on the clock now rather than by the
   * deadline's timer. A process frozen past its lease (SIGSTOP, a long GC pause) wakes with timers
   * of every kind due at once, in whatever order the runtime fires them; asked first, this steps
   * down at once (isLeader$ emits false) and answers false.
   */
  holdsLease(): boolean {
    if (!this.leader.value) return false;
    const term = this.term;
    if (term !== undefined && this.scheduler.now() - term.renewedAt < this.config.renewDeadlineMs) return true;
    this.setLeader(false, `no renewal within the renew deadline of ${this.config.renewDeadlineMs} ms`);
    term?.end.abort();
    return false;
  }

  /** Starts campaigning (idempotent). */
  start(): void {
    if (this.stopping) return;
    const stopping = new AbortController();
    this.stopping = stopping;
    this.loop = this.campaign(stopping.signal).catch((err: unknown) => {
      this.log?.error({ err }, 'leader election loop failed');
      this.setLeader(false, 'loop failed');
    });
  }

  /** Stops campaigning and renewing, emits false, and releases the lease if we hold it. */
  async stop(): Promise<void> {
    const stopping = this.stopping;
    if (!stopping) return;
    stopping.abort();
    await this.loop;
    this.stopping = undefined;
    this.loop = undefined;
    this.setLeader(false, 'stopped');
    // Release whatever we last wrote as ours; the write is conditional on its resourceVersion.
    if (this.config.releaseOnStop) await this.release();
  }

  private async campaign(stop: AbortSignal): Promise<void> {
    try {
      while (!stop.aborted) {
        const startedAt = this.scheduler.now();
        const attempt = await this.tryAcquireOrRenew(stop);
        if (stop.aborted) break;
        if (attempt === 'acquired') {
          this.closeWatch(); // a leader learns what it needs from its own renewals
          await this.lead(startedAt, stop);
        } else {
          this.openWatch(stop);
          await this.waitForNextAttempt(stop);
        }
      }
    } finally {
      this.closeWatch();
    }
  }

  /**
   * A candidate's pause: the jittered retry period, cut short at the moment the lease it has
   * seen becomes acquirable (expired, released, or still ours), or when the holder's next renewal
   * is overdue. What was already acquirable or overdue when the wait began has just been tried,
   * so it waits the retry period unless it sees something new.
   */
  private waitForNextAttempt(stop: AbortSignal): Promise<void> {
    const start = this.scheduler.now();
    const retryAt = start + this.config.retryPeriodMs * (1 + LEADER_JITTER_FACTOR * this.random());
    const seen = this.observation?.seq;
    return new Promise((resolve) => {
      if (stop.aborted) return resolve();
      let timer: { unsubscribe(): void } | undefined;
      const finish = () => {
        timer?.unsubscribe();
        this.onObservation = undefined;
        stop.removeEventListener('abort', finish);
        resolve();
      };
      const plan = () => {
        timer?.unsubscribe();
        const o = this.observation;
        const acquirableAt = o === undefined ? undefined : this.acquirableAt(o);
        const useful = acquirableAt !== undefined && (o?.seq !== seen || acquirableAt > start);
        const overdueAt = o === undefined ? undefined : this.renewalOverdueAt(o);
        let at = useful ? Math.min(retryAt, acquirableAt) : retryAt;
        if (overdueAt !== undefined && overdueAt > start) at = Math.min(at, overdueAt);
        timer = this.scheduler.schedule(finish, Math.max(0, at - this.scheduler.now()));
      };
      stop.addEventListener('abort', finish, { once: true });
      this.onObservation = plan;
      plan();
    });
  }

  private acquirableAt(o: Observation): number {
    return o.holder === '' || o.holder === this.config.identity ? o.at : o.at + o.durationMs;
  }

  /** When the holder's next renewal should have been seen, if another instance holds the lease. */
  private renewalOverdueAt(o: Observation): number | undefined {
    if (o.holder === '' || o.holder === this.config.identity) return undefined;
    return o.at + this.config.retryPeriodMs * (1 + RENEWAL_SLACK);
  }

  /**
   * One leadership term: renew every retry period until stopped, lost, or the renew deadline
   * passes. The deadline counts from the start of the last successful attempt, which is before
   * the server stored the renewal, so it always falls before anyone else sees the lease expire.
   */
  private async lead(acquiredAt: number, stop: AbortSignal): Promise<void> {
    const term = { renewedAt: acquiredAt, end: new AbortController() };
    this.term = term;
    const signal = AbortSignal.any([stop, term.end.signal]);
    let deadline: { unsubscribe(): void } | undefined;
    const armDeadline = (renewedAt: number) => {
      term.renewedAt = renewedAt;
      deadline?.unsubscribe();
      const delay = Math.max(0, renewedAt + this.config.renewDeadlineMs - this.scheduler.now());
      deadline = this.scheduler.schedule(() => {
        this.setLeader(false, `no renewal within the renew deadline of ${this.config.renewDeadlineMs} ms`);
        term.end.abort();
      }, delay);
    };
    armDeadline(acquiredAt);
    // An acquisition that started a renew deadline ago (the process was frozen while it was on its way) is no term.
    if (this.scheduler.now() - acquiredAt >= this.config.renewDeadlineMs) {
      deadline?.unsubscribe();
      this.term = undefined;
      return;
    }
    this.setLeader(true, 'acquired the lease');
    try {
      while (!signal.aborted) {
        await this.sleep(this.config.retryPeriodMs, signal);
        if (signal.aborted) break;
        const startedAt = this.scheduler.now();
        const attempt = await this.tryAcquireOrRenew(signal);
        if (signal.aborted) break;
        if (attempt === 'acquired') armDeadline(startedAt);
        else if (attempt === 'heldByOther') {
          this.setLeader(false, 'the lease is held by another instance');
          break;
        }
      }
    } finally {
      deadline?.unsubscribe();
      if (this.term === term) this.term = undefined;
      if (!stop.aborted) this.setLeader(false, 'lost the lease');
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const bounded = this.bounded(signal);
    try {
      return await this.attempt(bounded.signal, signal);
    } finally {
      bounded.done();
    }
  }

  /**
   * The attempt's start is the renewTime written (and what a leader's deadline counts from); a
   * record the read found new is dated when the read answered, as client-go dates it: the server
   * may have stored it while the read was on its way, so an earlier date could end its lease early.
   */
  private async attempt(bounded: AbortSignal, signal: AbortSignal): Promise<Attempt> {
    const now = this.scheduler.now();
    let current: V1Lease | undefined;
    try {
      current = await this.client.find(this.leaseRef(), { signal: bounded });
    } catch (err) {
      return this.failed('read', err, signal);
    }
    if (current === undefined) {
      try {
        this.written(await this.client.create(this.leaseBody(undefined, now), { signal: bounded }));
        return 'acquired';
      } catch (createErr) {
        return classifyError(createErr) === 'conflict' ? 'heldByOther' : this.failed('create', createErr, signal);
      }
    }
    this.lease = current;
    const readAt = this.scheduler.now();
    if (this.observe(current, readAt)) this.distrustWatch(readAt);
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.config.identity && !this.observedExpired(readAt)) return 'heldByOther';
    try {
      this.written(await this.client.replace(this.leaseBody(current, now), { signal: bounded }));
      return 'acquired';
    } catch (err) {
      // 409: someone wrote the lease since we read it. Not ours this round; the next read tells who holds it.
      return classifyError(err) === 'conflict' ? 'failed' : this.failed('update', err, signal);
    }
  }

  /** client-go's ReleaseOnCancel: an empty holder and a 1 s duration so the next candidate takes over at once. */
  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease || lease.spec?.holderIdentity !== this.config.identity) return;
    const now = new V1MicroTime(this.scheduler.now());
    const body: V1Lease = {
      ...lease,
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    try {
      this.written(await this.client.replace(body, { signal: AbortSignal.timeout(this.config.renewDeadlineMs) }));
      this.log?.info('released the lease');
    } catch (err) {
      this.log?.warn({ err: errorMessage(err) }, 'could not release the lease; it expires on its own');
    }
  }

  private leaseBody(current: V1Lease | undefined, now: number): V1Lease {
    const { leaseName: name, leaseNamespace: namespace, identity } = this.config;
    const ours = current?.spec?.holderIdentity === identity;
    const time = new V1MicroTime(now);
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: current?.metadata ?? { name, namespace },
      spec: {
        ...current?.spec,
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(this.config.leaseDurationMs / 1000),
        acquireTime: ours && current?.spec?.acquireTime ? current.spec.acquireTime : time,
        renewTime: time,
        leaseTransitions: ours ? (current?.spec?.leaseTransitions ?? 0) : (current?.spec?.leaseTransitions ?? -1) + 1,
      },
    };
  }

  private written(lease: V1Lease): void {
    this.lease = lease;
    this.observe(lease, this.scheduler.now());
  }

  // Expiry is judged by when *we* saw the record change, never by the holder's timestamps (clock skew).
  // A watch delivers the lease as JSON, a read as typed objects: the record compares times as numbers.
  /** Returns whether the record is new to us. */
  private observe(lease: V1Lease, at: number): boolean {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const record = JSON.stringify([holder, timeMs(spec.renewTime), spec.leaseTransitions ?? 0, spec.leaseDurationSeconds]);
    const previous = this.observation;
    if (previous?.record === record) return false;
    const seconds = spec.leaseDurationSeconds ?? Math.ceil(this.config.leaseDurationMs / 1000);
    this.observation = { holder, durationMs: seconds * 1000, record, at, seq: (previous?.seq ?? 0) + 1 };
    this.onObservation?.();
    return true;
  }

  /**
   * A read found a record the open watch has not delivered: the watch may be a dead connection
   * that never ended (a network cut leaves those). It is closed, and reopened after this attempt,
   * so that the next renewals are seen when stored. (A renewal read just before its watch event
   * arrives costs one needless reopen.)
   */
  private distrustWatch(now: number): void {
    const handle = this.watchHandle;
    if (!handle || handle.closed || now - handle.openedAt < this.config.retryPeriodMs) return;
    this.log?.debug('the lease watch missed a change; reopening it');
    this.closeWatch();
  }

  private observedExpired(now: number): boolean {
    const o = this.observation;
    return o === undefined || o.at + o.durationMs <= now;
  }

  /** Opens a watch on the lease unless one is open; a watch the server ends is reopened at once. */
  private openWatch(stop: AbortSignal): void {
    if (this.watchHandle || stop.aborted) return;
    const handle: WatchHandle = { closed: false, openedAt: this.scheduler.now() };
    this.watchHandle = handle;
    const onClose = (error?: unknown) => {
      if (handle.closed) return;
      handle.closed = true;
      if (this.watchHandle === handle) this.watchHandle = undefined;
      if (error !== undefined)
        this.log?.debug({ err: errorMessage(error) }, 'lease watch failed; polling until the next attempt reopens it');
      else if (this.scheduler.now() - handle.openedAt >= WATCH_REOPEN_MIN_MS && !this.isLeader) this.openWatch(stop);
    };
    watchLease(
      this.client,
      this.leaseRef(),
      (lease) => {
        if (!handle.closed) this.observe(lease, this.scheduler.now());
      },
      onClose,
    ).then(
      (close) => {
        handle.close = close;
        if (handle.closed) close();
      },
      (err: unknown) => onClose(err ?? new Error('lease watch failed')),
    );
  }

  private leaseRef(): { readonly name: string; readonly namespace: string } {
    return { name: this.config.leaseName, namespace: this.config.leaseNamespace };
  }

  private closeWatch(): void {
    const handle = this.watchHandle;
    this.watchHandle = undefined;
    if (!handle || handle.closed) return;
    handle.closed = true;
    handle.close?.();
  }

  private failed(verb: string, err: unknown, signal: AbortSignal): Attempt {
    if (!signal.aborted) this.log?.warn({ err: errorMessage(err), kind: classifyError(err) }, `lease ${verb} failed`);
    return 'failed';
  }

  private setLeader(value: boolean, reason: string): void {
    if (this.leader.value === value) return;
    this.log?.info({ leader: value, reason }, value ? 'started leading' : 'stopped leading');
    this.leader.next(value);
  }

  /**
   * A request never outlives the renew deadline, the term or stop(): a request that hangs (a
   * connection a network cut left open) is abandoned and the next attempt opens a new one. The
   * deadline runs on the scheduler, like every other timer of the elector.
   */
  private bounded(signal: AbortSignal): { signal: AbortSignal; done: () => void } {
    return abortAfter(
      this.scheduler,
      this.config.renewDeadlineMs,
      signal,
      `lease request abandoned after the renew deadline of ${this.config.renewDeadlineMs} ms`,
    );
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const onAbort = () => {
        timer.unsubscribe();
        resolve();
      };
      const timer = this.scheduler.schedule(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function timeMs(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const ms = new Date(value as string | number | Date).getTime();
  return Number.isNaN(ms) ? null : ms;
}

/** Creates an elector; call start() to campaign and stop() to step down and release. */
export function createLeaderElector(options: LeaderElectionOptions): LeaderElector {
  return new LeaderElector(options);
}
