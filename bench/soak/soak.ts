/**
 * The chaos soak (issue 9): an API server and several operators, each in its own process, a driver
 * that bumps specs, creates and deletes, and a fault schedule — dropped and stalled watches,
 * 500/409/429 answers, history compactions, network cut-offs through the fault proxy, SIGKILL of the
 * leader. After the faults stop it waits for convergence and reports what was lost.
 */
import { Watch, type V1Lease } from '@kubernetes/client-node';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKubeClient, type ResourceClient } from '../../lib/kube/index.js';
import { FaultProxy } from '../../lib/testing/fault-proxy.js';
import {
  failoverAfter,
  maxConcurrentRuns,
  memoryTrend,
  type Failover,
  type LeaseVersion,
  type MemorySample,
  type MemoryTrend,
  type RunInterval,
} from './analysis.js';
import {
  kubeConfigFor,
  LEASE_NAME,
  NAMESPACE,
  SOAK,
  type OperatorMessage,
  type OperatorSettings,
  type ServerCommand,
  type ServerMessage,
  type Soak,
} from './model.js';

export interface SoakOptions {
  /** Soak objects kept alive (the driver creates as many as it deletes). */
  readonly resources: number;
  /** How long faults and mutations go on. */
  readonly durationMs: number;
  readonly operators: number;
  readonly mutationsPerSecond: number;
  /** A fault (or a cut-off) every this many ms. */
  readonly faultEveryMs: number;
  /** SIGKILL of the leader every this many ms (a new operator replaces it at once). */
  readonly killEveryMs: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /**
   * Whether cut-offs may hit the leader (default true). A leader cut off in the middle of a run
   * steps down, but that run goes on until its request fails, past the lease: the next leader may
   * run the same resource meanwhile (see the report of issue 9).
   */
  readonly cutLeaders: boolean;
  /** Fraction of runs that throw (default 0.05). */
  readonly failRate: number;
  /** How long to wait for convergence after the faults stop. */
  readonly convergeTimeoutMs: number;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export const SOAK_DEFAULTS: SoakOptions = Object.freeze({
  resources: 1_000,
  durationMs: 600_000,
  operators: 3,
  mutationsPerSecond: 20,
  faultEveryMs: 3_000,
  killEveryMs: 60_000,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  cutLeaders: true,
  failRate: 0.05,
  convergeTimeoutMs: 120_000,
});

export interface SoakReport {
  readonly options: Omit<SoakOptions, 'log'>;
  readonly resources: { readonly created: number; readonly deleted: number; readonly liveAtEnd: number };
  readonly mutations: Record<'create' | 'bump' | 'delete', number> & { readonly driverErrors: number };
  readonly faults: Record<string, number>;
  readonly runs: number;
  readonly failures: number;
  readonly maxConcurrentRunsPerResource: number;
  /** The runs of the first overlap found, if any. */
  readonly concurrentRunExample: RunInterval[];
  readonly leaderChanges: Array<{ holder: string; at: number }>;
  readonly kills: Array<{ identity: string; at: number }>;
  /** Versions of the lease the orchestrator saw. */
  readonly leaseVersions: number;
  readonly cuts: Array<{ identity: string; at: number; until: number }>;
  readonly lostChanges: number;
  readonly lostChangeExamples: string[];
  readonly leakedFinalizers: number;
  readonly leakedFinalizerExamples: string[];
  /** From the end of the faults until every object was reconciled and every deleted one gone; null if never. */
  readonly convergenceMs: number | null;
  /** Fraction of /readyz polls of live operators that were not 200, during the chaos. */
  readonly unreadyFraction: number;
  readonly unreadyByOperator: Record<string, number>;
  /** Last renewal of a SIGKILLed leader to the next leader's acquisition, as the server stored them, ms. */
  readonly failoverMs: number[];
  /** The same for leaders cut off from the server (they step down at the renew deadline). */
  readonly cutFailoverMs: number[];
  /** Every trial: who vanished and how, who could take over (see `witnesses`), and the failover. */
  readonly failoverTrials: FailoverTrial[];
  readonly operatorExitCodes: Record<string, number | string | null>;
  /** Operators that exited by themselves during the chaos (and were replaced). */
  readonly operatorRestarts: string[];
  readonly memory: Record<string, MemoryTrend | undefined>;
  readonly logDir: string;
}

export interface FailoverTrial extends Partial<Failover> {
  readonly cause: 'sigkill' | 'cut';
  readonly leader: string;
  readonly at: number;
  /**
   * Followers connected for more than a lease when the leader vanished: they saw its renewals.
   * The fault schedule never cuts the last of them off while the trial is open, since a follower
   * that was cut off when the lease expired cannot take over then (and one that comes back must
   * first see the lease, then wait a whole lease on its own clock).
   */
  readonly witnesses: string[];
}

const SERVER_SCRIPT = fileURLToPath(new URL('./server-process.ts', import.meta.url));
const OPERATOR_SCRIPT = fileURLToPath(new URL('./operator-process.ts', import.meta.url));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

interface OperatorHandle {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly proxy: FaultProxy;
  healthUrl?: string;
  /** Since when it has been started and connected (its last restore after a cut-off). */
  connectedSince?: number;
  killedAt?: number;
  exit?: number | string | null;
  readonly exited: Promise<void>;
  /** User-code starts not yet matched by an outcome: a SIGKILL ends them at the kill. */
  readonly pending: Map<string, number>;
}

function forkTs(script: string, args: string[], logDir: string): ChildProcess {
  return fork(script, args, {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    cwd: process.cwd(),
    env: { ...process.env, SOAK_LOG_DIR: logDir },
  });
}

export async function runSoak(partial: Partial<SoakOptions> = {}): Promise<SoakReport> {
  const options: SoakOptions = { ...SOAK_DEFAULTS, ...partial };
  const say = options.log ?? (() => undefined);
  const logDir = mkdtempSync(join(tmpdir(), 'rxkube-soak-'));
  const cleanup: Array<() => Promise<void> | void> = [];

  // --- the server process ---
  const serverChild = forkTs(SERVER_SCRIPT, [], logDir);
  cleanup.push(() => void serverChild.kill('SIGKILL'));
  const memory: Record<string, MemorySample[]> = { server: [] };
  const url = await new Promise<string>((resolve, reject) => {
    serverChild.on('message', (m: ServerMessage) => {
      if (m.type === 'listening') resolve(m.url);
      else if (m.type === 'memory') memory['server']?.push(m);
    });
    serverChild.once('exit', (code) => reject(new Error(`soak: the server process exited (${code}) before listening`)));
  });
  const command = (c: ServerCommand) => serverChild.send(c);
  say(`server at ${url}; logs in ${logDir}`);

  try {
    return await scenario(options, url, command, memory, logDir, say);
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

async function scenario(
  options: SoakOptions,
  url: string,
  command: (c: ServerCommand) => void,
  memory: Record<string, MemorySample[]>,
  logDir: string,
  say: (line: string) => void,
): Promise<SoakReport> {
  const kubeConfig = kubeConfigFor(url);
  const soaks = createKubeClient(kubeConfig).resource<Soak>(SOAK);
  const runs: RunInterval[] = [];
  let failures = 0;
  const operators: OperatorHandle[] = [];
  const readiness = new Map<string, { ok: number; unready: number }>();
  const faults: Record<string, number> = {};
  const countFault = (kind: string) => (faults[kind] = (faults[kind] ?? 0) + 1);
  let operatorCount = 0;
  let shuttingDown = false;
  const restarts: string[] = [];

  // --- operators, each behind its own proxy ---
  const spawnOperator = async (): Promise<OperatorHandle> => {
    const identity = `op-${++operatorCount}`;
    const proxy = new FaultProxy(url);
    await proxy.listen();
    const settings: OperatorSettings = {
      url: proxy.incarnation().url,
      identity,
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      failRate: options.failRate,
      logFile: join(logDir, `${identity}.log`),
    };
    const child = forkTs(OPERATOR_SCRIPT, [JSON.stringify(settings)], logDir);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        handle.exit = code ?? signal;
        resolve();
        // An operator that dies by itself (Operator.start() rejects when the first list fails,
        // ES2) is restarted, as a Deployment would.
        if (!shuttingDown && handle.killedAt === undefined) {
          restarts.push(`${identity} exited ${handle.exit}`);
          say(`${identity} exited ${handle.exit}; starting another`);
          void spawnOperator();
        }
      }),
    );
    const handle: OperatorHandle = { identity, child, proxy, exited, pending: new Map() };
    memory[identity] = [];
    child.on('message', (m: OperatorMessage) => {
      switch (m.type) {
        case 'started':
          handle.healthUrl = m.healthUrl;
          handle.connectedSince = Date.now();
          break;
        case 'begin':
          handle.pending.set(m.name, m.at);
          break;
        case 'run':
          handle.pending.delete(m.name);
          if (m.result === 'skipped') break;
          runs.push({ name: m.name, by: identity, start: m.startedAt, end: m.endedAt });
          if (m.result === 'failure') failures++;
          break;
        case 'memory':
          memory[identity]?.push(m);
          break;
        case 'leader':
          say(`${identity} ${m.leader ? 'leads' : 'stopped leading'}`);
          break;
      }
    });
    operators.push(handle);
    return handle;
  };
  const alive = () => operators.filter((o) => o.exit === undefined && o.killedAt === undefined);
  for (let i = 0; i < options.operators; i++) await spawnOperator();

  // --- every version of the lease, as the server stores it ---
  const leaseVersions: LeaseVersion[] = [];
  let leaseWatch: AbortController | undefined;
  let watchingLease = true;
  const watchLease = async (): Promise<void> => {
    leaseWatch = await new Watch(kubeConfig).watch(
      `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`,
      { fieldSelector: `metadata.name=${LEASE_NAME}` },
      (_type: string, lease: V1Lease) => {
        const version = {
          holder: lease.spec?.holderIdentity ?? '',
          renewedAt: new Date(String(lease.spec?.renewTime)).getTime(),
          seenAt: Date.now(),
        };
        const last = leaseVersions.at(-1);
        if (last?.holder !== version.holder || last.renewedAt !== version.renewedAt) leaseVersions.push(version); // a reopened watch repeats the current one
      },
      // reopened at once whenever it ends, so that no version is missed for long
      () => reopenLeaseWatch(),
    );
  };
  const reopenLeaseWatch = (): void => {
    if (watchingLease) void pause(100).then(watchLease).catch(reopenLeaseWatch);
  };
  await watchLease();
  const holder = () => leaseVersions.at(-1)?.holder ?? '';

  // --- the objects ---
  let nameCount = 0;
  let valueCount = 0;
  const live = new Set<string>();
  const mutations = { create: 0, bump: 0, delete: 0, driverErrors: 0 };
  const retrying = async (what: () => Promise<unknown>): Promise<boolean> => {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        await what();
        return true;
      } catch {
        await pause(100 * 2 ** attempt);
      }
    }
    mutations.driverErrors++;
    return false;
  };
  const create = async () => {
    const name = `soak-${++nameCount}`;
    if (
      await retrying(() =>
        soaks.create({
          apiVersion: SOAK.apiVersion,
          kind: SOAK.kind,
          metadata: { name, namespace: NAMESPACE },
          spec: { value: ++valueCount },
        }),
      )
    ) {
      live.add(name);
      mutations.create++;
    }
  };
  const bump = async (name: string) => {
    if (await retrying(() => soaks.mergePatch({ name, namespace: NAMESPACE }, { spec: { value: ++valueCount } }))) mutations.bump++;
  };
  const remove = async (name: string) => {
    live.delete(name);
    if (await retrying(() => soaks.delete({ name, namespace: NAMESPACE }))) mutations.delete++;
    else live.add(name);
  };
  const inBatches = async (count: number, make: () => Promise<void>) => {
    for (let done = 0; done < count; done += 20) await Promise.all(Array.from({ length: Math.min(20, count - done) }, make));
  };
  await inBatches(options.resources, create);
  mutations.create = 0; // the chaos' mutations only
  say(`${live.size} objects created; waiting for the first reconciliation`);
  const converge = async (timeoutMs: number) => {
    const start = Date.now();
    for (;;) {
      const state = await outstanding(soaks);
      if (state.stale.length === 0 && state.deleting.length === 0) return { ms: Date.now() - start, ...state };
      if (Date.now() - start > timeoutMs) return { ms: null, ...state };
      await pause(500);
    }
  };
  const warm = await converge(options.convergeTimeoutMs);
  say(`first reconciliation ${warm.ms === null ? 'did not finish' : `took ${warm.ms} ms`}`);

  // --- chaos ---
  const chaosEnd = Date.now() + options.durationMs;
  const kills: Array<{ identity: string; at: number }> = [];
  const cuts: Array<{ identity: string; at: number; until: number }> = [];
  const loops: Promise<void>[] = [];
  const every = (ms: number, action: () => Promise<void> | void, firstAfterMs = ms) =>
    loops.push(
      (async () => {
        await pause(firstAfterMs);
        while (Date.now() < chaosEnd) {
          await action();
          await pause(Math.min(ms, Math.max(0, chaosEnd - Date.now())));
        }
      })(),
    );

  // the driver: bumps, creates and deletes, keeping about `resources` objects
  const inFlight = new Set<Promise<void>>();
  every(
    1000 / options.mutationsPerSecond,
    () => {
      if (inFlight.size >= 20) return;
      const r = Math.random();
      const name = pick([...live]);
      const mutation =
        !name || (r < 0.15 && live.size < options.resources * 1.1)
          ? create()
          : r < 0.3 && live.size > options.resources * 0.9
            ? remove(name)
            : bump(name);
      inFlight.add(mutation);
      void mutation.finally(() => inFlight.delete(mutation));
    },
    0,
  );

  // server faults and cut-offs; a cut lasts from a third of a lease to a lease and a third
  // (5–20 s with the default 15 s lease), so some leaders lose their lease and some keep it
  const cutMs = () => options.leaseDurationMs * (1 / 3 + Math.random());
  const faultKinds: Array<() => void> = [
    () => (countFault('dropWatches'), command({ type: 'dropWatches', abrupt: Math.random() < 0.5 })),
    () => (countFault('stallWatches'), command({ type: 'stallWatches', ms: 3_000 + Math.random() * 12_000 })),
    () => (countFault('500'), command({ type: 'failRequests', status: 500, fraction: 0.3, ms: 2_000 + Math.random() * 3_000 })),
    () => (countFault('409'), command({ type: 'failRequests', status: 409, fraction: 0.3, ms: 2_000 + Math.random() * 3_000 })),
    () => (countFault('429'), command({ type: 'failRequests', status: 429, fraction: 0.3, ms: 2_000 + Math.random() * 3_000 })),
    () => (countFault('compact'), command({ type: 'compact' })),
    () => {
      // Never all of them: one operator keeps its link, so a cut-off leader has a successor.
      // Operators still starting are spared: their first list failing ends them (ES2).
      // Nor the last witness of a failover trial under way (see FailoverTrial.witnesses).
      // Until the first SIGKILL trial has been made, no follower: a run of cuts can otherwise keep every
      // follower from ever watching a lease long enough to witness that trial.
      const killTrialOwed = options.killEveryMs < options.durationMs && !trials.some((t) => t.cause === 'sigkill');
      const connected = alive().filter((o) => !o.proxy.isCut && o.connectedSince !== undefined);
      const target =
        connected.length > 1
          ? pick(
              connected.filter(
                (o) => (options.cutLeaders || o.identity !== holder()) && sparesAWitness(o) && !(killTrialOwed && o.identity !== holder()),
              ),
            )
          : undefined;
      if (!target) return;
      if (target.identity === holder() && hasWitness(target)) openTrial('cut', target);
      countFault('networkCut');
      target.proxy.link = 'cut';
      const cut = { identity: target.identity, at: Date.now(), until: 0 };
      cuts.push(cut);
      setTimeout(() => {
        target.proxy.restore();
        cut.until = Date.now();
        if (target.connectedSince !== undefined) target.connectedSince = cut.until;
      }, cutMs()).unref();
    },
  ];
  every(options.faultEveryMs, () => pick(faultKinds)?.());

  /**
   * A failover trial needs a follower that has watched the leader's renewals: started, and not
   * cut off, for at least a lease (a candidate that just came or came back must first see a
   * renewal, and a fresh one must wait a whole lease on its own clock).
   */
  const witnessesOf = (leader: OperatorHandle) =>
    alive().filter(
      (o) => o !== leader && !o.proxy.isCut && o.connectedSince !== undefined && Date.now() - o.connectedSince > options.leaseDurationMs,
    );
  const hasWitness = (leader: OperatorHandle) => witnessesOf(leader).length > 0;
  const trials: FailoverTrial[] = [];
  // A leader killed while cut off hands over once: the trial opened by the cut measures it.
  const openTrial = (cause: FailoverTrial['cause'], leader: OperatorHandle) => {
    if (trials.some((t) => t.leader === leader.identity && isOpen(t))) return;
    trials.push({ cause, leader: leader.identity, at: Date.now(), witnesses: witnessesOf(leader).map((o) => o.identity) });
  };
  /** A trial is open until another holder took the lease, or for two leases at most. */
  const isOpen = (t: FailoverTrial) =>
    Date.now() < t.at + 2 * options.leaseDurationMs &&
    !leaseVersions.some((v) => v.seenAt > t.at && v.holder !== '' && v.holder !== t.leader);
  const sparesAWitness = (target: OperatorHandle) =>
    trials
      .filter(isOpen)
      .every((t) => t.witnesses.some((id) => id !== target.identity && alive().some((o) => o.identity === id && !o.proxy.isCut)));

  // SIGKILL of the leader, replaced at once by a new operator
  every(options.killEveryMs, async () => {
    // Waits for a moment when a trial is fair: see hasWitness.
    let leader = alive().find((o) => o.identity === holder());
    while (Date.now() < chaosEnd && !(leader && hasWitness(leader))) {
      await pause(250);
      leader = alive().find((o) => o.identity === holder());
    }
    if (!leader || Date.now() >= chaosEnd) return;
    countFault('sigkillLeader');
    openTrial('sigkill', leader);
    leader.killedAt = Date.now();
    leader.child.kill('SIGKILL');
    kills.push({ identity: leader.identity, at: leader.killedAt });
    say(`SIGKILL ${leader.identity}`);
    await spawnOperator();
  });

  // /readyz of every live operator, every second
  every(
    1_000,
    async () => {
      await Promise.all(
        alive()
          .filter((o) => o.healthUrl)
          .map(async (o) => {
            const tally = readiness.get(o.identity) ?? { ok: 0, unready: 0 };
            readiness.set(o.identity, tally);
            try {
              const answer = await fetch(`${o.healthUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
              if (answer.status === 200) tally.ok++;
              else tally.unready++;
            } catch {
              tally.unready++;
            }
          }),
      );
    },
    1_000,
  );

  await Promise.all(loops);
  await Promise.all(inFlight);
  command({ type: 'clear' });
  for (const o of operators) if (o.proxy.isCut) o.proxy.restore();
  say(`faults stopped after ${options.durationMs} ms; waiting for convergence`);
  const end = await converge(options.convergeTimeoutMs);
  say(`convergence ${end.ms === null ? 'not reached' : `after ${end.ms} ms`}`);

  // --- shut down: SIGTERM every operator (runs finish, the lease is released, exit 0) ---
  watchingLease = false;
  leaseWatch?.abort();
  shuttingDown = true;
  for (const o of alive()) o.child.kill('SIGTERM');
  await Promise.race([Promise.all(operators.map((o) => o.exited)), pause(15_000)]);
  for (const o of operators) if (o.exit === undefined) o.child.kill('SIGKILL');
  await Promise.all(operators.map((o) => o.exited));
  await Promise.all(operators.map((o) => o.proxy.close()));

  // runs a SIGKILL interrupted end at the kill
  for (const o of operators)
    if (o.killedAt !== undefined) for (const [name, start] of o.pending) runs.push({ name, by: o.identity, start, end: o.killedAt });

  const failoverTrials = trials.map((t): FailoverTrial => ({ ...t, ...failoverAfter(leaseVersions, t.leader, t.at) }));
  const failover = (cause: FailoverTrial['cause']) =>
    failoverTrials.flatMap((t) => (t.cause === cause && t.ms !== undefined ? [t.ms] : []));
  const tallies = [...readiness.values()];
  const concurrency = maxConcurrentRuns(runs);
  const polls = tallies.reduce((n, t) => n + t.ok + t.unready, 0);
  const resources = await outstanding(soaks);
  return {
    options: Object.fromEntries(Object.entries(options).filter(([k]) => k !== 'log')) as Omit<SoakOptions, 'log'>,
    resources: { created: options.resources + mutations.create, deleted: mutations.delete, liveAtEnd: resources.live },
    mutations,
    faults,
    runs: runs.length,
    failures,
    maxConcurrentRunsPerResource: concurrency.max,
    concurrentRunExample: concurrency.overlap,
    leaderChanges: leaseVersions
      .filter((v, i) => i > 0 && v.holder !== leaseVersions[i - 1]?.holder)
      .map((v) => ({ holder: v.holder, at: v.renewedAt })),
    kills,
    cuts,
    leaseVersions: leaseVersions.length,
    lostChanges: end.stale.length,
    lostChangeExamples: end.stale.slice(0, 10),
    leakedFinalizers: end.deleting.length,
    leakedFinalizerExamples: end.deleting.slice(0, 10),
    convergenceMs: end.ms,
    unreadyFraction: polls === 0 ? 0 : tallies.reduce((n, t) => n + t.unready, 0) / polls,
    unreadyByOperator: Object.fromEntries([...readiness].map(([id, t]) => [id, t.unready / Math.max(1, t.ok + t.unready)])),
    failoverMs: failover('sigkill'),
    cutFailoverMs: failover('cut'),
    failoverTrials,
    operatorExitCodes: Object.fromEntries(operators.map((o) => [o.identity, o.exit ?? null])),
    operatorRestarts: restarts,
    memory: Object.fromEntries(Object.entries(memory).map(([id, samples]) => [id, memoryTrend(samples)])),
    logDir,
  };
}

/** Objects whose spec change is not in their status yet, and deleted ones still held by a finalizer. */
async function outstanding(soaks: ResourceClient<Soak>): Promise<{ stale: string[]; deleting: string[]; live: number }> {
  const { items } = await soaks.listAll({ namespace: NAMESPACE });
  const deleting = items.filter((s) => s.metadata?.deletionTimestamp);
  const stale = items.filter((s) => !s.metadata?.deletionTimestamp && s.status?.observedGeneration !== s.metadata?.generation);
  const name = (s: Soak) => `${s.metadata?.name} (generation ${s.metadata?.generation}, observed ${s.status?.observedGeneration})`;
  return { stale: stale.map(name), deleting: deleting.map((s) => s.metadata?.name ?? ''), live: items.length - deleting.length };
}
