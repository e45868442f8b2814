import type { V1Lease } from '@kubernetes/client-node';
// From its own module: client-node's entry point loads the whole generated API.
import { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
import { asyncScheduler, BehaviorSubject, merge, Subject, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from 'pino';
import { resourceKey, type ResourceID } from '../core/index.js';
import { builtinResources, classifyError, errorMessage, type KubeClient } from '../kube/index.js';
import { abortAfter, kubeLeaseClient, type LeaseClient } from '../leader/index.js';
import { Informer } from '../cache/index.js';
import type { ShardingConfig } from './config.js';
import {
  acknowledgeable,
  acksObserved,
  currentView,
  initialHandover,
  isOwned,
  isRunnable,
  viewChanged,
  viewOf,
  type HandoverState,
} from './handover.js';
import { acksOf, liveMembers, observeLeases, SHARD_GROUP_LABEL, SHARD_VIEW_ANNOTATION, type MemberObservation } from './members.js';
import { hash53 } from './rendezvous.js';

export interface ShardStatus {
  readonly identity: string;
  /** Renewed its member Lease within the renew deadline (SH1); runs nothing otherwise. */
  readonly member: boolean;
  /** The live members of the current view, sorted. */
  readonly members: readonly string[];
  readonly viewId: string | undefined;
  /** Every member acknowledged the current view: resources that moved have been handed over. */
  readonly settled: boolean;
  /** Views whose handover completed since start. */
  readonly handovers: number;
}

/** Emitted when the set of resources this member may run changes. */
export interface ShardChange {
  /** Whether `id` was runnable before the change (gained = runnable now and not before). */
  wasRunnable(id: ResourceID): boolean;
}

export interface ShardDeps {
  /** The client every request goes through (an Operator passes its own: one connection pool). */
  readonly client: KubeClient;
  readonly logger?: Logger | undefined;
  /** Clock and timers (default asyncScheduler). */
  readonly scheduler?: SchedulerLike | undefined;
  /** How the member Leases are written, listed and watched (default: through `client`); tests pass a fake server in virtual time. */
  readonly leases?: LeaseClient | undefined;
}

/**
 * A member Lease unchanged for this many lease durations is deleted by a live member: its holder
 * stopped acting before the first duration ran out (SH1), and a replica that joins later would
 * otherwise count it live for a duration of its own clock, holding every handover that long.
 */
const DEAD_LEASE_DURATIONS = 2;

/** The fraction of a retry period within which the group's watch must deliver our own renewal, or it is dead. */
const RENEWAL_ECHO_SLACK = 0.25;

/** The member Lease's name: DNS-safe, one per (group, identity). */
export function memberLeaseName(group: string, identity: string): string {
  const safeGroup =
    group
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'controller';
  return `rxkube-shard-${safeGroup}-${hash53(identity).toString(36)}`;
}

/**
 * One replica's membership of a sharded controller (SH1–SH4): it holds and renews its own member
 * Lease, watches the group's Leases to know the live members, owns the resources rendezvous
 * hashing gives it over them, and hands resources over through acknowledgements written on the
 * Leases (see handover.ts). The controller asks `runnable(id)` before each run, reports runs
 * through `runStarted`, and re-triggers the resources `changes$` says it gained.
 */
export class Shard {
  readonly status$: Observable<ShardStatus>;
  readonly changes$: Observable<ShardChange>;

  private readonly leases: LeaseClient;
  private informer: Informer<V1Lease>;
  private readonly scheduler: SchedulerLike;
  private readonly log: Logger | undefined;
  private readonly leaseName: string;
  private readonly statusSubject: BehaviorSubject<ShardStatus>;
  private readonly changes = new Subject<ShardChange>();
  private state: HandoverState;
  private members = new Map<string, MemberObservation>();
  private readonly inFlight = new Map<string, number>();
  /** Names of dead members' Leases with a delete under way. */
  private readonly deleting = new Set<string>();
  private member = false;
  /** When the last successful renewal started (the renew deadline counts from it). */
  private renewedAt = 0;
  /** Our last stored renewal: its resourceVersion, and when its request started. */
  private written: { readonly resourceVersion: string | undefined; readonly startedAt: number } | undefined;
  /**
   * The start of the latest renewal of ours the group's watch has delivered back: every change of
   * the Leases stored before that renewal has been seen by then. Members are judged expired at
   * this time, never at `now` — a replica that did not watch (frozen, or a watch that lags) has
   * not seen the renewals it missed, and would count live members dead.
   */
  private watchedUntil = Number.NEGATIVE_INFINITY;
  /**
   * The start of the renewal that made us a member (again). Until the watch has delivered one of
   * ours from then on, what we know of the group may be from before a pause or a cut — acks of an
   * old view among them — and no view or gate is judged from it.
   */
  private joinedAt = Number.POSITIVE_INFINITY;
  private handovers = 0;
  /** The view id to write on our Lease ('' until the first view we drained for). */
  private ack = '';
  private lease: V1Lease | undefined;
  private stopping: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private deadline: Subscription | undefined;
  private echo: Subscription | undefined;
  private subscription: Subscription | undefined;

  constructor(
    readonly config: ShardingConfig,
    deps: ShardDeps,
  ) {
    this.scheduler = deps.scheduler ?? asyncScheduler;
    this.log = deps.logger?.child({ shard: config.group, identity: config.identity });
    this.leases = deps.leases ?? kubeLeaseClient(deps.client);
    this.informer = this.membersInformer();
    this.leaseName = memberLeaseName(config.group, config.identity);
    this.state = initialHandover(config.identity);
    this.statusSubject = new BehaviorSubject(this.snapshot());
    this.status$ = this.statusSubject.asObservable();
    this.changes$ = this.changes.asObservable();
  }

  get identity(): string {
    return this.config.identity;
  }

  /** The membership as it stands now. */
  get status(): ShardStatus {
    return this.statusSubject.value;
  }

  /** Whether the member Lease was renewed within the renew deadline (SH1). */
  get isMember(): boolean {
    return this.holdsLease();
  }

  /**
   * SH1 at the moment of a decision: a member whose last successful renewal started a renew
   * deadline ago or more leaves the group now and answers false, whether or not the deadline's
   * timer has fired. A process frozen past its lease wakes with retry, reschedule and deadline
   * timers all due at once, fired in whatever order the runtime picks; each of them asks this
   * (through `runnable`) before it acts.
   */
  holdsLease(): boolean {
    if (!this.member) return false;
    if (this.scheduler.now() - this.renewedAt < this.config.renewDeadlineMs) return true;
    this.leave(`no renewal within ${this.config.renewDeadlineMs} ms`);
    return false;
  }

  /** Whether this member may start a run of `id` now (SH1–SH3). */
  runnable(id: ResourceID): boolean {
    return this.holdsLease() && isRunnable(this.state, resourceKey(id));
  }

  /** Whether `id` is this member's in its current view (for metrics: owned resources). */
  owns(id: ResourceID): boolean {
    return this.holdsLease() && isOwned(this.state, resourceKey(id));
  }

  /** Records a run of `id` in flight until the returned function is called (drains wait for it). */
  runStarted(id: ResourceID): () => void {
    const key = resourceKey(id);
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
      this.evaluate();
    };
  }

  start(): void {
    if (this.stopping) return;
    const stopping = new AbortController();
    this.stopping = stopping;
    this.watchMembers();
    this.loop = this.renewLoop(stopping.signal).catch((err: unknown) => {
      this.log?.error({ err: errorMessage(err) }, 'member lease loop failed');
      this.leave('the member lease loop failed');
    });
  }

  /**
   * Leaves the group: stops renewing and deletes the member Lease so the others take its
   * resources over at once. Call it after the controller has stopped and its runs have settled.
   */
  async stop(): Promise<void> {
    const stopping = this.stopping;
    if (!stopping) return;
    stopping.abort();
    this.wake?.();
    await this.loop;
    this.stopping = undefined;
    this.leave('stopped', true);
    this.subscription?.unsubscribe();
    this.informer.stop();
    this.echo?.unsubscribe();
    const bounded = this.bounded(new AbortController().signal);
    try {
      await this.leases.delete({ name: this.leaseName, namespace: this.config.namespace }, { signal: bounded.signal });
    } catch (err) {
      if (classifyError(err) !== 'notFound')
        this.log?.warn({ err: errorMessage(err) }, 'could not delete the member lease; it expires on its own');
    } finally {
      bounded.done();
    }
  }

  private membersInformer(): Informer<V1Lease> {
    return new Informer<V1Lease>({
      resource: builtinResources.lease,
      client: this.leases.listWatch,
      name: `shard-members:${this.config.group}`,
      namespaces: [this.config.namespace],
      labelSelector: { matchLabels: { [SHARD_GROUP_LABEL]: this.config.group } },
      scheduler: this.scheduler,
    });
  }

  /** Follows the group's Leases with the informer, judged once it has listed them all (a partial list is no view). */
  private watchMembers(): void {
    this.subscription = merge(this.informer.cacheAndEvents$, this.informer.synced$).subscribe(() => this.onLeases());
    this.informer.start();
  }

  /**
   * Our own renewal comes back through the group's watch within moments. One that has not, a
   * quarter of a retry period after it was stored, means the watch is a dead connection that never
   * ended (a network cut leaves those): the view would go stale — members that renew judged
   * expired, a dead one never seen to expire — so the informer is replaced by a new list and watch.
   */
  private expectEcho(): void {
    const written = this.lease?.metadata?.resourceVersion;
    if (written === undefined) return;
    this.echo?.unsubscribe();
    this.echo = this.scheduler.schedule(() => {
      if (!this.informer.hasSynced()) return; // a list under way (after a restart, or a slow one): it will show the renewal
      const seen = this.informer.store.get({ name: this.leaseName, namespace: this.config.namespace })?.metadata?.resourceVersion;
      if (seen === written || this.lease?.metadata?.resourceVersion !== written || !this.stopping || this.stopping.signal.aborted) return;
      this.log?.warn('the watch of the member Leases did not deliver our renewal; listing them again');
      this.subscription?.unsubscribe();
      this.informer.stop();
      this.informer = this.membersInformer();
      this.watchMembers();
    }, RENEWAL_ECHO_SLACK * this.config.retryPeriodMs);
  }

  private onLeases(): void {
    if (!this.informer.hasSynced()) return;
    this.members = observeLeases(this.members, this.informer.store.list(), this.scheduler.now());
    const own = this.informer.store.get({ name: this.leaseName, namespace: this.config.namespace });
    if (this.written !== undefined && own?.metadata?.resourceVersion === this.written.resourceVersion) {
      this.watchedUntil = Math.max(this.watchedUntil, this.written.startedAt);
    }
    this.evaluate();
  }

  /** Re-judges the view, the gate and our acknowledgement from what we know now. */
  private evaluate(): void {
    const before = this.state;
    if (this.holdsLease() && this.watchedUntil >= this.joinedAt) {
      this.state = viewChanged(this.state, viewOf(liveMembers(this.members, this.watchedUntil)));
      this.state = acksObserved(this.state, acksOf(this.members, this.watchedUntil));
      if (this.state.open !== before.open) this.handovers++;
      const ack = acknowledgeable(this.state, this.inFlight.keys());
      if (ack !== undefined && ack !== this.ack) {
        this.ack = ack;
        this.wake?.(); // write it now, not at the next renewal
      }
    }
    this.changed(before);
    this.deleteDeadLeases(this.watchedUntil);
    this.publish();
  }

  /** SH4: deletes, with its resourceVersion as precondition, each Lease seen unchanged for DEAD_LEASE_DURATIONS (until `watchedUntil`). */
  private deleteDeadLeases(now: number): void {
    if (!this.holdsLease()) return;
    for (const lease of this.informer.store.list()) {
      const name = lease.metadata?.name;
      const seen = this.members.get(lease.spec?.holderIdentity ?? '');
      if (!name || !seen || name === this.leaseName || this.deleting.has(name)) continue;
      if (seen.at + DEAD_LEASE_DURATIONS * seen.durationMs > now) continue;
      this.deleting.add(name);
      const resourceVersion = lease.metadata?.resourceVersion;
      // Bounded like every lease request: a delete that hangs would keep `deleting` set, and the Lease, for good.
      const bounded = this.bounded(this.stopping?.signal ?? new AbortController().signal);
      this.leases
        .delete(
          { name, namespace: this.config.namespace },
          { signal: bounded.signal, ...(resourceVersion === undefined ? {} : { preconditions: { resourceVersion } }) },
        )
        .then(
          () => this.log?.info({ lease: name, member: seen.identity }, 'deleted the lease of a member dead for two lease durations'),
          (err: unknown) => {
            // Renewed or deleted meanwhile: nothing to do.
            if (!['conflict', 'notFound'].includes(classifyError(err)))
              this.log?.debug({ err: errorMessage(err), lease: name }, 'could not delete a dead member lease');
          },
        )
        .finally(() => {
          bounded.done();
          this.deleting.delete(name);
        });
    }
  }

  private changed(before: HandoverState): void {
    if (before === this.state) return;
    const member = this.member;
    this.changes.next({ wasRunnable: (id) => member && isRunnable(before, resourceKey(id)) });
  }

  /** SH1: membership ends when no renewal succeeded within the renew deadline; nothing runs until it is renewed and handed over again. */
  private leave(reason: string, asked = false): void {
    this.deadline?.unsubscribe();
    if (!this.member) return;
    // Leaving on stop() is the plan; any other way is worth a warning.
    if (asked) this.log?.info({ reason }, 'left the shard group');
    else this.log?.warn({ reason }, 'left the shard group');
    const before = this.state;
    this.member = false;
    this.state = initialHandover(this.config.identity);
    this.ack = '';
    this.changes.next({ wasRunnable: (id) => isRunnable(before, resourceKey(id)) });
    this.publish();
  }

  private async renewLoop(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const startedAt = this.scheduler.now();
      const ack = this.ack;
      // A renewal that started a renew deadline ago (the process was frozen while it was on its way) proves nothing.
      if ((await this.renew(ack, stop)) && this.scheduler.now() - startedAt < this.config.renewDeadlineMs) {
        // The deadline counts from before the server stored the renewal, so it falls before anyone sees the lease expire.
        this.renewedAt = startedAt;
        this.written = { resourceVersion: this.lease?.metadata?.resourceVersion, startedAt };
        this.deadline?.unsubscribe();
        this.deadline = this.scheduler.schedule(
          () => this.leave(`no renewal within ${this.config.renewDeadlineMs} ms`),
          Math.max(0, this.config.renewDeadlineMs - (this.scheduler.now() - startedAt)),
        );
        this.expectEcho();
        if (!this.member) {
          this.member = true;
          this.joinedAt = startedAt;
          this.log?.info('joined the shard group');
        }
        // The watch may have delivered this renewal before its answer came: judge the members now.
        this.onLeases();
        if (!this.informer.hasSynced()) this.evaluate();
      }
      if (this.ack !== ack && !stop.aborted) continue;
      await this.sleep(this.config.retryPeriodMs, stop);
    }
  }

  private async renew(ack: string, stop: AbortSignal): Promise<boolean> {
    const bounded = this.bounded(stop);
    try {
      return await this.renewWithin(ack, bounded.signal, stop);
    } finally {
      bounded.done();
    }
  }

  private async renewWithin(ack: string, signal: AbortSignal, stop: AbortSignal): Promise<boolean> {
    const ref = { name: this.leaseName, namespace: this.config.namespace };
    try {
      const body = this.leaseBody(this.lease, ack);
      this.lease = this.lease === undefined ? await this.createOrRead(body, signal) : await this.leases.replace(body, { signal });
      if (this.lease.metadata?.annotations?.[SHARD_VIEW_ANNOTATION] !== ack) {
        this.lease = await this.leases.replace(this.leaseBody(this.lease, ack), { signal });
      }
      return true;
    } catch (err) {
      if (!stop.aborted) this.log?.warn({ err: errorMessage(err), kind: classifyError(err) }, 'member lease renewal failed');
      // 409 or gone: start again from what the server has.
      if (['conflict', 'notFound'].includes(classifyError(err)))
        this.lease = await this.leases.find(ref, { signal }).catch(() => undefined);
      return false;
    }
  }

  private async createOrRead(body: V1Lease, signal: AbortSignal): Promise<V1Lease> {
    try {
      return await this.leases.create(body, { signal });
    } catch (err) {
      if (classifyError(err) !== 'conflict') throw err;
      const existing = await this.leases.get({ name: this.leaseName, namespace: this.config.namespace }, { signal });
      return this.leases.replace(this.leaseBody(existing, body.metadata?.annotations?.[SHARD_VIEW_ANNOTATION] ?? ''), { signal });
    }
  }

  private leaseBody(current: V1Lease | undefined, ack: string): V1Lease {
    const now = new V1MicroTime(this.scheduler.now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...current?.metadata,
        name: this.leaseName,
        namespace: this.config.namespace,
        labels: { ...current?.metadata?.labels, [SHARD_GROUP_LABEL]: this.config.group },
        annotations: { ...current?.metadata?.annotations, [SHARD_VIEW_ANNOTATION]: ack },
      },
      spec: {
        ...current?.spec,
        holderIdentity: this.config.identity,
        leaseDurationSeconds: Math.ceil(this.config.leaseDurationMs / 1000),
        acquireTime: current?.spec?.acquireTime ?? now,
        renewTime: now,
      },
    };
  }

  private snapshot(): ShardStatus {
    const view = currentView(this.state);
    return {
      identity: this.config.identity,
      member: this.member,
      members: view?.members ?? [],
      viewId: view?.id,
      settled: view !== undefined && this.state.open === view,
      handovers: this.handovers,
    };
  }

  private publish(): void {
    const next = this.snapshot();
    const prev = this.statusSubject.value;
    if (prev.member !== next.member || prev.viewId !== next.viewId || prev.settled !== next.settled || prev.handovers !== next.handovers) {
      this.statusSubject.next(next);
    }
  }

  /** A request never outlives the renew deadline: one that hangs is abandoned and the next renewal opens a new one. */
  private bounded(signal: AbortSignal): { signal: AbortSignal; done: () => void } {
    return abortAfter(
      this.scheduler,
      this.config.renewDeadlineMs,
      signal,
      `member lease request abandoned after the renew deadline of ${this.config.renewDeadlineMs} ms`,
    );
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const finish = () => {
        timer.unsubscribe();
        this.wake = undefined;
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = this.scheduler.schedule(finish, ms);
      this.wake = finish;
      signal.addEventListener('abort', finish, { once: true });
    });
  }
}
