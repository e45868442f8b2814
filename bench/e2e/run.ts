/**
 * End-to-end benchmark: rxkube against Node peers on the same work.
 *
 *   npm run bench:e2e -- [--n 0,2000,10000,50000] [--rounds 3] [--quick] [--variants rxkube,handwritten,k8s-operator]
 *                        [--before <tree of an older rxkube>] [--timeout-s 300] [--out bench/results/e2e.json]
 *                        [--fresh-every-ms 100] [--handwritten-max-n 10000] [--compile-cache]
 *
 * Per round and variant (variants interleaved within each round), a fresh embedded API server
 * process (in memory) gets the Counter CRD and N counters (spec.value = index), then the
 * variant's process starts:
 *   start-up: from the variant's process start until its imports are done and until it says it
 *            started, as the variant marks them (what each one's 'started' means differs:
 *            STARTED_MEANS), and until the moments alike for all: its first run (the probe sees
 *            e2eRuns count one) and the first status the bench's watch sees;
 *   phase 1: from the variant's process start until every counter's status is
 *            { observedGeneration: generation, value: spec.value * 2 } (and the variant started);
 *            meanwhile, from its first run on, one counter not changed before gets a new spec every
 *            --fresh-every-ms: the latency of these fresh changes (from the bench's watch seeing
 *            the change to seeing its status) is reported as p50/p99 over every round;
 *   phase 2: every spec bumped 3 times quickly (merge patches, 16 at once), until every status
 *            reflects the last bump.
 * The bench follows the counters with a watch of its own; the writes it sees in a phase (status
 * writes and its own patches) divide the server's CPU (server CPU per write). Sampled every
 * 100 ms from /proc: the variant's and the server's RSS, the variant's open descriptors, both
 * CPU times; the variant's peak heap, what its RSS consisted of at the highest sample (heap,
 * external, array buffers), its heap and RSS after a full GC at the end of each phase (settled)
 * and its count of runs come from a preloaded probe (bench/e2e/probe.mjs). The bench's own peak
 * RSS is reported beside them. A variant whose process ends on its own, or a phase that times
 * out, counts as an error. Heap per cached object: `npm run bench:cache-memory`.
 * Variants:
 *   - rxkube: bench/e2e/variants/rxkube.ts, an Operator with defaults, compiled with tsc
 *     (bench/e2e/tsconfig.build.json) and run with plain node;
 *   - rxkube-before: the same against the tree given by --before (an older checkout), compiled
 *     the same way;
 *   - handwritten: bench/e2e/variants/handwritten.mjs, client-node's informer and a work queue;
 *   - k8s-operator: bench/e2e/peers/k8s-operator.mjs on @dot-i/k8s-operator, installed into
 *     bench/e2e/peers (npm ci there) at the first run, not a dependency of rxkube.
 * --compile-cache runs every variant with NODE_COMPILE_CACHE (a folder per variant, filled by an
 * unreported run at N = 0 first): start-up with node's compiled-code cache, which any of them could use.
 * The hand-written variant is left out above --handwritten-max-n (its cache of client-node model
 * objects took 2.5 GB at N = 10,000). CPU per object in phase 1 is set beside the server's CPU
 * per status write (phase 1 writes one status per counter and fresh change).
 * Medians over rounds; ratios against handwritten are the headline. Saves --out.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Agent } from 'undici';
import {
  askProbe,
  bumpEverySpec,
  FreshChanges,
  loadAverage,
  type MemoryBreakdown,
  percentile,
  seededRandom,
  compileInto,
  cpuSeconds,
  HERE,
  median,
  NODE,
  positiveIntegers,
  readFlags,
  reconciled,
  ROOT,
  round,
  Sampler,
  startBenchServer,
  stopProcess,
  Tracker,
  withTimeout,
} from './harness.js';

const ALL_VARIANTS = ['rxkube', 'rxkube-before', 'handwritten', 'k8s-operator'] as const;
type Variant = (typeof ALL_VARIANTS)[number];

interface Config {
  readonly ns: readonly number[];
  readonly rounds: number;
  readonly variants: readonly Variant[];
  readonly before: string | undefined;
  readonly timeoutS: number;
  readonly out: string;
  readonly freshEveryMs: number;
  readonly handwrittenMaxN: number;
  readonly compileCache: boolean;
}

function parseArgs(argv: readonly string[]): Config {
  const flags = readFlags('bench:e2e', argv, ['quick', 'compile-cache']);
  const quick = flags.has('quick');
  const ns = positiveIntegers('bench:e2e', 'n', flags.get('n') ?? (quick ? '300' : '0,2000,10000,50000'), true);
  const rounds = Number(flags.get('rounds') ?? (quick ? 1 : 3));
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`bench:e2e: --rounds must be a positive integer, got '${flags.get('rounds')}'`);
  const before = flags.get('before');
  const variants = (flags.get('variants') ?? ALL_VARIANTS.filter((v) => v !== 'rxkube-before' || before).join(',')).split(',') as Variant[];
  for (const v of variants)
    if (!ALL_VARIANTS.includes(v)) throw new Error(`bench:e2e: unknown variant '${v}' (known: ${ALL_VARIANTS.join(', ')})`);
  if (variants.includes('rxkube-before') && !before) throw new Error('bench:e2e: variant rxkube-before needs --before <tree>');
  const timeoutS = Number(flags.get('timeout-s') ?? 300);
  const [freshEveryMs] = positiveIntegers('bench:e2e', 'fresh-every-ms', flags.get('fresh-every-ms') ?? '100');
  const [handwrittenMaxN] = positiveIntegers('bench:e2e', 'handwritten-max-n', flags.get('handwritten-max-n') ?? '10000');
  return {
    ns,
    rounds,
    variants,
    before,
    timeoutS,
    out: flags.get('out') ?? 'bench/results/e2e.json',
    freshEveryMs: freshEveryMs,
    handwrittenMaxN: handwrittenMaxN,
    compileCache: flags.has('compile-cache'),
  };
}

// ---- variants -------------------------------------------------------------------------------

function compile(tree: string, outName: string): string {
  const benchDir = join(tree, 'bench/e2e');
  if (tree !== ROOT) {
    mkdirSync(join(benchDir, 'variants'), { recursive: true });
    for (const file of ['variants/rxkube.ts', 'variants/counter-reconciler.ts', 'tsconfig.build.json'])
      copyFileSync(join(HERE, file), join(benchDir, file));
  }
  const outDir = join(HERE, outName);
  compileInto(join(benchDir, 'tsconfig.build.json'), outDir, tree);
  return join(outDir, 'bench/e2e/variants/rxkube.js');
}

function installPeers(): void {
  const peers = join(HERE, 'peers');
  if (existsSync(join(peers, 'node_modules/@dot-i/k8s-operator'))) return;
  console.log('installing the peers into bench/e2e/peers');
  execFileSync('npm', [existsSync(join(peers, 'package-lock.json')) ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: peers,
    stdio: 'inherit',
  });
}

function entryPoints(config: Config): Record<Variant, string> {
  const entries = {} as Record<Variant, string>;
  if (config.variants.includes('rxkube')) entries.rxkube = compile(ROOT, '.build');
  if (config.variants.includes('rxkube-before')) {
    const tree = resolve(config.before!);
    if (!existsSync(join(tree, 'node_modules')))
      cpSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    entries['rxkube-before'] = compile(tree, '.build-before');
  }
  if (config.variants.includes('handwritten')) entries.handwritten = join(HERE, 'variants/handwritten.mjs');
  if (config.variants.includes('k8s-operator')) {
    installPeers();
    entries['k8s-operator'] = join(HERE, 'peers/k8s-operator.mjs');
  }
  return entries;
}

const jsonBytesPerCounter = new Map<number, number>();

// ---- one measurement ------------------------------------------------------------------------

interface PhaseFigures {
  seconds: number;
  runs: number;
  peakRssMB: number;
  peakHeapMB: number;
  cpuSeconds: number;
  peakFds: number;
  serverCpuSeconds: number;
  /** Writes the bench's watch saw in the phase: the variant's status writes and the bench's own patches. */
  writes: number;
  /** The variant's RSS and heap after a full GC at the end of the phase (settled). */
  settledRssMB: number;
  heapAfterGcMB: number;
  /** What the variant's RSS consisted of at its highest sample (process.memoryUsage() every 250 ms). */
  atPeakRss: MemoryBreakdown | undefined;
  /** The server's peak RSS (it holds every counter and its watch history). */
  serverPeakRssMB: number;
  timedOut: boolean;
}

/**
 * What each variant's own `started` mark means; `first run` (the probe sees the first run begin)
 * and `first status` (the bench's watch sees the first counter reconciled) are the same for all.
 */
const STARTED_MEANS: Record<Variant, string> = {
  rxkube: 'caches synced: every counter listed (operator.start() resolved)',
  'rxkube-before': 'caches synced: every counter listed (operator.start() resolved)',
  handwritten: 'informer.start() resolved: every counter listed, the watch asked for',
  'k8s-operator': 'its watch request sent, not yet answered (it lists nothing: the counters come as ADDED events of that watch)',
};

interface Measurement {
  variant: Variant;
  n: number;
  round: number;
  phase1: PhaseFigures;
  phase2: PhaseFigures;
  /** The variant's heap after a full GC once phase 1 is done (everything cached, nothing in flight). */
  heapAfterGcMB: number | undefined;
  /** From the process start to the variant's marks: imports done, started (as STARTED_MEANS says). */
  importsSeconds: number;
  startedSeconds: number;
  /** From the process start to the first run (the probe's mark) and the first status the bench saw. */
  firstRunSeconds: number;
  firstStatusSeconds: number;
  /** The variant's process ended before the bench stopped it (an error: a crash or an exit). */
  exitedEarly: boolean;
  /** The bench's own peak RSS so far: the harness must not be what is measured. */
  benchPeakRssMB: number;
  /** Modules loaded when the variant had started (node's built-ins included). */
  modules: number;
  /** Fresh changes during phase 1: from the watch event of the change to its status, ms. */
  freshLatenciesMs: number[];
  /** The 1-minute load average when the measurement began. */
  load: number;
}

async function measure(variant: Variant, entry: string, n: number, round: number, config: Config): Promise<Measurement> {
  const kubeconfigFile = join(HERE, '.data', `run-${variant}-${n}-${round}.kubeconfig`);
  const { process: server, url, kubeconfig } = await startBenchServer(n, kubeconfigFile);
  const dispatcher = new Agent({ connections: 16 });
  let child: ChildProcess | undefined;
  try {
    const tracker = new Tracker(url, dispatcher, n);
    await tracker.start();
    jsonBytesPerCounter.set(n, tracker.averageJsonBytes());
    const serverCpu0 = cpuSeconds(server.pid!);
    const load = loadAverage();
    const fresh = new FreshChanges(tracker, url, dispatcher, seededRandom(n + round));
    const marks = new Map<string, number>();
    let onStarted: () => void = () => undefined;
    const variantStarted = new Promise<void>((resolveStarted) => (onStarted = resolveStarted));
    const phase1Done = Promise.all([tracker.until(reconciled), variantStarted]).then(() => undefined);

    const started = performance.now();
    // E2E_CPU_PROF_DIR: write a CPU profile of each variant process there (it must exit on SIGTERM).
    const profile = process.env['E2E_CPU_PROF_DIR'] ? ['--cpu-prof', '--cpu-prof-dir', join(process.env['E2E_CPU_PROF_DIR'], variant)] : [];
    // E2E_NODE_FLAGS: more node flags for each variant process (diagnostics such as --trace-gc).
    const diagnostics = process.env['E2E_NODE_FLAGS']?.split(' ').filter(Boolean) ?? [];
    child = spawn(NODE, [...profile, ...diagnostics, '--expose-gc', '--import', join(HERE, 'probe.mjs'), entry], {
      env: variantEnv(kubeconfig, config.compileCache ? join(HERE, '.data', 'compile-cache', variant) : undefined),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      cwd: dirname(entry),
    });
    let modules = Number.NaN;
    child.on('message', (message: { type?: string; name?: string; modules?: number }) => {
      if (message.type !== 'mark' || !message.name) return;
      marks.set(message.name, (performance.now() - started) / 1000);
      modules = message.modules ?? Number.NaN;
      // Fresh changes from the first run on: the cold start is under way for every variant alike.
      if (message.name === 'first-run') fresh.start(config.freshEveryMs);
      if (message.name === 'started') onStarted();
    });
    let stopping = false;
    let exitedEarly = false;
    // A variant that ends on its own ends the measurement (counted as an error), not a wait for the timeout.
    const exited = new Promise<void>((done) =>
      child!.once('exit', (code, signal) => {
        exitedEarly = !stopping;
        if (exitedEarly) console.log(`  ${variant} exited on its own (code ${code}, signal ${signal})`);
        done();
      }),
    );
    const sampler = new Sampler(child.pid!);
    const serverSampler = new Sampler(server.pid!);
    const events0 = tracker.events;
    const benchCpu1 = process.cpuUsage();
    const trace1 = process.env['E2E_TRACE']
      ? setInterval(
          () =>
            console.log(
              `  ${variant}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${tracker.pending()} pending, CPU ${cpuSeconds(child!.pid!)} s`,
            ),
          1000,
        )
      : undefined;
    const timedOut1 = await withTimeout(Promise.race([phase1Done, exited]), config.timeoutS, () => tracker.pending());
    const freshLatenciesMs = fresh.stop();
    clearInterval(trace1);
    if (process.env['E2E_TRACE']) {
      const used = process.cpuUsage(benchCpu1);
      console.log(`  ${variant}: bench CPU in phase 1 ${((used.user + used.system) / 1e6).toFixed(2)} s`);
    }
    const seconds1 = (performance.now() - started) / 1000;
    const cpu1 = cpuSeconds(child.pid!);
    const serverCpu1 = cpuSeconds(server.pid!);
    const peaks1 = sampler.take();
    const events1 = tracker.events;
    const probe1 = await askProbe(child, true);
    const phase1: PhaseFigures = {
      seconds: seconds1,
      runs: probe1.runs,
      peakRssMB: peaks1.peakRssMB,
      peakHeapMB: probe1.peakHeapMB,
      cpuSeconds: cpu1,
      peakFds: peaks1.peakFds,
      serverCpuSeconds: serverCpu1 - serverCpu0,
      writes: events1 - events0,
      settledRssMB: probe1.rssAfterGcMB ?? Number.NaN,
      heapAfterGcMB: probe1.heapAfterGcMB ?? Number.NaN,
      atPeakRss: probe1.atPeakRss,
      serverPeakRssMB: serverSampler.take().peakRssMB,
      timedOut: timedOut1,
    };

    // Phase 2: bump every spec 3 times, as fast as 16 connections allow (not for a variant that is gone).
    const started2 = performance.now();
    const benchCpu2 = process.cpuUsage();
    const phase2Done = exitedEarly ? Promise.resolve() : tracker.until(await bumpEverySpec(tracker, url, dispatcher));
    const bumpSeconds = (performance.now() - started2) / 1000;
    if (process.env['E2E_TRACE'])
      console.log(`  ${variant}: bumps done at ${bumpSeconds.toFixed(2)} s, ${tracker.pending()} counters pending`);
    const trace = process.env['E2E_TRACE']
      ? setInterval(
          () => console.log(`  ${variant}: ${((performance.now() - started2) / 1000).toFixed(1)} s, ${tracker.pending()} pending`),
          2000,
        )
      : undefined;
    const timedOut2 = await withTimeout(Promise.race([phase2Done, exited]), config.timeoutS, () => tracker.pending());
    const seconds2 = (performance.now() - started2) / 1000;
    clearInterval(trace);
    if (process.env['E2E_TRACE']) {
      const used = process.cpuUsage(benchCpu2);
      console.log(`  ${variant}: bench CPU in phase 2 ${((used.user + used.system) / 1e6).toFixed(2)} s`);
    }
    const peaks2 = sampler.take();
    const events2 = tracker.events;
    const probe2 = await askProbe(child, true);
    sampler.stop();
    const phase2: PhaseFigures = {
      seconds: seconds2,
      runs: probe2.runs - probe1.runs,
      peakRssMB: Math.max(peaks1.peakRssMB, peaks2.peakRssMB),
      peakHeapMB: probe2.peakHeapMB,
      cpuSeconds: cpuSeconds(child.pid!) - cpu1,
      peakFds: peaks2.peakFds,
      serverCpuSeconds: cpuSeconds(server.pid!) - serverCpu1,
      writes: events2 - events1,
      settledRssMB: probe2.rssAfterGcMB ?? Number.NaN,
      heapAfterGcMB: probe2.heapAfterGcMB ?? Number.NaN,
      atPeakRss: probe2.atPeakRss,
      serverPeakRssMB: serverSampler.take().peakRssMB,
      timedOut: timedOut2,
    };
    serverSampler.stop();
    tracker.stop();
    stopping = true;
    const sinceStart = (at: number | undefined): number => (at === undefined ? Number.NaN : (at - started) / 1000);
    return {
      variant,
      n,
      round,
      phase1,
      phase2,
      heapAfterGcMB: probe1.heapAfterGcMB,
      importsSeconds: marks.get('imports') ?? Number.NaN,
      startedSeconds: marks.get('started') ?? Number.NaN,
      firstRunSeconds: marks.get('first-run') ?? Number.NaN,
      firstStatusSeconds: sinceStart(tracker.firstReconciledAt),
      exitedEarly,
      benchPeakRssMB: process.resourceUsage().maxRSS / 1024,
      modules,
      freshLatenciesMs,
      load,
    };
  } finally {
    if (child) await stopProcess(child);
    await stopProcess(server);
    await dispatcher.close();
    rmSync(kubeconfigFile, { force: true });
  }
}

/** The bench's environment for a variant, without NODE_OPTIONS and with NODE_COMPILE_CACHE only when asked for. */
function variantEnv(kubeconfig: string, compileCache: string | undefined): NodeJS.ProcessEnv {
  const { NODE_COMPILE_CACHE: _inherited, ...env } = process.env;
  return { ...env, KUBECONFIG: kubeconfig, NODE_OPTIONS: '', ...(compileCache ? { NODE_COMPILE_CACHE: compileCache } : {}) };
}

// ---- figures --------------------------------------------------------------------------------

type PhaseSummary = Record<keyof Omit<PhaseFigures, 'timedOut' | 'atPeakRss'>, number> & {
  timeouts: number;
  /** The variant's CPU per counter, and the server's CPU per write the bench's watch saw. */
  cpuMsPerObject: number;
  serverCpuMsPerWrite: number;
  /** The breakdown at the peak RSS of the round whose peak RSS is the median. */
  atPeakRss: MemoryBreakdown | undefined;
};

type Summary = Record<'phase1' | 'phase2', PhaseSummary> & {
  variant: Variant;
  n: number;
  rounds: number;
  heapAfterGcMB: number;
  importsSeconds: number;
  startedSeconds: number;
  startedMeans: string;
  firstRunSeconds: number;
  firstStatusSeconds: number;
  /** Rounds whose variant process ended on its own, or that timed out. */
  errors: number;
  benchPeakRssMB: number;
  modules: number;
  fresh: { count: number; p50Ms: number; p99Ms: number };
  /** Phase 1: the variant's CPU per counter against the server's CPU per status write (fresh changes count as writes too). */
  cpuMsPerObject: number;
  serverCpuMsPerWrite: number;
  load: number;
};

function summarize(measurements: readonly Measurement[]): Summary[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const key = `${m.n} ${m.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.values()].map((ms) => {
    const n = ms[0].n;
    const phase = (p: 'phase1' | 'phase2'): PhaseSummary => {
      const byRss = [...ms].sort((a, b) => a[p].peakRssMB - b[p].peakRssMB);
      return {
        seconds: round(median(ms.map((m) => m[p].seconds))),
        runs: Math.round(median(ms.map((m) => m[p].runs))),
        peakRssMB: round(median(ms.map((m) => m[p].peakRssMB)), 0),
        peakHeapMB: round(median(ms.map((m) => m[p].peakHeapMB)), 0),
        cpuSeconds: round(median(ms.map((m) => m[p].cpuSeconds))),
        peakFds: Math.round(median(ms.map((m) => m[p].peakFds))),
        serverCpuSeconds: round(median(ms.map((m) => m[p].serverCpuSeconds))),
        writes: Math.round(median(ms.map((m) => m[p].writes))),
        settledRssMB: round(median(ms.map((m) => m[p].settledRssMB)), 0),
        heapAfterGcMB: round(median(ms.map((m) => m[p].heapAfterGcMB)), 1),
        serverPeakRssMB: round(median(ms.map((m) => m[p].serverPeakRssMB)), 0),
        timeouts: ms.filter((m) => m[p].timedOut).length,
        cpuMsPerObject: n === 0 ? Number.NaN : round(median(ms.map((m) => (m[p].cpuSeconds * 1000) / n)), 3),
        serverCpuMsPerWrite: round(
          median(ms.map((m) => (m[p].writes === 0 ? Number.NaN : (m[p].serverCpuSeconds * 1000) / m[p].writes))),
          3,
        ),
        atPeakRss: byRss[(byRss.length - 1) >> 1][p].atPeakRss,
      };
    };
    const latencies = ms.flatMap((m) => m.freshLatenciesMs);
    const writes = (m: Measurement) => n + m.freshLatenciesMs.length;
    return {
      variant: ms[0].variant,
      n,
      rounds: ms.length,
      phase1: phase('phase1'),
      phase2: phase('phase2'),
      heapAfterGcMB: round(median(ms.map((m) => m.heapAfterGcMB ?? Number.NaN)), 1),
      importsSeconds: round(median(ms.map((m) => m.importsSeconds))),
      startedSeconds: round(median(ms.map((m) => m.startedSeconds))),
      startedMeans: STARTED_MEANS[ms[0].variant],
      firstRunSeconds: round(median(ms.map((m) => m.firstRunSeconds))),
      firstStatusSeconds: round(median(ms.map((m) => m.firstStatusSeconds))),
      errors: ms.filter((m) => m.exitedEarly || m.phase1.timedOut || m.phase2.timedOut).length,
      benchPeakRssMB: round(Math.max(...ms.map((m) => m.benchPeakRssMB)), 0),
      modules: Math.round(median(ms.map((m) => m.modules))),
      fresh: { count: latencies.length, p50Ms: Math.round(percentile(latencies, 50)), p99Ms: Math.round(percentile(latencies, 99)) },
      cpuMsPerObject: n === 0 ? Number.NaN : round(median(ms.map((m) => (m.phase1.cpuSeconds * 1000) / n)), 3),
      serverCpuMsPerWrite: n === 0 ? Number.NaN : round(median(ms.map((m) => (m.phase1.serverCpuSeconds * 1000) / writes(m))), 3),
      load: round(median(ms.map((m) => m.load)), 1),
    };
  });
}

function ratios(summaries: readonly Summary[]): Record<string, unknown>[] {
  return summaries.flatMap((s) => {
    const base = summaries.find((b) => b.n === s.n && b.variant === 'handwritten');
    if (!base || s === base) return [];
    return [
      {
        n: s.n,
        variant: s.variant,
        phase1Seconds: round(s.phase1.seconds / base.phase1.seconds),
        phase2Seconds: round(s.phase2.seconds / base.phase2.seconds),
        peakRss: round(s.phase2.peakRssMB / base.phase2.peakRssMB),
        peakHeap: round(s.phase2.peakHeapMB / base.phase2.peakHeapMB),
        cpuPhase1: round(s.phase1.cpuSeconds / base.phase1.cpuSeconds),
        cpuPhase2: round(s.phase2.cpuSeconds / base.phase2.cpuSeconds),
      },
    ];
  });
}

function printTable(summaries: readonly Summary[]): void {
  const pair = (a: number, b: number): string => `${a}/${b}`;
  console.table(
    summaries.map((s) => ({
      n: s.n,
      variant: s.variant,
      'imports s': s.importsSeconds,
      'started s': s.startedSeconds,
      'first run s': s.firstRunSeconds,
      'first status s': s.firstStatusSeconds,
      'fresh p50/p99 ms': s.fresh.count === 0 ? '-' : `${s.fresh.p50Ms}/${s.fresh.p99Ms} (${s.fresh.count})`,
      'p1 s': s.phase1.seconds,
      'p2 s': s.phase2.seconds,
      'runs p1/p2': pair(s.phase1.runs, s.phase2.runs),
      'peak RSS MB p1/p2': pair(s.phase1.peakRssMB, s.phase2.peakRssMB),
      'settled RSS MB p1/p2': pair(s.phase1.settledRssMB, s.phase2.settledRssMB),
      'heap after GC MB p1/p2': pair(s.phase1.heapAfterGcMB, s.phase2.heapAfterGcMB),
      'peak heap MB': s.phase2.peakHeapMB,
      'CPU ms/obj p1/p2': pair(s.phase1.cpuMsPerObject, s.phase2.cpuMsPerObject),
      'server CPU ms/write p1/p2': pair(s.phase1.serverCpuMsPerWrite, s.phase2.serverCpuMsPerWrite),
      'fds p1/p2': pair(s.phase1.peakFds, s.phase2.peakFds),
      errors: s.errors,
      load: s.load,
    })),
  );
  console.log('what the peak RSS consisted of (process.memoryUsage() at the highest sample, MB; median round):');
  console.table(
    summaries.flatMap((s) =>
      (['phase1', 'phase2'] as const).map((p) => ({
        n: s.n,
        variant: s.variant,
        phase: p,
        'peak RSS': s[p].peakRssMB,
        ...s[p].atPeakRss,
        'server peak RSS': s[p].serverPeakRssMB,
        'bench peak RSS': s.benchPeakRssMB,
      })),
    ),
  );
  console.log("what each variant's 'started' means ('first run' and 'first status' mean the same for all):");
  for (const variant of new Set(summaries.map((s) => s.variant))) console.log(`  ${variant}: ${STARTED_MEANS[variant]}`);
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const entries = entryPoints(config);
  const dataDir = join(HERE, '.data');
  mkdirSync(dataDir, { recursive: true });
  console.log(
    `bench:e2e: N ${config.ns.join(', ')}, ${config.rounds} round(s), variants ${config.variants.join(', ')}, node ${process.version}, ${cpus().length} cpus`,
  );
  const measurements: Measurement[] = [];
  const leftOut: string[] = [];
  if (config.compileCache) {
    rmSync(join(dataDir, 'compile-cache'), { recursive: true, force: true });
    for (const variant of config.variants) {
      console.log(`filling the compile cache of ${variant}`);
      await measure(variant, entries[variant], 0, 0, config);
    }
  }
  for (const n of config.ns) {
    for (let r = 1; r <= config.rounds; r++) {
      // Interleaved, and rotated per round so no variant always runs first.
      const order = config.variants.map((_, i) => config.variants[(i + r - 1) % config.variants.length]);
      for (const variant of order) {
        if (variant === 'handwritten' && n > config.handwrittenMaxN) {
          if (r === 1) {
            const why = `handwritten left out at N ${n}: it stops at --handwritten-max-n ${config.handwrittenMaxN} (its cache of client-node model objects)`;
            console.log(why);
            leftOut.push(why);
          }
          continue;
        }
        console.log(`N ${n} round ${r}: ${variant} (load ${loadAverage()})`);
        const m = await measure(variant, entries[variant], n, r, config);
        console.log(
          `  started ${round(m.startedSeconds)} s (first run ${round(m.firstRunSeconds)} s, first status ${round(m.firstStatusSeconds)} s), ` +
            `settled RSS ${round(m.phase1.settledRssMB, 0)}/${round(m.phase2.settledRssMB, 0)} MB, bench RSS ${round(m.benchPeakRssMB, 0)} MB${m.exitedEarly ? ', EXITED EARLY' : ''}, fresh changes ${m.freshLatenciesMs.length} (p50 ${Math.round(percentile(m.freshLatenciesMs, 50))} ms), ` +
            `phase 1 ${round(m.phase1.seconds)} s (${m.phase1.runs} runs, CPU ${m.phase1.cpuSeconds} s, fds ${m.phase1.peakFds}, RSS ${round(m.phase1.peakRssMB, 0)} MB), ` +
            `phase 2 ${round(m.phase2.seconds)} s (${m.phase2.runs} runs, CPU ${round(m.phase2.cpuSeconds)} s, fds ${m.phase2.peakFds}, RSS ${round(m.phase2.peakRssMB, 0)} MB)`,
        );
        measurements.push(m);
        // Saved after every measurement: a long run that fails later keeps what it measured.
        save(config, leftOut, measurements);
      }
    }
  }
  const summaries = summarize(measurements);
  printTable(summaries);
  for (const why of leftOut) console.log(why);
  const headline = ratios(summaries);
  console.log('ratios against the hand-written client-node loop (< 1 is better):');
  console.table(headline);
  console.log('JSON bytes per counter as the server sends it:', Object.fromEntries(jsonBytesPerCounter));
  save(config, leftOut, measurements);
  console.log(`saved ${config.out}`);
}

function save(config: Config, leftOut: readonly string[], measurements: readonly Measurement[]): void {
  const summaries = summarize(measurements);
  const objectJsonBytes = Object.fromEntries(jsonBytesPerCounter);
  mkdirSync(dirname(resolve(ROOT, config.out)), { recursive: true });
  writeFileSync(
    resolve(ROOT, config.out),
    `${JSON.stringify({ bench: 'e2e', date: new Date().toISOString(), node: process.version, cpus: cpus().length, config, objectJsonBytes, leftOut, summaries, ratios: ratios(summaries), measurements }, null, 2)}\n`,
  );
}

await main();
