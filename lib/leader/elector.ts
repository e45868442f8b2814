import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  CoordinationV1Api,
  Observable as ClientObservable,
  V1MicroTime,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Lease,
} from '@kubernetes/client-node';
import { asyncScheduler, BehaviorSubject, distinctUntilChanged, type Observable, type SchedulerLike } from 'rxjs';
import type { Logger } from 'pino';
import { ConfigurationError, requirePositiveDuration } from '../core/index.js';
import { classifyError, errorMessage, shareConnections } from '../kube/index.js';

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
}

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
  if (!options.kubeConfig) throw new ConfigurationError('leaderElection.kubeConfig', 'is required');
  const name = (option: string, value: unknown): string => {
    if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(option, `must be a non-empty string, got ${JSON.stringify(value)}`);
    return value;
  };
  const leaseDurationMs = requirePositiveDuration('leaderElection.leaseDurationMs', options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs);
  const renewDeadlineMs = requirePositiveDuration('leaderElection.renewDeadlineMs', options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs);
  const retryPeriodMs = requirePositiveDuration('leaderElection.retryPeriodMs', options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs);
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

/**
 * OB4: Lease-based leader election, as client-go's leaderelection does it. Candidates try every
 * retry period; the holder renews every retry period; a lease held by another is taken only
 * after it has not changed for its full duration, measured on this instance's clock (no trust
 * in other clocks). All writes are conditional on the read resourceVersion, so two candidates
 * cannot both win (409 = lost the race).
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
  private readonly api: CoordinationV1Api;
  private readonly scheduler: SchedulerLike;
  private readonly random: () => number;
  private readonly log: Logger | undefined;
  private stopping: AbortController | undefined;
  private loop: Promise<void> | undefined;
  /** The last lease we read or wrote, and when (our clock) its record last changed. */
  private observed: { lease: V1Lease; record: string; at: number } | undefined;

  constructor(options: LeaderElectionOptions) {
    this.config = leaderElectionConfig(options);
    this.api = shareConnections(options.kubeConfig).makeApiClient(CoordinationV1Api);
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
    while (!stop.aborted) {
      const startedAt = this.scheduler.now();
      const attempt = await this.tryAcquireOrRenew(stop);
      if (stop.aborted) break;
      if (attempt === 'acquired') {
        await this.lead(startedAt, stop);
      } else {
        await this.sleep(this.config.retryPeriodMs * (1 + LEADER_JITTER_FACTOR * this.random()), stop);
      }
    }
  }

  /**
   * One leadership term: renew every retry period until stopped, lost, or the renew deadline
   * passes. The deadline counts from the start of the last successful attempt, which is before
   * the server stored the renewal, so it always falls before anyone else sees the lease expire.
   */
  private async lead(acquiredAt: number, stop: AbortSignal): Promise<void> {
    const term = new AbortController();
    const signal = AbortSignal.any([stop, term.signal]);
    let deadline: { unsubscribe(): void } | undefined;
    const armDeadline = (renewedAt: number) => {
      deadline?.unsubscribe();
      const delay = Math.max(0, renewedAt + this.config.renewDeadlineMs - this.scheduler.now());
      deadline = this.scheduler.schedule(() => {
        this.setLeader(false, `no renewal within the renew deadline of ${this.config.renewDeadlineMs} ms`);
        term.abort();
      }, delay);
    };
    armDeadline(acquiredAt);
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
      if (!stop.aborted) this.setLeader(false, 'lost the lease');
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const { leaseName: name, leaseNamespace: namespace, identity } = this.config;
    const options = this.requestOptions(signal);
    const now = this.scheduler.now();
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name, namespace }, options);
    } catch (err) {
      if (classifyError(err) !== 'notFound') return this.failed('read', err, signal);
      try {
        const created = await this.api.createNamespacedLease({ namespace, body: this.leaseBody(undefined, now) }, options);
        this.observe(created, this.scheduler.now());
        return 'acquired';
      } catch (createErr) {
        return classifyError(createErr) === 'conflict' ? 'heldByOther' : this.failed('create', createErr, signal);
      }
    }
    this.observe(current, now);
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== identity && !this.observedExpired(now)) return 'heldByOther';
    try {
      const updated = await this.api.replaceNamespacedLease({ name, namespace, body: this.leaseBody(current, now) }, options);
      this.observe(updated, this.scheduler.now());
      return 'acquired';
    } catch (err) {
      // 409: someone wrote the lease since we read it. Not ours this round; the next read tells who holds it.
      return classifyError(err) === 'conflict' ? 'failed' : this.failed('update', err, signal);
    }
  }

  /** client-go's ReleaseOnCancel: an empty holder and a 1 s duration so the next candidate takes over at once. */
  private async release(): Promise<void> {
    const lease = this.observed?.lease;
    if (!lease || lease.spec?.holderIdentity !== this.config.identity) return;
    const now = new V1MicroTime(this.scheduler.now());
    const body: V1Lease = {
      ...lease,
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    try {
      const released = await this.api.replaceNamespacedLease(
        { name: this.config.leaseName, namespace: this.config.leaseNamespace, body },
        this.requestOptions(AbortSignal.timeout(this.config.renewDeadlineMs)),
      );
      this.observe(released, this.scheduler.now());
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

  // Expiry is judged by when *we* saw the record change, never by the holder's timestamps (clock skew).
  private observe(lease: V1Lease, at: number): void {
    const record = JSON.stringify([lease.spec?.holderIdentity, String(lease.spec?.renewTime), lease.spec?.leaseTransitions]);
    if (this.observed?.record !== record) this.observed = { lease, record, at };
    else this.observed = { ...this.observed, lease };
  }

  private observedExpired(now: number): boolean {
    const seconds = this.observed?.lease.spec?.leaseDurationSeconds ?? Math.ceil(this.config.leaseDurationMs / 1000);
    return this.observed === undefined || this.observed.at + seconds * 1000 <= now;
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

  // A request never outlives the renew deadline, the term or stop().
  private requestOptions(signal: AbortSignal): ConfigurationOptions {
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(this.config.renewDeadlineMs)]);
    const middleware: ObservableMiddleware = {
      pre: (ctx) => {
        ctx.setSignal(bounded);
        return new ClientObservable(Promise.resolve(ctx));
      },
      post: (res) => new ClientObservable(Promise.resolve(res)),
    };
    return { middleware: [middleware], middlewareMergeStrategy: 'append' };
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

/** Creates an elector; call start() to campaign and stop() to step down and release. */
export function createLeaderElector(options: LeaderElectionOptions): LeaderElector {
  return new LeaderElector(options);
}
