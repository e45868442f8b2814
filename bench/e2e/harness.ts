/**
 * What the end-to-end benches share (bench:e2e, bench:shards): the bench server in its own
 * process, /proc sampling of a process, the preloaded probe's report, compiling rxkube with tsc,
 * the bench's own watch of the counters and the update storm of phase 2.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { GROUP, NAMESPACE, PLURAL, VERSION } from './counter.js';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '../..');
export const NODE = process.execPath;
const TICKS_PER_SECOND = 100;

/** `--name value` pairs, and the given switches (`--quick`) as 'true'; anything else is an error naming the bench. */
export function readFlags(bench: string, argv: readonly string[], switches: readonly string[] = []): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`${bench}: unexpected argument '${arg}'`);
    if (switches.includes(arg.slice(2))) flags.set(arg.slice(2), 'true');
    else flags.set(arg.slice(2), argv[++i] ?? '');
  }
  return flags;
}

/** A comma-separated list of positive integers (0 too with `orZero`), or an error naming the flag. */
export function positiveIntegers(bench: string, flag: string, text: string, orZero = false): number[] {
  const values = text.split(',').map(Number);
  const least = orZero ? 0 : 1;
  if (values.some((v) => !Number.isInteger(v) || v < least)) {
    throw new Error(`${bench}: --${flag} must be ${orZero ? 'non-negative' : 'positive'} integers separated by commas, got '${text}'`);
  }
  return values;
}

// ---- /proc sampling -------------------------------------------------------------------------

export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * The main thread's time on a CPU and waiting for one (runnable, not scheduled), in seconds, from
 * /proc/<pid>/schedstat. Their sum over a phase's wall time near 1 means the event loop always
 * had work: the process was the limit, even where the machine's load let it run only part of it.
 */
export function schedSeconds(pid: number): { running: number; waiting: number } {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { running: running / 1e9, waiting: waiting / 1e9 };
  } catch {
    return { running: Number.NaN, waiting: Number.NaN };
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

/** The 1-minute load average (the machine is shared: figures mean little without it). */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/** Peak RSS and open descriptors of one process, sampled every 100 ms. */
export class Sampler {
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

/**
 * Spawns `command`, bound to the CPUs given (a taskset list such as '1' or '0-1') when there are.
 * taskset execs the command, so the child's pid is the command's own (what /proc sampling reads).
 */
export function spawnPinned(cpus: string | undefined, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return cpus === undefined ? spawn(command, args, options) : spawn('taskset', ['--cpu-list', cpus, command, ...args], options);
}

export function waitForLine(child: ChildProcess, what: string, timeoutMs: number): Promise<string> {
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

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export interface BenchServer {
  readonly process: ChildProcess;
  readonly url: string;
  readonly kubeconfig: string;
}

/** The embedded API server in a process of its own (bench/e2e/server.ts), with the CRD and `n` counters. */
export async function startBenchServer(n: number, kubeconfigFile: string, cpus?: string): Promise<BenchServer> {
  // node itself (not the tsx CLI, which runs a child process) so that its pid is the server's.
  const server = spawnPinned(
    cpus,
    NODE,
    // rxkube-source: the apiserver package's TypeScript sources, as the specs run them (no build needed).
    ['--import', 'tsx', '--conditions=rxkube-source', join(HERE, 'server.ts'), '--populate', String(n), '--kubeconfig', kubeconfigFile],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: ROOT,
    },
  );
  try {
    const { url, kubeconfig } = JSON.parse(await waitForLine(server, 'bench server', 600_000)) as { url: string; kubeconfig: string };
    return { process: server, url, kubeconfig };
  } catch (err) {
    await stopProcess(server);
    rmSync(kubeconfigFile, { force: true });
    throw err;
  }
}

// ---- the probe preloaded into variant processes (probe.mjs) ----------------------------------

/** process.memoryUsage() in MB: what the RSS consisted of. */
export interface MemoryBreakdown {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** The used size of v8's heap spaces: young objects, survivors (and garbage not yet collected), large objects. */
  newSpace: number;
  oldSpace: number;
  largeObjectSpace: number;
}

export interface Probe {
  peakHeapMB: number;
  heapAfterGcMB: number | undefined;
  /** The RSS after that full GC: what the variant settles at. */
  rssAfterGcMB: number | undefined;
  /** The probe's memory sample (every 250 ms) with the highest RSS since the last report. */
  atPeakRss: MemoryBreakdown | undefined;
  runs: number;
  /** Status writes, where the variant counts them (bench:shards' replicas). */
  writes: number;
  /** Distinct counters written since the last report, where the variant records them. */
  resources: number;
}

/** Asks the probe for its figures; `gc` runs a full GC first (heap after GC). */
export function askProbe(child: ChildProcess, gc: boolean): Promise<Probe> {
  return new Promise((resolveProbe) => {
    const timer = setTimeout(
      () =>
        resolveProbe({
          peakHeapMB: Number.NaN,
          heapAfterGcMB: undefined,
          rssAfterGcMB: undefined,
          atPeakRss: undefined,
          runs: Number.NaN,
          writes: Number.NaN,
          resources: Number.NaN,
        }),
      // A heap snapshot (probe.mjs) of a large heap takes a while to write.
      process.env['E2E_HEAP_SNAPSHOT_DIR'] ? 300_000 : 5000,
    );
    const onMessage = (message: {
      type?: string;
      peakHeap: number;
      heapAfterGc?: number;
      rssAfterGc?: number;
      atPeakRss?: Record<keyof MemoryBreakdown, number>;
      runs: number;
      writes?: number;
      resources?: number;
    }): void => {
      if (message.type !== 'report') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolveProbe({
        peakHeapMB: message.peakHeap / 2 ** 20,
        heapAfterGcMB: message.heapAfterGc === undefined ? undefined : message.heapAfterGc / 2 ** 20,
        rssAfterGcMB: message.rssAfterGc === undefined ? undefined : message.rssAfterGc / 2 ** 20,
        atPeakRss: message.atPeakRss && inMB(message.atPeakRss),
        runs: message.runs,
        writes: message.writes ?? Number.NaN,
        resources: message.resources ?? Number.NaN,
      });
    };
    child.on('message', onMessage);
    // A variant that has exited (out of memory, say) has no channel: its figures stay NaN, the bench goes on.
    if (!child.connected) return;
    child.send({ type: 'report', gc }, (error) => {
      if (error) console.log(`  the probe could not be asked: ${error.message}`);
    });
  });
}

const inMB = (usage: Record<keyof MemoryBreakdown, number>): MemoryBreakdown => ({
  rss: round(usage.rss / 2 ** 20, 1),
  heapTotal: round(usage.heapTotal / 2 ** 20, 1),
  heapUsed: round(usage.heapUsed / 2 ** 20, 1),
  external: round(usage.external / 2 ** 20, 1),
  arrayBuffers: round(usage.arrayBuffers / 2 ** 20, 1),
  newSpace: round(usage.newSpace / 2 ** 20, 1),
  oldSpace: round(usage.oldSpace / 2 ** 20, 1),
  largeObjectSpace: round(usage.largeObjectSpace / 2 ** 20, 1),
});

// ---- compiling rxkube -----------------------------------------------------------------------

/** Compiles the project `tsconfig` (run in `cwd`) with this tree's tsc into a fresh `outDir`. */
export function compileInto(tsconfig: string, outDir: string, cwd: string): void {
  rmSync(outDir, { recursive: true, force: true });
  console.log(`compiling ${tsconfig} into ${outDir}`);
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', tsconfig, '--outDir', outDir], { stdio: 'inherit', cwd });
}

// ---- the bench's own view of the counters ---------------------------------------------------

export interface CounterObject {
  metadata: { name: string; generation: number; resourceVersion: string };
  spec: { value: number };
  status?: { observedGeneration?: number; value?: number };
}

export const reconciled = (c: CounterObject): boolean =>
  c.status?.observedGeneration === c.metadata.generation && c.status?.value === c.spec.value * 2;

const COUNTERS_PATH = `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${PLURAL}`;

/** Follows every counter over one watch and resolves when all satisfy the predicate. */
export class Tracker {
  private readonly objects = new Map<string, CounterObject>();
  private readonly done = new Set<string>();
  private target: ((c: CounterObject) => boolean) | undefined;
  private waiter: (() => void) | undefined;
  private readonly abort = new AbortController();
  /** Told every counter the watch reports (after the tracker's own bookkeeping). */
  onUpdate: ((c: CounterObject) => void) | undefined;
  /** Changes the watch reported (every write: the bench's patches and the variant's status writes). */
  events = 0;
  /** When the watch first saw a counter reconciled (performance.now()). */
  firstReconciledAt: number | undefined;

  constructor(
    private readonly url: string,
    private readonly dispatcher: Agent,
    private readonly n: number,
  ) {}

  async start(): Promise<void> {
    const base = `${this.url}${COUNTERS_PATH}`;
    const list = (await (await fetch(base, { dispatcher: this.dispatcher })).json()) as {
      items: CounterObject[];
      metadata: { resourceVersion: string };
    };
    for (const item of list.items) this.objects.set(item.metadata.name, item);
    if (list.items.some(reconciled)) this.firstReconciledAt = performance.now();
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
    this.events++;
    if (this.firstReconciledAt === undefined && reconciled(object)) this.firstReconciledAt = performance.now();
    this.objects.set(object.metadata.name, object);
    this.onUpdate?.(object);
    if (!this.target) return;
    if (this.target(object)) this.done.add(object.metadata.name);
    else this.done.delete(object.metadata.name);
    if (this.done.size === this.n) this.waiter?.();
  }

  /** The mean size of a counter's JSON as the server sends it. */
  averageJsonBytes(): number {
    let total = 0;
    for (const object of this.objects.values()) total += Buffer.byteLength(JSON.stringify(object));
    return this.objects.size === 0 ? 0 : Math.round(total / this.objects.size);
  }

  object(name: string): CounterObject | undefined {
    return this.objects.get(name);
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

/** Resolves true when `promise` did not settle within `seconds` (and says how many counters were left). */
export async function withTimeout(promise: Promise<void>, seconds: number, pending: () => number): Promise<boolean> {
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

/**
 * Phase 2's update storm: every spec bumped 3 times, as fast as 16 connections allow. Returns
 * the phase's target: every counter at its last bump and reconciled.
 */
export async function bumpEverySpec(tracker: Tracker, url: string, dispatcher: Agent): Promise<(c: CounterObject) => boolean> {
  const names = tracker.names();
  const finalValue = new Map(names.map((name) => [name, tracker.value(name) + 3]));
  for (let bump = 1; bump <= 3; bump++) {
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < names.length; i = next++) {
        const name = names[i];
        // undici's request, not fetch: the bench's own CPU per bump competes with the variant's.
        const response = await dispatcher.request({
          origin: url,
          path: `${COUNTERS_PATH}/${name}`,
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
  return (c) => c.spec.value === finalValue.get(c.metadata.name) && reconciled(c);
}

/**
 * Fresh changes during phase 1: every `everyMs` one counter not changed before gets a new spec
 * (a merge patch), while the variant works through the initial list. The latency of each is
 * from the bench's watch seeing the change (the variant's watch sees it about then) to the
 * bench's watch seeing its status reconciled.
 */
export class FreshChanges {
  private readonly changed = new Map<string, { generation: number; eventAt: number | undefined }>();
  private readonly done: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly tracker: Tracker,
    private readonly url: string,
    private readonly dispatcher: Agent,
    private readonly random: () => number,
  ) {
    tracker.onUpdate = (object) => this.observe(object);
  }

  start(everyMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => void this.change().catch((err: unknown) => console.error('fresh change failed', err)), everyMs);
  }

  /** No more changes; the latencies of the ones reconciled so far. */
  stop(): number[] {
    this.stopped = true;
    clearInterval(this.timer);
    return [...this.done];
  }

  private async change(): Promise<void> {
    const names = this.tracker.names();
    if (this.stopped || names.length === 0 || this.changed.size >= names.length) return;
    let name: string;
    do name = names[Math.floor(this.random() * names.length)]!;
    while (this.changed.has(name));
    const before = this.tracker.object(name)!;
    this.changed.set(name, { generation: before.metadata.generation, eventAt: undefined });
    const response = await this.dispatcher.request({
      origin: this.url,
      path: `${COUNTERS_PATH}/${name}`,
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { value: before.spec.value + 1_000_000 } }),
    });
    await response.body.dump();
    if (response.statusCode >= 300) throw new Error(`fresh change of ${name} answered ${response.statusCode}`);
  }

  private observe(object: CounterObject): void {
    const entry = this.changed.get(object.metadata.name);
    if (!entry || object.metadata.generation <= entry.generation) return;
    const now = performance.now();
    entry.eventAt ??= now;
    if (reconciled(object) && !this.stopped) {
      this.done.push(now - entry.eventAt);
      entry.generation = Number.POSITIVE_INFINITY; // counted once
    }
  }
}

/** The p-th percentile (0–100) by nearest rank; NaN for no values. */
export const percentile = (values: readonly number[], p: number): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/** A small seeded generator (mulberry32): the same counters change in every round and variant. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- figures --------------------------------------------------------------------------------

export const median = (values: readonly number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
