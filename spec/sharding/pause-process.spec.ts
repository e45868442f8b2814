import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createKubeClient, type ResourceClient } from '../../lib/kube/index.js';
import { eventually } from '../../lib/testing/index.js';
import { overlaps, type TimelineRun } from './timeline.js';

// A 2 s lease (member and leader), 1.2 s renew deadline: a pause of 2.5 s outlives the lease on the others' clocks.
const TIMING = { leaseMs: 2_000, deadlineMs: 1_200, retryMs: 300 };
const PAUSE_MS = 2_500;
const RESCHEDULE_MS = 100;
const SCRIPT = fileURLToPath(new URL('./member-process.ts', import.meta.url));
const PER_RESOURCE = 24;
const GLOBAL = 6;

interface Run extends TimelineRun {
  readonly controller: string;
}

interface StatusLine {
  readonly identity: string;
  readonly member?: boolean;
  readonly leader?: boolean;
  readonly settled?: boolean;
  readonly members?: string[];
  readonly at: number;
}

interface Member {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly statuses: StatusLine[];
}

/**
 * SH1, OB4 with real processes: a replica (then the leader) is frozen with SIGSTOP past its lease
 * while every resource is rescheduled every 100 ms and a storm of updates goes on, then woken with
 * SIGCONT. Its timers and the watch events it missed all come due at once; the run timeline must
 * show no run started by it between waking and its next successful renewal.
 */
describe('sharding and leader election: a process frozen past its lease (SH1, SH3, OB4)', function () {
  this.timeout(120_000);
  let server: ApiServer;
  let dir: string;
  let configMaps: ResourceClient;
  const members: Member[] = [];
  const pauses: { identity: string; frozeAt: number; woke: number }[] = [];
  const timeline = () => join(dir, 'timeline.jsonl');
  const runs = (): Run[] =>
    existsSync(timeline())
      ? readFileSync(timeline(), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Run)
      : [];

  const spawnMember = (identity: string): Member => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', SCRIPT, server.url, identity, timeline(), ...Object.values(TIMING).map(String), 'pause-leader'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, RXKUBE_TEST_RESCHEDULE_MS: String(RESCHEDULE_MS) },
      },
    );
    const member: Member = { identity, child, statuses: [] };
    createInterface({ input: child.stdout }).on('line', (line) => member.statuses.push(JSON.parse(line) as StatusLine));
    members.push(member);
    return member;
  };
  const settled = (m: Member, after: number) =>
    m.statuses.some((s) => s.at >= after && s.member === true && s.settled === true && s.members?.length === 2);
  const leading = (m: Member) => m.statuses.filter((s) => s.leader !== undefined).at(-1)?.leader === true;

  /** Bumps every ConfigMap over and over until `until` resolves. */
  const storm = async (until: Promise<unknown>) => {
    let done = false;
    void until.then(() => (done = true));
    let value = 0;
    while (!done) {
      value++;
      const names = [
        ...Array.from({ length: PER_RESOURCE }, (_, i) => `cm-${i}`),
        ...Array.from({ length: GLOBAL }, (_, i) => `global-${i}`),
      ];
      await Promise.all(names.map((name) => configMaps.mergePatch({ name, namespace: 'default' }, { data: { value: String(value) } })));
      await sleep(20);
    }
  };

  /** Freezes `m` for PAUSE_MS during a storm, wakes it; returns when it was frozen and when it woke. */
  const pauseDuringStorm = async (m: Member, options: { leading?: boolean } = {}): Promise<{ frozeAt: number; woke: number }> => {
    let wokeAt = 0;
    let frozeAt = 0;
    const pause = (async () => {
      await sleep(300);
      // A leader under load may have stepped down on its own meanwhile: freeze it while it leads.
      if (options.leading) await eventually('m1 leads before it is frozen', () => leading(m), 20_000);
      frozeAt = Date.now();
      m.child.kill('SIGSTOP');
      await sleep(PAUSE_MS);
      m.child.kill('SIGCONT');
      wokeAt = Date.now();
      await sleep(1_000);
    })();
    await Promise.all([pause, storm(pause)]);
    pauses.push({ identity: m.identity, frozeAt, woke: wokeAt });
    return { frozeAt, woke: wokeAt };
  };

  /**
   * The per-resource runs, but those frozen in flight: started before their process woke (so
   * before it was frozen: a frozen process starts nothing) and still going when it was frozen,
   * they overlap what the others ran meanwhile by construction.
   */
  const perResourceRuns = () =>
    runs().filter(
      (r) => r.controller === 'per-resource' && !pauses.some((p) => r.member === p.identity && r.start < p.woke && r.end >= p.frozeAt),
    );

  /** `m`'s runs (of `controller`) started after it woke and before `until`. */
  const startedBetween = (m: Member, from: number, until: number, controller?: string) =>
    runs().filter(
      (r) => r.member === m.identity && r.start >= from && r.start < until && (controller === undefined || r.controller === controller),
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-pause-'));
    server = await startApiServer();
    configMaps = createKubeClient(server.kubeConfig()).resource({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      namespaced: true,
    });
    for (let i = 0; i < PER_RESOURCE; i++)
      await configMaps.create({
        metadata: { name: `cm-${i}`, namespace: 'default', labels: { 'shard-test': 'yes' } },
        data: { value: '0' },
      } as never);
    for (let i = 0; i < GLOBAL; i++)
      await configMaps.create({
        metadata: { name: `global-${i}`, namespace: 'default', labels: { 'shard-test': 'global' } },
        data: { value: '0' },
      } as never);
  });
  after(async () => {
    for (const m of members) m.child.kill('SIGKILL');
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let m1: Member;
  let m2: Member;

  it('SH1, SH3: a member frozen past its lease during reschedules and a storm starts no run between waking and its next successful renewal', async () => {
    m1 = spawnMember('m1');
    await eventually('m1 leads', () => leading(m1), 30_000);
    m2 = spawnMember('m2');
    await eventually('both members settled on one view', () => settled(m1, 0) && settled(m2, 0), 30_000);
    await eventually('m2 runs its share', () => runs().some((r) => r.member === 'm2'), 10_000);

    const { woke } = await pauseDuringStorm(m2);
    // A loaded machine may take a while to work through what piled up during the pause.
    await eventually('m2 rejoined', () => m2.statuses.some((s) => s.at >= woke && s.member === true), 15_000).catch(() => undefined);
    const rejoined = m2.statuses.find((s) => s.at >= woke && s.member === true)?.at;
    const around = () => JSON.stringify(m2.statuses.filter((s) => s.at >= woke - PAUSE_MS - 3_000).map((s) => ({ ...s, at: s.at - woke })));
    expect(rejoined, `m2 renewed and rejoined after waking (its status lines: ${around()})`).to.not.equal(undefined);
    const early = startedBetween(m2, woke, rejoined!);
    console.log(`      m2 woke at +0, rejoined at +${rejoined! - woke} ms; runs started meanwhile: ${early.length}`);
    expect(early.map((r) => `${r.resource}@+${r.start - woke}`)).to.deep.equal([]);
    expect(overlaps(perResourceRuns()).slice(0, 5)).to.deep.equal([]);
  });

  it('OB4, SH1: a leader frozen past its lease during reschedules and a storm starts no run between waking and stepping down, and none of the cluster-wide controller after', async () => {
    expect(leading(m1), 'm1 still leads').to.equal(true);
    await eventually(
      'm1 runs the cluster-wide controller',
      () => runs().some((r) => r.member === 'm1' && r.controller === 'cluster-wide'),
      10_000,
    );
    const { frozeAt, woke } = await pauseDuringStorm(m1, { leading: true });
    await eventually('m2 took the leadership over', () => leading(m2), 10_000);
    // Frozen while leading, it cannot print meanwhile: its first `leader: false` since is the step-down.
    await eventually(
      'm1 stepped down and rejoined',
      () => m1.statuses.some((s) => s.at >= woke && s.member === true) && m1.statuses.some((s) => s.at >= frozeAt && s.leader === false),
      15_000,
    ).catch(() => undefined);
    const stepDown = m1.statuses.find((s) => s.at >= frozeAt && s.leader === false)?.at;
    const ledAgain = m1.statuses.find((s) => s.at >= woke && s.leader === true)?.at ?? Infinity;
    const rejoined = m1.statuses.find((s) => s.at >= woke && s.member === true)?.at;
    expect(stepDown, 'm1 stepped down after waking').to.not.equal(undefined);
    expect(rejoined, 'm1 rejoined the shard group').to.not.equal(undefined);
    const cluster = startedBetween(m1, woke, ledAgain, 'cluster-wide');
    const sharded = startedBetween(m1, woke, rejoined!, 'per-resource');
    console.log(
      `      m1 woke at +0, stepped down at +${Math.max(0, stepDown! - woke)} ms, rejoined at +${rejoined! - woke} ms; cluster-wide runs since: ${cluster.length}, per-resource runs before rejoining: ${sharded.length}`,
    );
    expect(cluster.map((r) => `${r.resource}@+${r.start - woke}`)).to.deep.equal([]);
    expect(sharded.map((r) => `${r.resource}@+${r.start - woke}`)).to.deep.equal([]);
    expect(overlaps(perResourceRuns()).slice(0, 5)).to.deep.equal([]);
  });
});
