import type { V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { UpdateControl, type Operator, type RegisteredController } from '../../lib/index.js';
import type { ResourceClient } from '../../lib/kube/index.js';
import type { ShardStatus } from '../../lib/sharding/index.js';
import { eventually, startTestCluster, type TestCluster } from '../../lib/testing/index.js';
import { overlaps, type TimelineRun } from './timeline.js';

// Short durations so the test takes seconds (leases are written as whole seconds: 2 s).
const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;
const GLOBAL = 20;
const SHARDED = 60;

interface Run extends TimelineRun {
  readonly controller: 'cluster-wide' | 'per-resource';
  readonly value: number;
}

interface Replica {
  readonly identity: string;
  readonly operator: Operator;
  readonly sharded: RegisteredController;
  /** [from, to) of each term as leader, by the test's clock. */
  readonly terms: Array<{ from: number; to: number }>;
  shard: ShardStatus | undefined;
}

describe('sharding with leader election in one Operator (OB4, SH1–SH4)', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  let configMaps: ResourceClient<V1ConfigMap>;
  beforeEach(async () => {
    cluster = await startTestCluster();
    configMaps = cluster.client.resource<V1ConfigMap>({ ...CONFIGMAPS, namespaced: true });
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('OB4, SH2, SH3: the cluster-wide controller runs on the leader only, the sharded one on every member; when the leader stops, the first moves to the new leader while the shards rebalance, nothing lost, no resource run on two replicas at once', async () => {
    const names = (role: string, n: number) => Array.from({ length: n }, (_, i) => `${role}-${i}`);
    for (const name of [...names('global', GLOBAL), ...names('sharded', SHARDED)]) {
      await configMaps.create({ metadata: { name, namespace: 'default', labels: { role: name.split('-')[0]! } }, data: { value: '0' } });
    }
    const runs: Run[] = [];
    const replica = (identity: string): Replica => {
      const operator = cluster.operator({ leaderElection: { leaseName: 'leader-and-shards', leaseNamespace: 'default', identity, ...TIMING } });
      const reconciler = (controller: Run['controller']) => ({
        async reconcile(configMap: V1ConfigMap) {
          const start = Date.now();
          await sleep(5 + Math.floor(Math.random() * 15)); // long enough for two replicas' runs to overlap if the rules failed
          runs.push({ member: identity, controller, resource: configMap.metadata!.name!, start, end: Date.now(), value: Number(configMap.data?.['value']) });
          return UpdateControl.noUpdate<V1ConfigMap>();
        },
      });
      operator.register<V1ConfigMap>(reconciler('cluster-wide'), { name: 'cluster-wide', resource: CONFIGMAPS, labelSelector: { matchLabels: { role: 'global' } } });
      const sharded = operator.register<V1ConfigMap>(reconciler('per-resource'), {
        name: 'per-resource',
        resource: CONFIGMAPS,
        labelSelector: { matchLabels: { role: 'sharded' } },
        sharding: { identity, namespace: 'default', ...TIMING },
      });
      const r: Replica = { identity, operator, sharded, terms: [], shard: undefined };
      operator.isLeader$.subscribe((leading) => {
        if (leading) r.terms.push({ from: Date.now(), to: Infinity });
        else if (r.terms.at(-1)?.to === Infinity) r.terms.at(-1)!.to = Date.now();
      });
      sharded.shardStatus$!.subscribe((status) => (r.shard = status));
      return r;
    };
    const replicas = ['a', 'b', 'c'].map(replica);
    await Promise.all(replicas.map((r) => r.operator.start()));

    const leaderOf = (among: readonly Replica[]) => among.filter((r) => r.terms.at(-1)?.to === Infinity);
    const settledOn = (among: readonly Replica[]) =>
      among.every((r) => r.shard?.member && r.shard.settled && r.shard.members.join() === among.map((m) => m.identity).sort().join());
    /** The run of each resource that started last, for one controller. */
    const latest = (controller: Run['controller']) => {
      const last = new Map<string, Run>();
      for (const run of runs) if (run.controller === controller && (last.get(run.resource)?.start ?? -1) <= run.start) last.set(run.resource, run);
      return last;
    };
    await eventually('one leader, three members settled', () => leaderOf(replicas).length === 1 && settledOn(replicas), 20_000);
    await eventually('every ConfigMap reconciled', () => latest('cluster-wide').size === GLOBAL && latest('per-resource').size === SHARDED, 20_000);

    const [leader] = leaderOf(replicas);
    expect(new Set(runs.filter((r) => r.controller === 'cluster-wide').map((r) => r.member)), 'cluster-wide runs on the leader only').to.deep.equal(new Set([leader!.identity]));
    const spread = (among: readonly Replica[]) => among.map((r) => [...latest('per-resource').values()].filter((run) => run.member === r.identity).length);
    await eventually('the sharded runs settled on three members', () => spread(replicas).every((n) => n > 0) && spread(replicas).reduce((x, y) => x + y) === SHARDED, 10_000);

    // An update storm; the leader stops in the middle of it (releases its leader Lease and deletes its member Lease).
    const finalValue = new Map<string, number>();
    const stormStart = Date.now();
    let stoppedAt = 0;
    let stopping: Promise<void> | undefined;
    const writers = 4;
    const all = [...names('global', GLOBAL), ...names('sharded', SHARDED)];
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        const mine = all.filter((_, i) => i % writers === writer); // each writer its own ConfigMaps: its last write is what is stored
        while (Date.now() - stormStart < 4_000) {
          const name = mine[Math.floor(Math.random() * mine.length)]!;
          const value = (finalValue.get(name) ?? 0) + 1;
          finalValue.set(name, value);
          await configMaps.mergePatch({ name, namespace: 'default' }, { data: { value: String(value) } });
          if (!stopping && Date.now() - stormStart > 1_500) {
            stoppedAt = Date.now();
            stopping = leader!.operator.stop();
          }
        }
      }),
    );
    await stopping;
    const survivors = replicas.filter((r) => r !== leader);
    await eventually('a new leader, two members settled', () => leaderOf(survivors).length === 1 && settledOn(survivors), 20_000);
    const [next] = leaderOf(survivors);

    // Nothing lost: the last run of every ConfigMap, in either controller, saw its last value.
    const stale = () =>
      [...finalValue].filter(([name, value]) => latest(name.startsWith('global') ? 'cluster-wide' : 'per-resource').get(name)?.value !== value).map(([name]) => name);
    await eventually(() => `every ConfigMap's last run seeing its last update (stale: ${stale().slice(0, 5).join(', ')})`, () => stale().length === 0, 20_000);

    // The cluster-wide controller: only ever on a replica while it led, and never on two replicas at once (over all its resources).
    const global = runs.filter((r) => r.controller === 'cluster-wide');
    const outsideTerm = global.filter((run) => !replicas.find((r) => r.identity === run.member)!.terms.some((t) => t.from <= run.start && run.end <= t.to));
    expect(outsideTerm.map((r) => `${r.member} ${r.resource} ${r.start}`), 'cluster-wide runs outside a leadership term').to.deep.equal([]);
    expect(global.filter((r) => r.start > stoppedAt + 100 && r.member === leader!.identity)).to.deep.equal([]);
    expect(global.filter((r) => r.start > stoppedAt).map((r) => r.member)).to.include(next!.identity);
    const globalOverlaps = overlaps(global.map((r) => ({ ...r, resource: 'cluster-wide' })));
    expect(globalOverlaps, globalOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);

    // The sharded controller: rebalanced over the two survivors, each resource on one at a time.
    expect(spread(survivors).every((n) => n > 0)).to.equal(true);
    const owners = new Set([...latest('per-resource').values()].filter((run) => run.start > stoppedAt).map((run) => run.member));
    expect(owners).to.not.include(leader!.identity);
    const sharded = runs.filter((r) => r.controller === 'per-resource');
    const shardedOverlaps = overlaps(sharded);
    expect(shardedOverlaps, shardedOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);
    console.log(`      ${runs.length} runs (${global.length} cluster-wide, ${sharded.length} sharded); leader ${leader!.identity} → ${next!.identity}; 0 overlaps`);
  });
});
