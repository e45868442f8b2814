import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { BehaviorSubject, merge, Subject, takeUntil, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { LeaseLostError, resourceEvent, type ResourceEvent, type ResourceID } from '../../lib/core/index.js';
import { leaseGatedClient } from '../../lib/controller/lease-gate.js';
import { gainedResources, memberLost, reportedToShard, runnableOnly } from '../../lib/controller/sharded.js';
import { createKubeClient } from '../../lib/kube/index.js';
import { LeaderElector, type LeaseClient } from '../../lib/leader/index.js';
import { reconcileEach, type RunContext } from '../../lib/processing/index.js';
import { Shard, shardingConfig } from '../../lib/sharding/index.js';
import { memberLeaseName } from '../../lib/sharding/shard.js';
import { advance, FakeLeaseServer, type Link, unusedKubeConfig } from '../leader/fake-leases.js';
import { FreezableScheduler, type WakeOrder } from './freeze.js';
import { overlaps, type TimelineRun } from './timeline.js';

const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const RUN_MS = 20;
const RESCHEDULE_MS = 150;
const ids: ResourceID[] = Array.from({ length: 60 }, (_, i) => ({ name: `r${i}`, namespace: 'default' }));
const objects = ids.map((id) => ({ metadata: { name: id.name, namespace: id.namespace } }));

/** A member's Lease client whose answers and watch events reach it only while it is not frozen. */
function frozenLeases(leases: LeaseClient, clock: FreezableScheduler): LeaseClient {
  return {
    create: (lease, options) => clock.arrive(leases.create(lease, options)),
    replace: (lease, options) => clock.arrive(leases.replace(lease, options)),
    get: (ref, options) => clock.arrive(leases.get(ref, options)),
    find: (ref, options) => clock.arrive(leases.find(ref, options)),
    delete: (ref, options) => clock.arrive(leases.delete(ref, options)),
    listWatch: {
      ...leases.listWatch,
      list: (scope, request) => clock.arrive(leases.listWatch.list(scope, request)),
      watch: (request, onEvent, onClose) =>
        leases.listWatch.watch(
          request,
          (type, lease) => clock.deliver(() => onEvent(type, lease)),
          (err?: unknown) => clock.deliver(() => onClose(err)),
        ),
    },
  };
}

function unusedClient() {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return createKubeClient(kc);
}

interface Member {
  readonly identity: string;
  readonly clock: FreezableScheduler;
  readonly shard: Shard;
  readonly input: Subject<ResourceEvent>;
}

/**
 * Members of one shard group, each with the sharded pipeline as the Controller assembles it and
 * its own freezable view of one virtual clock. Every run asks to run again after RESCHEDULE_MS, so
 * reschedule timers are always pending; every run start is recorded.
 */
function group() {
  const base = new TestScheduler(() => undefined);
  const server = new FakeLeaseServer(base, 5);
  const links = new Map<string, Link>();
  const runs: TimelineRun[] = [];
  const members = new Map<string, Member>();
  const subscriptions: Subscription[] = [];
  const stopping = new Subject<void>();

  const join = (identity: string): Member => {
    links.set(identity, 'up');
    const clock = new FreezableScheduler(base);
    const shard = new Shard(shardingConfig('web', { identity, ...TIMING }), {
      client: unusedClient(),
      scheduler: clock,
      leases: frozenLeases(
        server.client(() => links.get(identity) ?? 'up'),
        clock,
      ),
    });
    const run = (id: ResourceID, ctx: RunContext) =>
      new Promise<{ rescheduleAfter: number }>((resolve) => {
        const record = { member: identity, resource: id.name, start: base.now(), end: Infinity };
        runs.push(record);
        const finish = () => {
          timer.unsubscribe();
          record.end = base.now();
          resolve({ rescheduleAfter: RESCHEDULE_MS });
        };
        const timer = clock.schedule(finish, RUN_MS);
        ctx.signal.addEventListener('abort', finish, { once: true });
      });
    const input = new Subject<ResourceEvent>();
    subscriptions.push(
      merge(input.pipe(runnableOnly(shard)), gainedResources(shard, () => objects, 'sharding').pipe(takeUntil(stopping)))
        .pipe(
          reconcileEach(reportedToShard(shard, run), {
            scheduler: clock,
            retry: false,
            exists: (id) => shard.runnable(id),
            abortRuns$: memberLost(shard),
          }),
        )
        .subscribe(),
    );
    shard.start();
    const member = { identity, clock, shard, input };
    members.set(identity, member);
    return member;
  };

  const storm = (member: Member) => {
    for (const id of ids) member.input.next(resourceEvent(id.name, 'modified'));
  };

  const stopAll = async () => {
    stopping.next();
    for (const name of links.keys()) links.set(name, 'up');
    const stops = Promise.all([...members.values()].map((m) => m.shard.stop()));
    await advance(base, 3_000);
    await stops;
    for (const s of subscriptions) s.unsubscribe();
  };

  return { base, server, links, runs, join, storm, stopAll };
}

describe('sharding: a member frozen past its lease (SH1, SH3)', function () {
  this.timeout(60_000);

  for (const order of ['due', 'latest-first'] as const satisfies readonly WakeOrder[]) {
    it(`SH1, SH3: a member frozen past its lease, woken with every due timer fired at once (${order}), starts no run before its next successful renewal and never runs a resource another member runs`, async () => {
      const { base, server, runs, join, storm, stopAll } = group();
      const a = join('a');
      const b = join('b');
      await advance(base, 3_000);
      storm(a);
      storm(b);
      await advance(base, 2_000);
      expect(runs.filter((r) => r.member === 'a').length, 'a runs its share').to.be.greaterThan(0);
      expect(runs.filter((r) => r.member === 'b').length, 'b runs its share').to.be.greaterThan(0);

      // Frozen 230 ms after a renewal: its reschedule timers, its renew deadline and its next renewal all come due in the pause.
      const lastWrite = server.writes.filter((w) => w.name === memberLeaseName('web', 'a')).at(-1)!.at;
      await advance(base, lastWrite + 230 - base.now());
      a.clock.freeze();
      await advance(base, TIMING.leaseDurationMs + 2_000);
      expect(runs.filter((r) => r.member === 'b' && r.start > base.now() - 1_000).length, 'b took every resource over').to.be.greaterThan(
        ids.length / 2,
      );

      const wake = base.now();
      a.clock.thaw(order);
      storm(a);
      await advance(base, 4_000);

      const renewal = server.writes.find((w) => w.name === memberLeaseName('web', 'a') && w.at >= wake)?.at;
      expect(renewal, 'a renewed after waking').to.not.equal(undefined);
      const early = runs.filter((r) => r.member === 'a' && r.start >= wake && r.start <= renewal!);
      expect(
        early.map((r) => `${r.resource}@${r.start}`),
        `runs a started between waking at ${wake} and renewing at ${renewal}`,
      ).to.deep.equal([]);
      expect(overlaps(runs).slice(0, 5)).to.deep.equal([]);
      expect(
        runs.filter((r) => r.member === 'a' && r.start > renewal!).length,
        'a runs its share again after the handover',
      ).to.be.greaterThan(0);
      await stopAll();
    });
  }

  it('SH1: a member frozen past its lease refuses, unsent, every write of a run on its behalf until it renews', async () => {
    const { base, server, join, stopAll } = group();
    const a = join('a');
    await advance(base, 1_000);
    const sent: string[] = [];
    const client = leaseGatedClient({ ...unusedClient(), request: async (req) => void sent.push(`${req.method} ${req.path}`) }, () =>
      a.shard.holdsLease(),
    );
    await client.request({ method: 'PATCH', path: '/api/v1/namespaces/default/configmaps/r1' });
    expect(sent).to.have.length(1);

    const lastWrite = server.writes.filter((w) => w.name === memberLeaseName('web', 'a')).at(-1)!.at;
    await advance(base, lastWrite + 100 - base.now());
    a.clock.freeze();
    await advance(base, TIMING.leaseDurationMs);
    // Woken: before any of its timers has fired, a write is refused and the member has left.
    const refused = await client.request({ method: 'PATCH', path: '/api/v1/namespaces/default/configmaps/r1' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(LeaseLostError);
    expect((refused as LeaseLostError).message, 'the refused write named').to.match(
      /^PATCH \/api\/v1\/namespaces\/default\/configmaps\/r1: refused/,
    );
    expect(a.shard.status.member).to.equal(false);
    expect(await client.request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/r1' }).then(() => 'read')).to.equal('read');
    expect(sent).to.have.length(2);
    a.clock.thaw('latest-first');
    await advance(base, 2_000);
    expect(a.shard.holdsLease(), 'renewed again').to.equal(true);
    await stopAll();
  });
});

describe('leader election: a leader frozen past its lease (OB4)', function () {
  this.timeout(60_000);

  for (const order of ['due', 'latest-first'] as const satisfies readonly WakeOrder[]) {
    it(`OB4: a leader frozen past its lease, woken with every due timer fired at once (${order}), starts no run and steps down before anything else`, async () => {
      const base = new TestScheduler(() => undefined);
      const server = new FakeLeaseServer(base, 5);
      let link: Link = 'up';
      const clock = new FreezableScheduler(base);
      const elector = new LeaderElector({
        kubeConfig: unusedKubeConfig,
        leaseName: 'op',
        leaseNamespace: 'default',
        identity: 'a',
        ...TIMING,
        scheduler: clock,
        leaseClient: server.client(() => link),
        random: () => 0.5,
      });
      const other = new LeaderElector({
        kubeConfig: unusedKubeConfig,
        leaseName: 'op',
        leaseNamespace: 'default',
        identity: 'b',
        ...TIMING,
        scheduler: base,
        leaseClient: server.client(() => 'up'),
        random: () => 0.5,
      });
      // The controller's assembly for a leader-elected controller: active$ from leadership, each start judged on the clock.
      const leading$ = new BehaviorSubject(false);
      elector.isLeader$.subscribe(leading$);
      const starts: number[] = [];
      const input = new Subject<ResourceEvent>();
      const subscription = input
        .pipe(
          reconcileEach(
            () => {
              starts.push(base.now());
              return new Promise((resolve) => clock.schedule(() => resolve({ rescheduleAfter: RESCHEDULE_MS }), RUN_MS));
            },
            { scheduler: clock, retry: false, active$: leading$, mayStart: () => elector.holdsLease() },
          ),
        )
        .subscribe();
      elector.start();
      await advance(base, 1_000);
      other.start();
      for (const id of ids) input.next(resourceEvent(id.name, 'modified'));
      await advance(base, 1_000);
      expect(elector.isLeader).to.equal(true);
      expect(starts.length).to.be.greaterThan(0);

      clock.freeze();
      link = 'dead';
      await advance(base, TIMING.leaseDurationMs + 2_000);
      expect(server.holder, 'the other took the lease over').to.equal('b');
      const wake = base.now();
      const leadership: boolean[] = [];
      elector.isLeader$.subscribe((value) => leadership.push(value));
      link = 'up';
      clock.thaw(order);
      for (const id of ids) input.next(resourceEvent(id.name, 'modified'));
      await advance(base, 2_000);
      expect(
        starts.filter((at) => at >= wake),
        'runs started after waking',
      ).to.deep.equal([]);
      expect(leadership).to.deep.equal([true, false]);
      expect(
        server.writes.filter((w) => w.at >= wake && w.holder === 'a'),
        'lease writes as holder after waking',
      ).to.deep.equal([]);
      subscription.unsubscribe();
      const stops = Promise.all([elector.stop(), other.stop()]);
      await advance(base, 3_000);
      await stops;
    });
  }
});
