/**
 * End-to-end benchmark: rxkube against Node peers on the same work.
 *
 *   npm run bench:e2e -- [--n 2000,10000] [--rounds 3] [--quick] [--variants rxkube,handwritten,k8s-operator]
 *                        [--before <tree of an older rxkube>] [--timeout-s 300] [--out bench/results/e2e.json]
 *
 * Per round and variant (variants interleaved within each round), a fresh embedded API server
 * process (in memory) gets the Counter CRD and N counters (spec.value = index), then the
 * variant's process starts:
 *   phase 1: from the variant's process start until every counter's status is
 *            { observedGeneration: generation, value: spec.value * 2 };
 *   phase 2: every spec bumped 3 times quickly (merge patches, 16 at once), until every status
 *            reflects the last bump.
 * The bench follows the counters with a watch of its own. Sampled every 100 ms from /proc:
 * the variant's RSS, open descriptors and CPU time, the server's CPU time; the variant's peak
 * heap, its heap after a full GC at the end of phase 1 and its count of runs come from a
 * preloaded probe (bench/e2e/probe.mjs). Heap per cached object: `npm run bench:cache-memory`.
 * Variants:
 *   - rxkube: bench/e2e/variants/rxkube.ts, an Operator with defaults, compiled with tsc
 *     (bench/e2e/tsconfig.build.json) and run with plain node;
 *   - rxkube-before: the same against the tree given by --before (an older checkout), compiled
 *     the same way;
 *   - handwritten: bench/e2e/variants/handwritten.mjs, client-node's informer and a work queue;
 *   - k8s-operator: bench/e2e/peers/k8s-operator.mjs on @dot-i/k8s-operator, installed into
 *     bench/e2e/peers (npm ci there) at the first run, not a dependency of rxkube.
 * Medians over rounds; ratios against handwritten are the headline. Saves --out.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { GROUP, NAMESPACE, PLURAL, VERSION } from './counter.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const NODE = process.execPath;
const TICKS_PER_SECOND = 100;
const ALL_VARIANTS = ['rxkube', 'rxkube-before', 'handwritten', 'k8s-operator'] as const;
type Variant = (typeof ALL_VARIANTS)[number];

interface Config {
  readonly ns: readonly number[];
  readonly rounds: number;
  readonly variants: readonly Variant[];
  readonly before: string | undefined;
  readonly timeoutS: number;
  readonly out: string;
}

function parseArgs(argv: readonly string[]): Config {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`bench:e2e: unexpected argument '${arg}'`);
    if (arg === '--quick') flags.set('quick', 'true');
    else flags.set(arg.slice(2), argv[++i] ?? '');
  }
  const quick = flags.has('quick');
  const ns = (flags.get('n') ?? (quick ? '300' : '2000,10000')).split(',').map(Number);
  if (ns.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`bench:e2e: --n must be positive integers separated by commas, got '${flags.get('n')}'`);
  const rounds = Number(flags.get('rounds') ?? (quick ? 1 : 3));
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`bench:e2e: --rounds must be a positive integer, got '${flags.get('rounds')}'`);
  const before = flags.get('before');
  const variants = (flags.get('variants') ?? ALL_VARIANTS.filter((v) => v !== 'rxkube-before' || before).join(',')).split(',') as Variant[];
  for (const v of variants) if (!ALL_VARIANTS.includes(v)) throw new Error(`bench:e2e: unknown variant '${v}' (known: ${ALL_VARIANTS.join(', ')})`);
  if (variants.includes('rxkube-before') && !before) throw new Error('bench:e2e: variant rxkube-before needs --before <tree>');
  const timeoutS = Number(flags.get('timeout-s') ?? 300);
  return { ns, rounds, variants, before, timeoutS, out: flags.get('out') ?? 'bench/results/e2e.json' };
}

// ---- /proc sampling -------------------------------------------------------------------------

function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

function rssMB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function openDescriptors(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

class Sampler {
  peakRssMB = 0;
  peakFds = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 100);
  }
  sample(): void {
    this.peakRssMB = Math.max(this.peakRssMB, rssMB(this.pid));
    this.peakFds = Math.max(this.peakFds, openDescriptors(this.pid));
  }
  /** Peaks since the last reset, then start over (per phase). */
  take(): { peakRssMB: number; peakFds: number } {
    this.sample();
    const taken = { peakRssMB: this.peakRssMB, peakFds: this.peakFds };
    this.peakRssMB = 0;
    this.peakFds = 0;
    return taken;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

// ---- processes ------------------------------------------------------------------------------

function waitForLine(child: ChildProcess, what: string, timeoutMs: number): Promise<string> {
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no ready line in ${timeoutMs} ms`)), timeoutMs);
    const lines = createInterface(child.stdout!);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolveLine(line);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code} before it was ready`)));
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

interface Probe {
  peakHeapMB: number;
  heapAfterGcMB: number | undefined;
  runs: number;
}

function askProbe(child: ChildProcess, gc: boolean): Promise<Probe> {
  return new Promise((resolveProbe) => {
    const timer = setTimeout(() => resolveProbe({ peakHeapMB: Number.NaN, heapAfterGcMB: undefined, runs: Number.NaN }), 5000);
    const onMessage = (message: { type?: string; peakHeap: number; heapAfterGc?: number; runs: number }): void => {
      if (message.type !== 'report') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolveProbe({
        peakHeapMB: message.peakHeap / 2 ** 20,
        heapAfterGcMB: message.heapAfterGc === undefined ? undefined : message.heapAfterGc / 2 ** 20,
        runs: message.runs,
      });
    };
    child.on('message', onMessage);
    child.send({ type: 'report', gc });
  });
}

// ---- variants -------------------------------------------------------------------------------

function compile(tree: string, outName: string): string {
  const benchDir = join(tree, 'bench/e2e');
  if (tree !== ROOT) {
    mkdirSync(join(benchDir, 'variants'), { recursive: true });
    copyFileSync(join(HERE, 'variants/rxkube.ts'), join(benchDir, 'variants/rxkube.ts'));
    copyFileSync(join(HERE, 'tsconfig.build.json'), join(benchDir, 'tsconfig.build.json'));
  }
  const outDir = join(HERE, outName);
  rmSync(outDir, { recursive: true, force: true });
  console.log(`compiling rxkube from ${tree} into ${outDir}`);
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(benchDir, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit', cwd: tree });
  return join(outDir, 'bench/e2e/variants/rxkube.js');
}

function installPeers(): void {
  const peers = join(HERE, 'peers');
  if (existsSync(join(peers, 'node_modules/@dot-i/k8s-operator'))) return;
  console.log('installing the peers into bench/e2e/peers');
  execFileSync('npm', [existsSync(join(peers, 'package-lock.json')) ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: peers, stdio: 'inherit' });
}

function entryPoints(config: Config): Record<Variant, string> {
  const entries = {} as Record<Variant, string>;
  if (config.variants.includes('rxkube')) entries.rxkube = compile(ROOT, '.build');
  if (config.variants.includes('rxkube-before')) {
    const tree = resolve(config.before!);
    if (!existsSync(join(tree, 'node_modules'))) cpSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    entries['rxkube-before'] = compile(tree, '.build-before');
  }
  if (config.variants.includes('handwritten')) entries.handwritten = join(HERE, 'variants/handwritten.mjs');
  if (config.variants.includes('k8s-operator')) {
    installPeers();
    entries['k8s-operator'] = join(HERE, 'peers/k8s-operator.mjs');
  }
  return entries;
}

// ---- the bench's own view of the counters ---------------------------------------------------

interface CounterObject {
  metadata: { name: string; generation: number; resourceVersion: string };
  spec: { value: number };
  status?: { observedGeneration?: number; value?: number };
}

/** Follows every counter over one watch and resolves when all satisfy the predicate. */
class Tracker {
  private readonly objects = new Map<string, CounterObject>();
  private readonly done = new Set<string>();
  private target: ((c: CounterObject) => boolean) | undefined;
  private waiter: (() => void) | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly url: string,
    private readonly dispatcher: Agent,
    private readonly n: number,
  ) {}

  async start(): Promise<void> {
    const base = `${this.url}/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${PLURAL}`;
    const list = (await (await fetch(base, { dispatcher: this.dispatcher })).json()) as { items: CounterObject[]; metadata: { resourceVersion: string } };
    for (const item of list.items) this.objects.set(item.metadata.name, item);
    const response = await fetch(`${base}?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=3600`, {
      dispatcher: this.dispatcher,
      signal: this.abort.signal,
    });
    void this.follow(response.body!);
  }

  private async follow(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of body) {
        // One split per chunk: slicing line by line is quadratic in a chunk of many events.
        const lines = (buffered + decoder.decode(chunk, { stream: true })).split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          if (line.trim() === '') continue;
          const event = JSON.parse(line) as { type: string; object: CounterObject };
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.update(event.object);
        }
      }
    } catch (err) {
      if (!this.abort.signal.aborted) console.error('bench watch failed', err);
    }
  }

  private update(object: CounterObject): void {
    this.objects.set(object.metadata.name, object);
    if (!this.target) return;
    if (this.target(object)) this.done.add(object.metadata.name);
    else this.done.delete(object.metadata.name);
    if (this.done.size === this.n) this.waiter?.();
  }

  /** The mean size of a counter's JSON as the server sends it. */
  averageJsonBytes(): number {
    let total = 0;
    for (const object of this.objects.values()) total += Buffer.byteLength(JSON.stringify(object));
    return Math.round(total / this.objects.size);
  }

  names(): string[] {
    return [...this.objects.keys()];
  }

  value(name: string): number {
    return this.objects.get(name)!.spec.value;
  }

  /** Resolves once every counter satisfies `target` (checked on the current state, then on every event). */
  until(target: (c: CounterObject) => boolean): Promise<void> {
    this.target = target;
    this.done.clear();
    for (const object of this.objects.values()) if (target(object)) this.done.add(object.metadata.name);
    return new Promise((resolveDone) => {
      this.waiter = resolveDone;
      if (this.done.size === this.n) resolveDone();
    });
  }

  pending(): number {
    return this.n - this.done.size;
  }

  stop(): void {
    this.abort.abort();
  }
}

const jsonBytesPerCounter = new Map<number, number>();

const reconciled = (c: CounterObject): boolean => c.status?.observedGeneration === c.metadata.generation && c.status?.value === c.spec.value * 2;

// ---- one measurement ------------------------------------------------------------------------

interface PhaseFigures {
  seconds: number;
  runs: number;
  peakRssMB: number;
  peakHeapMB: number;
  cpuSeconds: number;
  peakFds: number;
  serverCpuSeconds: number;
  timedOut: boolean;
}

interface Measurement {
  variant: Variant;
  n: number;
  round: number;
  phase1: PhaseFigures;
  phase2: PhaseFigures;
  /** The variant's heap after a full GC once phase 1 is done (everything cached, nothing in flight). */
  heapAfterGcMB: number | undefined;
}

async function withTimeout(promise: Promise<void>, seconds: number, pending: () => number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    promise.then(() => false),
    new Promise<boolean>((done) => {
      timer = setTimeout(() => done(true), seconds * 1000);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) console.log(`  timed out after ${seconds} s with ${pending()} counters not reconciled`);
  return timedOut;
}

async function measure(variant: Variant, entry: string, n: number, round: number, config: Config): Promise<Measurement> {
  const kubeconfigFile = join(HERE, '.data', `run-${variant}-${n}-${round}.kubeconfig`);
  // node itself (not the tsx CLI, which runs a child process) so that its pid is the server's.
  const server = spawn(NODE, ['--import', 'tsx', join(HERE, 'server.ts'), '--populate', String(n), '--kubeconfig', kubeconfigFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: ROOT,
  });
  const dispatcher = new Agent({ connections: 16 });
  let child: ChildProcess | undefined;
  try {
    const { url, kubeconfig } = JSON.parse(await waitForLine(server, 'bench server', 600_000)) as { url: string; kubeconfig: string };
    const tracker = new Tracker(url, dispatcher, n);
    await tracker.start();
    jsonBytesPerCounter.set(n, tracker.averageJsonBytes());
    const serverCpu0 = cpuSeconds(server.pid!);
    const phase1Done = tracker.until(reconciled);

    const started = performance.now();
    // E2E_CPU_PROF_DIR: write a CPU profile of each variant process there (it must exit on SIGTERM).
    const profile = process.env['E2E_CPU_PROF_DIR'] ? ['--cpu-prof', '--cpu-prof-dir', join(process.env['E2E_CPU_PROF_DIR'], variant)] : [];
    child = spawn(NODE, [...profile, '--expose-gc', '--import', join(HERE, 'probe.mjs'), entry], {
      env: { ...process.env, KUBECONFIG: kubeconfig, NODE_OPTIONS: '' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      cwd: dirname(entry),
    });
    const sampler = new Sampler(child.pid!);
    const benchCpu1 = process.cpuUsage();
    const trace1 = process.env['E2E_TRACE'] ? setInterval(() => console.log(`  ${variant}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${tracker.pending()} pending, CPU ${cpuSeconds(child!.pid!)} s`), 1000) : undefined;
    const timedOut1 = await withTimeout(phase1Done, config.timeoutS, () => tracker.pending());
    clearInterval(trace1);
    if (process.env['E2E_TRACE']) {
      const used = process.cpuUsage(benchCpu1);
      console.log(`  ${variant}: bench CPU in phase 1 ${((used.user + used.system) / 1e6).toFixed(2)} s`);
    }
    const seconds1 = (performance.now() - started) / 1000;
    const cpu1 = cpuSeconds(child.pid!);
    const serverCpu1 = cpuSeconds(server.pid!);
    const peaks1 = sampler.take();
    const probe1 = await askProbe(child, true);
    const phase1: PhaseFigures = {
      seconds: seconds1,
      runs: probe1.runs,
      peakRssMB: peaks1.peakRssMB,
      peakHeapMB: probe1.peakHeapMB,
      cpuSeconds: cpu1,
      peakFds: peaks1.peakFds,
      serverCpuSeconds: serverCpu1 - serverCpu0,
      timedOut: timedOut1,
    };

    // Phase 2: bump every spec 3 times, as fast as 16 connections allow.
    const names = tracker.names();
    const finalValue = new Map(names.map((name) => [name, tracker.value(name) + 3]));
    const phase2Done = tracker.until((c) => c.spec.value === finalValue.get(c.metadata.name) && reconciled(c));
    const started2 = performance.now();
    const benchCpu2 = process.cpuUsage();
    const basePath = `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${PLURAL}`;
    for (let bump = 1; bump <= 3; bump++) {
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let i = next++; i < names.length; i = next++) {
          const name = names[i]!;
          // undici's request, not fetch: the bench's own CPU per bump competes with the variant's.
          const response = await dispatcher.request({
            origin: url,
            path: `${basePath}/${name}`,
            method: 'PATCH',
            headers: { 'content-type': 'application/merge-patch+json' },
            body: JSON.stringify({ spec: { value: finalValue.get(name)! - 3 + bump } }),
          });
          await response.body.dump();
          if (response.statusCode >= 300) throw new Error(`bump of ${name} answered ${response.statusCode}`);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    }
    const bumpSeconds = (performance.now() - started2) / 1000;
    if (process.env['E2E_TRACE']) console.log(`  ${variant}: bumps done at ${bumpSeconds.toFixed(2)} s, ${tracker.pending()} counters pending`);
    const trace = process.env['E2E_TRACE'] ? setInterval(() => console.log(`  ${variant}: ${((performance.now() - started2) / 1000).toFixed(1)} s, ${tracker.pending()} pending`), 2000) : undefined;
    const timedOut2 = await withTimeout(phase2Done, config.timeoutS, () => tracker.pending());
    const seconds2 = (performance.now() - started2) / 1000;
    clearInterval(trace);
    if (process.env['E2E_TRACE']) {
      const used = process.cpuUsage(benchCpu2);
      console.log(`  ${variant}: bench CPU in phase 2 ${((used.user + used.system) / 1e6).toFixed(2)} s`);
    }
    const peaks2 = sampler.take();
    const probe2 = await askProbe(child, false);
    sampler.stop();
    const phase2: PhaseFigures = {
      seconds: seconds2,
      runs: probe2.runs - probe1.runs,
      peakRssMB: Math.max(peaks1.peakRssMB, peaks2.peakRssMB),
      peakHeapMB: probe2.peakHeapMB,
      cpuSeconds: cpuSeconds(child.pid!) - cpu1,
      peakFds: peaks2.peakFds,
      serverCpuSeconds: cpuSeconds(server.pid!) - serverCpu1,
      timedOut: timedOut2,
    };
    tracker.stop();
    return {
      variant,
      n,
      round,
      phase1,
      phase2,
      heapAfterGcMB: probe1.heapAfterGcMB,
    };
  } finally {
    if (child) await stopProcess(child);
    await stopProcess(server);
    await dispatcher.close();
    rmSync(kubeconfigFile, { force: true });
  }
}

// ---- figures --------------------------------------------------------------------------------

const median = (values: readonly number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;

type Summary = Record<'phase1' | 'phase2', Record<keyof Omit<PhaseFigures, 'timedOut'>, number> & { timeouts: number }> & {
  variant: Variant;
  n: number;
  rounds: number;
  heapAfterGcMB: number;
};

function summarize(measurements: readonly Measurement[]): Summary[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const key = `${m.n} ${m.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.values()].map((ms) => {
    const phase = (p: 'phase1' | 'phase2') => ({
      seconds: round(median(ms.map((m) => m[p].seconds))),
      runs: Math.round(median(ms.map((m) => m[p].runs))),
      peakRssMB: round(median(ms.map((m) => m[p].peakRssMB)), 0),
      peakHeapMB: round(median(ms.map((m) => m[p].peakHeapMB)), 0),
      cpuSeconds: round(median(ms.map((m) => m[p].cpuSeconds))),
      peakFds: Math.round(median(ms.map((m) => m[p].peakFds))),
      serverCpuSeconds: round(median(ms.map((m) => m[p].serverCpuSeconds))),
      timeouts: ms.filter((m) => m[p].timedOut).length,
    });
    return {
      variant: ms[0]!.variant,
      n: ms[0]!.n,
      rounds: ms.length,
      phase1: phase('phase1'),
      phase2: phase('phase2'),
      heapAfterGcMB: round(median(ms.map((m) => m.heapAfterGcMB ?? Number.NaN)), 1),
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
  console.table(
    summaries.map((s) => ({
      n: s.n,
      variant: s.variant,
      'p1 s': s.phase1.seconds,
      'p2 s': s.phase2.seconds,
      'runs p1/p2': `${s.phase1.runs}/${s.phase2.runs}`,
      'peak RSS MB': s.phase2.peakRssMB,
      'peak heap MB': s.phase2.peakHeapMB,
      'CPU s p1/p2': `${s.phase1.cpuSeconds}/${s.phase2.cpuSeconds}`,
      'fds p1/p2': `${s.phase1.peakFds}/${s.phase2.peakFds}`,
      'server CPU s p1/p2': `${s.phase1.serverCpuSeconds}/${s.phase2.serverCpuSeconds}`,
      'heap after GC MB': s.heapAfterGcMB,
      timeouts: s.phase1.timeouts + s.phase2.timeouts,
    })),
  );
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const entries = entryPoints(config);
  const dataDir = join(HERE, '.data');
  mkdirSync(dataDir, { recursive: true });
  console.log(`bench:e2e: N ${config.ns.join(', ')}, ${config.rounds} round(s), variants ${config.variants.join(', ')}, node ${process.version}, ${cpus().length} cpus`);
  const measurements: Measurement[] = [];
  for (const n of config.ns) {
    for (let r = 1; r <= config.rounds; r++) {
      // Interleaved, and rotated per round so no variant always runs first.
      const order = config.variants.map((_, i) => config.variants[(i + r - 1) % config.variants.length]!);
      for (const variant of order) {
        console.log(`N ${n} round ${r}: ${variant}`);
        const m = await measure(variant, entries[variant], n, r, config);
        console.log(
          `  phase 1 ${round(m.phase1.seconds)} s (${m.phase1.runs} runs, CPU ${m.phase1.cpuSeconds} s, fds ${m.phase1.peakFds}, RSS ${round(m.phase1.peakRssMB, 0)} MB), ` +
            `phase 2 ${round(m.phase2.seconds)} s (${m.phase2.runs} runs, CPU ${round(m.phase2.cpuSeconds)} s, fds ${m.phase2.peakFds}, RSS ${round(m.phase2.peakRssMB, 0)} MB)`,
        );
        measurements.push(m);
      }
    }
  }
  const summaries = summarize(measurements);
  printTable(summaries);
  const headline = ratios(summaries);
  console.log('ratios against the hand-written client-node loop (< 1 is better):');
  console.table(headline);
  const objectJsonBytes = Object.fromEntries(jsonBytesPerCounter);
  console.log('JSON bytes per counter as the server sends it:', objectJsonBytes);
  mkdirSync(dirname(resolve(ROOT, config.out)), { recursive: true });
  writeFileSync(
    resolve(ROOT, config.out),
    `${JSON.stringify({ bench: 'e2e', date: new Date().toISOString(), node: process.version, cpus: cpus().length, config, objectJsonBytes, summaries, ratios: headline, measurements }, null, 2)}\n`,
  );
  console.log(`saved ${config.out}`);
}

await main();
