import type { V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { UpdateControl, type Operator, type RegisteredController } from '../../lib/index.js';
import type { ResourceClient } from '../../lib/kube/index.js';
import type { ShardStatus } from '../../lib/sharding/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
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

/** The run of each resource that started last, for one controller. */
function latest(runs: readonly Run[], controller: Run['controller']): Map<string, Run> {
  const last = new Map<string, Run>();
  for (const run of runs)
    if (run.controller === controller && (last.get(run.resource)?.start ?? -1) <= run.start) last.set(run.resource, run);
  return last;
}

/** ConfigMaps whose last run did not see their last update (`global-*` are the cluster-wide controller's). */
function stale(finalValue: ReadonlyMap<string, number>, runs: readonly Run[]): string[] {
  const last = { 'cluster-wide': latest(runs, 'cluster-wide'), 'per-resource': latest(runs, 'per-resource') };
  return [...finalValue]
    .filter(([name, value]) => last[name.startsWith('global') ? 'cluster-wide' : 'per-resource'].get(name)?.value !== value)
    .map(([name]) => name);
}

/**
 * Bumps `data.value` of random ConfigMaps of `names` for `ms`, four writers each on its own
 * ConfigMaps (so the last value one wrote is the value stored); `tick` runs after every write.
 * Resolves with each ConfigMap's last value.
 */
async function updateStorm(
  configMaps: ResourceClient<V1ConfigMap>,
  names: readonly string[],
  ms: number,
  tick: (elapsedMs: number) => void,
): Promise<Map<string, number>> {
  const finalValue = new Map<string, number>();
  const start = Date.now();
  const writers = 4;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      const mine = names.filter((_, i) => i % writers === writer);
      while (Date.now() - start < ms) {
        const name = mine[Math.floor(Math.random() * mine.length)];
        const value = (finalValue.get(name) ?? 0) + 1;
        finalValue.set(name, value);
        await configMaps.mergePatch({ name, namespace: 'default' }, { data: { value: String(value) } });
        tick(Date.now() - start);
      }
    }),
  );
  return finalValue;
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
      await configMaps.create({ metadata: { name, namespace: 'default', labels: { role: name.split('-')[0] } }, data: { value: '0' } });
    }
    const runs: Run[] = [];
    const replica = (identity: string): Replica => {
      const operator = cluster.operator({
        leaderElection: { leaseName: 'leader-and-shards', leaseNamespace: 'default', identity, ...TIMING },
      });
      const reconciler = (controller: Run['controller']) => ({
        async reconcile(configMap: V1ConfigMap) {
          const start = Date.now();
          await sleep(5 + Math.floor(Math.random() * 15)); // long enough for two replicas' runs to overlap if the rules failed
          runs.push({
            member: identity,
            controller,
            resource: configMap.metadata!.name!,
            start,
            end: Date.now(),
            value: Number(configMap.data?.['value']),
          });
          return UpdateControl.noUpdate<V1ConfigMap>();
        },
      });
      operator.register<V1ConfigMap>(reconciler('cluster-wide'), {
        name: 'cluster-wide',
        resource: CONFIGMAPS,
        labelSelector: { matchLabels: { role: 'global' } },
      });
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
      among.every(
        (r) =>
          r.shard?.member &&
          r.shard.settled &&
          r.shard.members.join() ===
            among
              .map((m) => m.identity)
              .sort()
              .join(),
      );
    await eventually('one leader, three members settled', () => leaderOf(replicas).length === 1 && settledOn(replicas), 20_000);
    await eventually(
      'every ConfigMap reconciled',
      () => latest(runs, 'cluster-wide').size === GLOBAL && latest(runs, 'per-resource').size === SHARDED,
      20_000,
    );

    const [leader] = leaderOf(replicas);
    expect(
      new Set(runs.filter((r) => r.controller === 'cluster-wide').map((r) => r.member)),
      'cluster-wide runs on the leader only',
    ).to.deep.equal(new Set([leader.identity]));
    const spread = (among: readonly Replica[]) =>
      among.map((r) => [...latest(runs, 'per-resource').values()].filter((run) => run.member === r.identity).length);
    await eventually(
      'the sharded runs settled on three members',
      () => spread(replicas).every((n) => n > 0) && spread(replicas).reduce((x, y) => x + y) === SHARDED,
      10_000,
    );

    // An update storm; the leader stops in the middle of it (releases its leader Lease and deletes its member Lease).
    let stoppedAt = 0;
    let stopping: Promise<void> | undefined;
    const finalValue = await updateStorm(configMaps, [...names('global', GLOBAL), ...names('sharded', SHARDED)], 4_000, (elapsed) => {
      if (stopping || elapsed < 1_500) return;
      stoppedAt = Date.now();
      stopping = leader.operator.stop();
    });
    await stopping;
    const survivors = replicas.filter((r) => r !== leader);
    await eventually('a new leader, two members settled', () => leaderOf(survivors).length === 1 && settledOn(survivors), 20_000);
    const [next] = leaderOf(survivors);

    // Nothing lost: the last run of every ConfigMap, in either controller, saw its last value.
    await eventually(
      () => `every ConfigMap's last run seeing its last update (stale: ${stale(finalValue, runs).slice(0, 5).join(', ')})`,
      () => stale(finalValue, runs).length === 0,
      20_000,
    );

    // The cluster-wide controller: only ever on a replica while it led, and never on two replicas at once (over all its resources).
    const global = runs.filter((r) => r.controller === 'cluster-wide');
    const outsideTerm = global.filter(
      (run) => !replicas.find((r) => r.identity === run.member)!.terms.some((t) => t.from <= run.start && run.end <= t.to),
    );
    expect(
      outsideTerm.map((r) => `${r.member} ${r.resource} ${r.start}`),
      'cluster-wide runs outside a leadership term',
    ).to.deep.equal([]);
    expect(global.filter((r) => r.start > stoppedAt + 100 && r.member === leader.identity)).to.deep.equal([]);
    expect(global.filter((r) => r.start > stoppedAt).map((r) => r.member)).to.include(next.identity);
    const globalOverlaps = overlaps(global.map((r) => ({ ...r, resource: 'cluster-wide' })));
    expect(globalOverlaps, globalOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);

    // The sharded controller: rebalanced over the two survivors, each resource on one at a time.
    expect(spread(survivors).every((n) => n > 0)).to.equal(true);
    const owners = new Set([...latest(runs, 'per-resource').values()].filter((run) => run.start > stoppedAt).map((run) => run.member));
    expect(owners).to.not.include(leader.identity);
    const sharded = runs.filter((r) => r.controller === 'per-resource');
    const shardedOverlaps = overlaps(sharded);
    expect(shardedOverlaps, shardedOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);
    console.log(
      `      ${runs.length} runs (${global.length} cluster-wide, ${sharded.length} sharded); leader ${leader.identity} → ${next.identity}; 0 overlaps`,
    );
  });

  it('OB4, SH2, SH3, SH4: across processes, a SIGKILLed leader — the cluster-wide controller moves to the new leader once the leader Lease expired, its shard is taken over, nothing lost, no resource run on two replicas at once', async () => {
    const lease = { leaseMs: 3_000, deadlineMs: 2_000, retryMs: 500 };
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-leader-shards-'));
    const timeline = join(dir, 'timeline.jsonl');
    const children: ChildProcess[] = [];
    type Line = { identity: string; at: number; leader?: boolean; member?: boolean; members?: string[]; settled?: boolean };
    const lines: Line[] = [];
    const spawnReplica = (identity: string) => {
      const script = fileURLToPath(new URL('./member-process.ts', import.meta.url));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', script, cluster.server.url, identity, timeline, ...Object.values(lease).map(String), 'leader-and-shards'],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line) as Line));
      children.push(child);
      return child;
    };
    const runs = (): Run[] =>
      existsSync(timeline)
        ? readFileSync(timeline, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Run)
        : [];
    const leaders = () => {
      const now = new Map<string, boolean>();
      for (const l of lines) if (l.leader !== undefined) now.set(l.identity, l.leader);
      return [...now].filter(([, leading]) => leading).map(([identity]) => identity);
    };
    const settled = (identities: string[], after = 0) =>
      identities.every((identity) =>
        lines.some(
          (l) => l.identity === identity && l.at >= after && l.member && l.settled && l.members?.join() === [...identities].sort().join(),
        ),
      );
    try {
      const global = Array.from({ length: GLOBAL }, (_, i) => `global-${i}`);
      const perResource = Array.from({ length: 3 * SHARDED }, (_, i) => `sharded-${i}`);
      for (const name of [...global, ...perResource]) {
        await configMaps.create({
          metadata: { name, namespace: 'default', labels: { 'shard-test': name.startsWith('global') ? 'global' : 'yes' } },
          data: { value: '0' },
        });
      }
      ['p', 'q', 'r'].forEach(spawnReplica);
      await eventually('one leader, three members settled', () => leaders().length === 1 && settled(['p', 'q', 'r']), 90_000);
      await eventually(
        'every ConfigMap reconciled',
        () => latest(runs(), 'cluster-wide').size === GLOBAL && latest(runs(), 'per-resource').size === perResource.length,
        60_000,
      );
      const [leader] = leaders();
      const survivors = ['p', 'q', 'r'].filter((m) => m !== leader);

      let killAt = 0;
      const finalValue = await updateStorm(configMaps, [...global, ...perResource], 8_000, (elapsed) => {
        if (killAt || elapsed < 2_000) return;
        killAt = Date.now();
        children[['p', 'q', 'r'].indexOf(leader)].kill('SIGKILL');
      });
      await eventually(
        'a new leader, two members settled',
        () => leaders().filter((m) => m !== leader).length === 1 && settled(survivors, killAt),
        30_000,
      );
      const next = leaders().find((m) => m !== leader)!;
      await eventually(
        () => `every ConfigMap's last run seeing its last update (stale: ${stale(finalValue, runs()).slice(0, 5).join(', ')})`,
        () => stale(finalValue, runs()).length === 0,
        60_000,
      );

      const timelineRuns = runs();
      const globalRuns = timelineRuns.filter((r) => r.controller === 'cluster-wide');
      const afterKill = globalRuns.filter((r) => r.start > killAt);
      expect(new Set(afterKill.map((r) => r.member)), 'cluster-wide after the kill: the new leader only').to.deep.equal(new Set([next]));
      const moved = Math.min(...afterKill.map((r) => r.start)) - killAt;
      // The dead leader's last renewal was at most one retry period before the kill.
      expect(moved, 'not before the leader Lease expired').to.be.at.least(lease.leaseMs - lease.retryMs);
      expect(moved).to.be.at.most(lease.leaseMs + 2_000);
      const globalOverlaps = overlaps(globalRuns.map((r) => ({ ...r, resource: 'cluster-wide' })));
      expect(globalOverlaps, globalOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);
      const shardedRuns = timelineRuns.filter((r) => r.controller === 'per-resource');
      const shardedOverlaps = overlaps(shardedRuns);
      expect(shardedOverlaps, shardedOverlaps.slice(0, 5).join('\n')).to.deep.equal([]);
      const owners = new Set([...latest(timelineRuns, 'per-resource').values()].map((r) => r.member));
      expect(owners).to.deep.equal(new Set(survivors));
      console.log(
        `      ${timelineRuns.length} runs (${globalRuns.length} cluster-wide, ${shardedRuns.length} sharded); leader ${leader} SIGKILLed, cluster-wide on ${next} ${moved} ms later (lease ${lease.leaseMs} ms); 0 overlaps`,
      );
    } finally {
      for (const child of children) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
