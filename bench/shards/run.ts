/**
 * Sharding benchmark: bench:e2e's work done by 1, 2 and 4 replicas of one sharded controller.
 *
 *   npm run bench:shards -- [--n 2000,10000] [--replicas 1,2,4] [--rounds 1] [--pin auto|none]
 *                           [--timeout-s 300] [--out bench/results/shards.json]
 *
 * Per N, round and replica count (counts interleaved within a round), a fresh embedded API server
 * process (bench/e2e/server.ts, in memory) gets the Counter CRD and N counters, then K replica
 * processes start at once: bench/shards/replica.ts, bench:e2e's rxkube variant with
 * `sharding: { replicas: 'auto' }` (default lease timings), compiled with tsc and run with plain
 * node. Timed from the replicas' start:
 *   join:    until every replica is a member, sees all K and has settled (every handover of the
 *            start-up acknowledged); the statuses already right then are reported;
 *   phase 1: until every counter's status is { observedGeneration, value: spec.value * 2 };
 *   phase 2: (after the join) every spec bumped 3 times quickly, until every status reflects the
 *            last bump.
 * Per replica: peak RSS (sampled from /proc), peak heap and status writes (the preloaded probe of
 * bench:e2e), CPU seconds per phase, the counters it wrote in phase 2 = the primaries it owns
 * (every counter is bumped and membership is settled; max/min is the spread). The server's CPU
 * seconds per phase and its share of one core: near 100 % the server is the limit.
 *
 * Pinning (--pin auto, when taskset exists and there are ≥ 2 CPUs): the server on CPU 0, replica
 * i on CPU 1 + (i mod (CPUs − 1)); on a 2-core machine every replica shares CPU 1, so K replicas
 * split one core and the server has the other. The bench process itself (watch, phase-2 patches)
 * is not pinned. --pin none: nothing pinned.
 * Medians over rounds; saves --out with every measurement and the 1-minute load average.
 */
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import {
  askProbe,
  bumpEverySpec,
  compileInto,
  cpuSeconds,
  HERE as E2E,
  loadAverage,
  median,
  NODE,
  positiveIntegers,
  readFlags,
  reconciled,
  ROOT,
  round,
  Sampler,
  schedSeconds,
  spawnPinned,
  startBenchServer,
  stopProcess,
  Tracker,
  withTimeout,
  type Probe,
} from '../e2e/harness.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BENCH = 'bench:shards';

interface Config {
  readonly ns: readonly number[];
  readonly replicas: readonly number[];
  readonly rounds: number;
  readonly pin: boolean;
  readonly timeoutS: number;
  readonly out: string;
}

function parseArgs(argv: readonly string[]): Config {
  const flags = readFlags(BENCH, argv);
  for (const flag of flags.keys()) {
    if (!['n', 'replicas', 'rounds', 'pin', 'timeout-s', 'out'].includes(flag)) throw new Error(`${BENCH}: unknown flag --${flag}`);
  }
  const [rounds] = positiveIntegers(BENCH, 'rounds', flags.get('rounds') ?? '1');
  const [timeoutS] = positiveIntegers(BENCH, 'timeout-s', flags.get('timeout-s') ?? '300');
  const pin = flags.get('pin') ?? 'auto';
  if (pin !== 'auto' && pin !== 'none') throw new Error(`${BENCH}: --pin must be 'auto' or 'none', got '${pin}'`);
  const canPin = cpus().length >= 2 && ['/usr/bin/taskset', '/bin/taskset'].some((path) => existsSync(path));
  if (pin === 'auto' && !canPin) console.log(`${BENCH}: not pinning (needs taskset and 2 CPUs or more)`);
  return {
    ns: positiveIntegers(BENCH, 'n', flags.get('n') ?? '2000,10000'),
    replicas: positiveIntegers(BENCH, 'replicas', flags.get('replicas') ?? '1,2,4'),
    rounds: rounds,
    pin: pin === 'auto' && canPin,
    timeoutS: timeoutS,
    out: flags.get('out') ?? 'bench/results/shards.json',
  };
}

/** CPU lists for taskset: the server on CPU 0, the replicas spread over the others. */
function cpuLayout(pin: boolean): { server: string | undefined; replica: (index: number) => string | undefined } {
  const count = cpus().length;
  return pin ? { server: '0', replica: (index) => String(1 + (index % (count - 1))) } : { server: undefined, replica: () => undefined };
}

// ---- the replicas ---------------------------------------------------------------------------

interface ShardLine {
  member: boolean;
  members: string[];
  settled: boolean;
  handovers: number;
}

function parseShardLine(text: string): ShardLine | undefined {
  try {
    const line = JSON.parse(text) as Partial<ShardLine>;
    return typeof line.member === 'boolean' && Array.isArray(line.members) && typeof line.settled === 'boolean'
      ? (line as ShardLine)
      : undefined;
  } catch {
    return undefined;
  }
}

/** One replica process and what it said about its membership. */
class Replica {
  readonly process: ChildProcess;
  readonly sampler: Sampler;
  latest: ShardLine | undefined;
  /** Status changes that left the full view after the join (a member lost, a new handover). */
  changesAfterJoin = 0;
  private joined = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly identity: string,
    private readonly replicas: number,
    entry: string,
    kubeconfig: string,
    cpuList: string | undefined,
  ) {
    // E2E_CPU_PROF_DIR (as for bench:e2e): a CPU profile of each replica there, written when it stops.
    const profile = process.env['E2E_CPU_PROF_DIR']
      ? ['--cpu-prof', '--cpu-prof-dir', join(process.env['E2E_CPU_PROF_DIR'], identity)]
      : [];
    this.process = spawnPinned(cpuList, NODE, [...profile, '--expose-gc', '--import', join(E2E, 'probe.mjs'), entry], {
      env: { ...process.env, KUBECONFIG: kubeconfig, RXKUBE_BENCH_IDENTITY: identity, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      cwd: dirname(entry),
    });
    this.sampler = new Sampler(this.process.pid!);
    createInterface({ input: this.process.stdout! }).on('line', (line) => this.onLine(line));
  }

  /** A member that sees all the replicas and has acknowledged that view everywhere. */
  get inFullView(): boolean {
    return this.latest !== undefined && this.latest.member && this.latest.settled && this.latest.members.length === this.replicas;
  }

  markJoined(): void {
    this.joined = true;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A shard status line, or anything else the replica printed (its logger's warnings): passed on to stderr. */
  private onLine(text: string): void {
    const line = parseShardLine(text);
    if (!line) {
      process.stderr.write(`${this.identity}: ${text}\n`);
      return;
    }
    this.latest = line;
    if (this.joined && !this.inFullView) this.changesAfterJoin++;
    for (const listener of this.listeners) listener();
  }
}

/** Resolves true once every replica is in the full view, false after `seconds`. */
function everyReplicaJoined(replicas: readonly Replica[], seconds: number): Promise<boolean> {
  return new Promise((done) => {
    const check = (): void => {
      if (!replicas.every((r) => r.inFullView)) return;
      finish(true);
    };
    const unsubscribe = replicas.map((r) => r.onChange(check));
    const timer = setTimeout(() => finish(false), seconds * 1000);
    const finish = (joined: boolean): void => {
      clearTimeout(timer);
      for (const off of unsubscribe) off();
      done(joined);
    };
    check();
  });
}

// ---- one measurement ------------------------------------------------------------------------

interface ProcessUsage {
  /** All threads. */
  cpuSeconds: number;
  /** The main thread running or runnable over the wall time: near 100 % the process is the limit. */
  busyPercent: number;
  /** The main thread runnable but not running (the machine's load) over the wall time. */
  waitingPercent: number;
}

interface ReplicaFigures {
  identity: string;
  peakRssMB: number;
  peakHeapMB: number;
  heapAfterGcMB: number | undefined;
  usage: [phase1: ProcessUsage, phase2: ProcessUsage];
  writes: [phase1: number, phase2: number];
  /** Distinct counters written per phase; in phase 2 the primaries the replica owns. */
  resources: [phase1: number, phase2: number];
  peakFds: number;
}

interface PhaseFigures {
  seconds: number;
  writes: number;
  server: ProcessUsage;
  timedOut: boolean;
}

interface Measurement {
  n: number;
  replicas: number;
  round: number;
  pinned: boolean;
  loadAverage: [start: number, end: number];
  join: { seconds: number; timedOut: boolean; reconciledByThen: number };
  phase1: PhaseFigures;
  /** With the time the bench took to send the 3 × N patches of the storm. */
  phase2: PhaseFigures & { stormSeconds: number };
  perReplica: ReplicaFigures[];
  changesAfterJoin: number;
}

const jsonBytesPerCounter = new Map<number, number>();

/** What the bench reads of a process at a phase's bounds. */
interface Times {
  cpu: number;
  running: number;
  waiting: number;
}

const timesOf = (pid: number): Times => ({ cpu: cpuSeconds(pid), ...schedSeconds(pid) });

/** CPU seconds over a phase, and the main thread's share of the phase running or waiting to run. */
function usage(from: Times, to: Times, seconds: number): ProcessUsage {
  return {
    cpuSeconds: to.cpu - from.cpu,
    busyPercent: (100 * (to.running - from.running + to.waiting - from.waiting)) / seconds,
    waitingPercent: (100 * (to.waiting - from.waiting)) / seconds,
  };
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

async function measure(entry: string, n: number, k: number, roundNo: number, config: Config): Promise<Measurement> {
  const layout = cpuLayout(config.pin);
  const kubeconfigFile = join(HERE, '.data', `run-${n}-${k}-${roundNo}.kubeconfig`);
  const { process: server, url, kubeconfig } = await startBenchServer(n, kubeconfigFile, layout.server);
  const dispatcher = new Agent({ connections: 16 });
  const replicas: Replica[] = [];
  try {
    const tracker = new Tracker(url, dispatcher, n);
    await tracker.start();
    jsonBytesPerCounter.set(n, tracker.averageJsonBytes());
    const load0 = loadAverage();
    const server0 = timesOf(server.pid!);
    const zero: Times = { cpu: 0, running: 0, waiting: 0 };
    const started = performance.now();
    for (let i = 0; i < k; i++) replicas.push(new Replica(`r${i + 1}`, k, entry, kubeconfig, layout.replica(i)));
    // The machine is shared: a process of the measurement that dies fails it at once, not by timeout.
    const died = new Promise<never>((_, reject) => {
      for (const child of [server, ...replicas.map((r) => r.process)]) {
        child.once('exit', (code, signal) =>
          reject(
            new Error(
              `${child === server ? 'the bench server' : 'a replica'} (pid ${child.pid}) exited (${signal ?? code}) during the measurement`,
            ),
          ),
        );
      }
    });
    died.catch(() => undefined);
    const phase1Done = Promise.race([tracker.until(reconciled), died]);
    const joined = everyReplicaJoined(replicas, config.timeoutS).then((ok) => ({
      ok,
      seconds: (performance.now() - started) / 1000,
      reconciledByThen: n - tracker.pending(),
    }));
    const timedOut1 = await withTimeout(phase1Done, config.timeoutS, () => tracker.pending());
    const seconds1 = (performance.now() - started) / 1000;
    const replicas1 = replicas.map((r) => timesOf(r.process.pid!));
    const server1 = timesOf(server.pid!);
    const peaks1 = replicas.map((r) => r.sampler.take());
    const probes1 = await Promise.all(replicas.map((r) => askProbe(r.process, true)));

    // Phase 2 on a settled membership: what each replica writes then is what it owns.
    const join = await Promise.race([joined, died]);
    if (!join.ok) console.log(`  the replicas did not all join within ${config.timeoutS} s`);
    for (const r of replicas) r.markJoined();
    const server2 = timesOf(server.pid!);
    const replicas2 = replicas.map((r) => timesOf(r.process.pid!));
    const started2 = performance.now();
    const phase2Done = Promise.race([tracker.until(await Promise.race([bumpEverySpec(tracker, url, dispatcher), died])), died]);
    const stormSeconds = (performance.now() - started2) / 1000;
    const timedOut2 = await withTimeout(phase2Done, config.timeoutS, () => tracker.pending());
    const seconds2 = (performance.now() - started2) / 1000;
    const replicas3 = replicas.map((r) => timesOf(r.process.pid!));
    const server3 = timesOf(server.pid!);
    const peaks2 = replicas.map((r) => r.sampler.take());
    const probes2: Probe[] = await Promise.all(replicas.map((r) => askProbe(r.process, false)));
    tracker.stop();

    const perReplica = replicas.map((r, i): ReplicaFigures => ({
      identity: r.identity,
      peakRssMB: Math.max(peaks1[i].peakRssMB, peaks2[i].peakRssMB),
      peakHeapMB: probes2[i].peakHeapMB,
      heapAfterGcMB: probes1[i].heapAfterGcMB,
      usage: [usage(zero, replicas1[i], seconds1), usage(replicas2[i], replicas3[i], seconds2)],
      writes: [probes1[i].writes, probes2[i].writes - probes1[i].writes],
      resources: [probes1[i].resources, probes2[i].resources],
      peakFds: Math.max(peaks1[i].peakFds, peaks2[i].peakFds),
    }));
    return {
      n,
      replicas: k,
      round: roundNo,
      pinned: config.pin,
      loadAverage: [load0, loadAverage()],
      join: { seconds: join.seconds, timedOut: !join.ok, reconciledByThen: join.reconciledByThen },
      phase1: {
        seconds: seconds1,
        writes: sum(perReplica.map((r) => r.writes[0])),
        server: usage(server0, server1, seconds1),
        timedOut: timedOut1,
      },
      phase2: {
        seconds: seconds2,
        stormSeconds,
        writes: sum(perReplica.map((r) => r.writes[1])),
        server: usage(server2, server3, seconds2),
        timedOut: timedOut2,
      },
      perReplica,
      changesAfterJoin: sum(replicas.map((r) => r.changesAfterJoin)),
    };
  } finally {
    for (const r of replicas) r.sampler.stop();
    await Promise.all(replicas.map((r) => stopProcess(r.process)));
    await stopProcess(server);
    await dispatcher.close();
    rmSync(kubeconfigFile, { force: true });
  }
}

// ---- figures --------------------------------------------------------------------------------

interface Summary {
  n: number;
  replicas: number;
  rounds: number;
  loadAverage: number;
  joinSeconds: number;
  /** Counters whose status was already right when the last replica joined. */
  reconciledAtJoin: number;
  phase1Seconds: number;
  phase2Seconds: number;
  /** Of phase 2: how long the bench took to send its 3 × N patches. */
  stormSeconds: number;
  /** Status writes per second, all replicas together. */
  writesPerSecond: [phase1: number, phase2: number];
  /** The largest per-replica peak (the replicas do the same work: one figure per count). */
  peakRssMBPerReplica: number;
  peakHeapMBPerReplica: number;
  /** Mean CPU seconds of one replica, and of all of them together. */
  cpuSecondsPerReplica: [phase1: number, phase2: number];
  cpuSecondsAllReplicas: [phase1: number, phase2: number];
  /** Mean over replicas of the main thread running or waiting to run, % of the wall time. */
  replicaBusyPercent: [phase1: number, phase2: number];
  owned: { min: number; max: number; ratio: number };
  serverCpuSeconds: [phase1: number, phase2: number];
  /** The server's CPU time over the phase's wall time (100 % is one core). */
  serverCorePercent: [phase1: number, phase2: number];
  /** The server's main thread running or waiting to run over the wall time: near 100 % it is the limit. */
  serverBusyPercent: [phase1: number, phase2: number];
  /** Of that, waiting for a CPU the machine's other processes held. */
  serverWaitingPercent: [phase1: number, phase2: number];
  timeouts: number;
  changesAfterJoin: number;
}

function summarize(measurements: readonly Measurement[]): Summary[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) groups.set(`${m.n} ${m.replicas}`, [...(groups.get(`${m.n} ${m.replicas}`) ?? []), m]);
  return [...groups.values()].map((ms) => {
    const med = (pick: (m: Measurement) => number, digits = 2): number => round(median(ms.map(pick)), digits);
    const perPhase = (pick: (m: Measurement, phase: 0 | 1) => number, digits = 2): [number, number] => [
      med((m) => pick(m, 0), digits),
      med((m) => pick(m, 1), digits),
    ];
    const phase = (m: Measurement, p: 0 | 1): PhaseFigures => (p === 0 ? m.phase1 : m.phase2);
    const owned = (m: Measurement): number[] => m.perReplica.map((r) => r.resources[1]);
    return {
      n: ms[0].n,
      replicas: ms[0].replicas,
      rounds: ms.length,
      loadAverage: med((m) => (m.loadAverage[0] + m.loadAverage[1]) / 2, 1),
      joinSeconds: med((m) => m.join.seconds),
      reconciledAtJoin: med((m) => m.join.reconciledByThen, 0),
      phase1Seconds: med((m) => m.phase1.seconds),
      phase2Seconds: med((m) => m.phase2.seconds),
      stormSeconds: med((m) => m.phase2.stormSeconds),
      writesPerSecond: perPhase((m, p) => phase(m, p).writes / phase(m, p).seconds, 0),
      peakRssMBPerReplica: med((m) => Math.max(...m.perReplica.map((r) => r.peakRssMB)), 0),
      peakHeapMBPerReplica: med((m) => Math.max(...m.perReplica.map((r) => r.peakHeapMB)), 0),
      cpuSecondsPerReplica: perPhase((m, p) => sum(m.perReplica.map((r) => r.usage[p].cpuSeconds)) / m.replicas),
      cpuSecondsAllReplicas: perPhase((m, p) => sum(m.perReplica.map((r) => r.usage[p].cpuSeconds))),
      replicaBusyPercent: perPhase((m, p) => sum(m.perReplica.map((r) => r.usage[p].busyPercent)) / m.replicas, 0),
      owned: {
        min: med((m) => Math.min(...owned(m)), 0),
        max: med((m) => Math.max(...owned(m)), 0),
        ratio: med((m) => Math.max(...owned(m)) / Math.min(...owned(m))),
      },
      serverCpuSeconds: perPhase((m, p) => phase(m, p).server.cpuSeconds),
      serverCorePercent: perPhase((m, p) => (100 * phase(m, p).server.cpuSeconds) / phase(m, p).seconds, 0),
      serverBusyPercent: perPhase((m, p) => phase(m, p).server.busyPercent, 0),
      serverWaitingPercent: perPhase((m, p) => phase(m, p).server.waitingPercent, 0),
      timeouts: sum(ms.map((m) => Number(m.join.timedOut) + Number(m.phase1.timedOut) + Number(m.phase2.timedOut))),
      changesAfterJoin: sum(ms.map((m) => m.changesAfterJoin)),
    };
  });
}

function printTable(summaries: readonly Summary[]): void {
  console.table(
    summaries.map((s) => ({
      n: s.n,
      replicas: s.replicas,
      'join s': s.joinSeconds,
      'p1 s': s.phase1Seconds,
      'p2 s (storm)': `${s.phase2Seconds} (${s.stormSeconds})`,
      'writes/s p1/p2': s.writesPerSecond.join('/'),
      'RSS MB/replica': s.peakRssMBPerReplica,
      'heap MB/replica': s.peakHeapMBPerReplica,
      'CPU s/replica p1/p2': s.cpuSecondsPerReplica.join('/'),
      'replica busy % p1/p2': s.replicaBusyPercent.join('/'),
      'owned min–max (ratio)': `${s.owned.min}–${s.owned.max} (${s.owned.ratio})`,
      'server CPU s p1/p2': s.serverCpuSeconds.join('/'),
      'server % core p1/p2': s.serverCorePercent.join('/'),
      'server busy (waiting) % p1/p2': `${s.serverBusyPercent.join('/')} (${s.serverWaitingPercent.join('/')})`,
      load: s.loadAverage,
      timeouts: s.timeouts,
    })),
  );
}

/** The same figures as a Markdown table (the one in docs/sharding.md). */
function printMarkdown(summaries: readonly Summary[]): void {
  const rows = [
    '| N | replicas | join s | phase 1 s | phase 2 s | status writes/s p1 / p2 | peak RSS / heap MB per replica | CPU s per replica p1 / p2 | owned min–max (max/min) | server CPU s p1 / p2 | server busy % p1 / p2 (waiting) | load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...summaries.map(
      (s) =>
        `| ${s.n.toLocaleString('en')} | ${s.replicas} | ${s.joinSeconds} | ${s.phase1Seconds} | ${s.phase2Seconds} | ${s.writesPerSecond.join(' / ')} | ` +
        `${s.peakRssMBPerReplica} / ${s.peakHeapMBPerReplica} | ${s.cpuSecondsPerReplica.join(' / ')} | ${s.owned.min}–${s.owned.max} (${s.owned.ratio}) | ` +
        `${s.serverCpuSeconds.join(' / ')} | ${s.serverBusyPercent.join(' / ')} (${s.serverWaitingPercent.join(' / ')}) | ${s.loadAverage} |`,
    ),
  ];
  console.log(rows.join('\n'));
}

/** One retry for a measurement whose process died (another session's clean-up on this shared machine, say). */
async function measureOrRetry(entry: string, n: number, k: number, roundNo: number, config: Config): Promise<Measurement | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await measure(entry, n, k, roundNo, config);
    } catch (err) {
      console.log(`  failed (attempt ${attempt}): ${err instanceof Error ? err.message : String(err)}`);
      if (attempt === 2) return undefined;
    }
  }
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  compileInto(join(HERE, 'tsconfig.build.json'), join(HERE, '.build'), ROOT);
  const entry = join(HERE, '.build/bench/shards/replica.js');
  mkdirSync(join(HERE, '.data'), { recursive: true });
  const layout = cpuLayout(config.pin);
  console.log(
    `${BENCH}: N ${config.ns.join(', ')}, replicas ${config.replicas.join(', ')}, ${config.rounds} round(s), node ${process.version}, ${cpus().length} cpus, ` +
      (config.pin
        ? `pinned: server on CPU ${layout.server}, replica i on CPU ${Array.from({ length: Math.max(...config.replicas) }, (_, i) => layout.replica(i)).join('/')}`
        : 'not pinned'),
  );
  const measurements: Measurement[] = [];
  for (const n of config.ns) {
    for (let r = 1; r <= config.rounds; r++) {
      const order = config.replicas.map((_, i) => config.replicas[(i + r - 1) % config.replicas.length]);
      for (const k of order) {
        console.log(`N ${n} round ${r}: ${k} replica(s), load ${loadAverage()}`);
        const m = await measureOrRetry(entry, n, k, r, config);
        if (!m) continue;
        console.log(
          `  join ${round(m.join.seconds)} s (${m.join.reconciledByThen} reconciled by then), phase 1 ${round(m.phase1.seconds)} s (${m.phase1.writes} writes), ` +
            `phase 2 ${round(m.phase2.seconds)} s (${m.phase2.writes} writes), storm ${round(m.phase2.stormSeconds)} s, server CPU ${round(m.phase1.server.cpuSeconds)}/${round(m.phase2.server.cpuSeconds)} s busy ${round(m.phase1.server.busyPercent, 0)}/${round(m.phase2.server.busyPercent, 0)} %, ` +
            `owned ${m.perReplica.map((p) => p.resources[1]).join('/')}, RSS ${m.perReplica.map((p) => round(p.peakRssMB, 0)).join('/')} MB`,
        );
        measurements.push(m);
      }
    }
  }
  const summaries = summarize(measurements);
  printTable(summaries);
  printMarkdown(summaries);
  const out = resolve(ROOT, config.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ bench: 'shards', date: new Date().toISOString(), node: process.version, cpus: cpus().length, config, objectJsonBytes: Object.fromEntries(jsonBytesPerCounter), summaries, measurements }, null, 2)}\n`,
  );
  console.log(`saved ${config.out}`);
}

await main();
