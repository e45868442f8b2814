/**
 * Benchmark of the per-resource scheduler (lib/processing) against a naive RxJS pipeline.
 *
 *   npx tsx bench/processing.ts [--resources 10000] [--events 100] [--bursts 10] [--gap-ms 50]
 *                               [--run-ms 1] [--concurrency 50] [--no-naive] [--only sync|async|naive]
 *                               [--out bench/results/processing.json]
 *
 * Workload: `resources` primary resources each get `events` modify events, delivered in `bursts`
 * bursts (each burst emits events/bursts events per resource, interleaved across resources,
 * synchronously), `gap-ms` apart. The reconciler is async: a promise resolved by setTimeout(run-ms)
 * on the real clock (asyncScheduler), except in the synchronous variant. Variants, run one after
 * the other in one process:
 *   - reconcileEach with a synchronous reconciler (returns at once): one run per event, so its
 *     events/s is the scheduling core's own per-run cost (timers, queue, outcome)
 *   - reconcileEach with maxConcurrentReconciliations = --concurrency (the production default is 50)
 *   - reconcileEach with maxConcurrentReconciliations = resources (no global bound, like the baseline)
 *   - naive baseline: groupBy(resource) + one concatMap per resource: one run per event, no coalescing
 * Figures: events/s (events / wall time from the first event until every run has finished), runs
 * per event (coalescing), p50/p99 latency from an event's arrival to the start of the first run
 * that covers it, peak heap growth over the pre-phase baseline (heapUsed, sampled every 10 ms).
 * Run with --expose-gc (`npx tsx --expose-gc bench/processing.ts`) so each phase starts from a
 * collected heap; without it the heap figures are noisier. Writes the figures to --out.
 * The full default run takes about 30 s on 2 cores; the naive baseline is most of it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { concatMap, from, groupBy, lastValueFrom, mergeMap, Observable, Subject } from 'rxjs';
import type { ResourceEvent } from '../lib/core/events.js';
import type { ResourceID } from '../lib/core/resource.js';
import { reconcileEach } from '../lib/processing/index.js';

interface Config {
  readonly resources: number;
  readonly events: number;
  readonly bursts: number;
  readonly gapMs: number;
  readonly runMs: number;
  readonly concurrency: number;
  readonly naive: boolean;
  readonly only: 'sync' | 'async' | 'naive' | undefined;
  readonly out: string;
}

function parseArgs(argv: readonly string[]): Config {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    if (arg === '--no-naive') flags.set('no-naive', 'true');
    else flags.set(arg.slice(2), argv[++i] ?? '');
  }
  const num = (name: string, fallback: number, min: number): number => {
    const raw = flags.get(name);
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}, got ${raw}`);
    return value;
  };
  const config: Config = {
    resources: num('resources', 10_000, 1),
    events: num('events', 100, 1),
    bursts: num('bursts', 10, 1),
    gapMs: num('gap-ms', 50, 0),
    runMs: num('run-ms', 1, 0),
    concurrency: num('concurrency', 50, 1),
    naive: !flags.has('no-naive'),
    only: onlyFlag(flags.get('only')),
    out: flags.get('out') ?? 'bench/results/processing.json',
  };
  if (config.events % config.bursts !== 0) throw new Error('--events must be a multiple of --bursts');
  return config;
}

function onlyFlag(raw: string | undefined): Config['only'] {
  if (raw === undefined || raw === 'sync' || raw === 'async' || raw === 'naive') return raw;
  throw new Error(`--only must be sync, async or naive, got ${raw}`);
}

/** Event arrival times and run-start coverage, per resource, in flat typed arrays. */
class LatencyBook {
  private readonly arrivals: Float64Array;
  private readonly arrived: Uint32Array;
  private readonly covered: Uint32Array;
  readonly latencies: Float64Array;
  private latencyCount = 0;
  runs = 0;

  constructor(
    private readonly resources: number,
    private readonly perResource: number,
  ) {
    this.arrivals = new Float64Array(resources * perResource);
    this.latencies = new Float64Array(resources * perResource);
    this.arrived = new Uint32Array(resources);
    this.covered = new Uint32Array(resources);
  }

  arrive(resource: number, at: number): void {
    this.arrivals[resource * this.perResource + this.arrived[resource]] = at;
    this.arrived[resource]++;
  }

  /** A run started that sees every event arrived so far (coalescing) or only the next one (naive). */
  start(resource: number, at: number, coversAll: boolean): void {
    this.runs++;
    const base = resource * this.perResource;
    const until = coversAll ? this.arrived[resource] : Math.min(this.covered[resource] + 1, this.arrived[resource]);
    for (let i = this.covered[resource]; i < until; i++) this.latencies[this.latencyCount++] = at - this.arrivals[base + i];
    this.covered[resource] = until;
  }

  percentiles(): { p50: number; p99: number; max: number; uncovered: number } {
    const sorted = this.latencies.slice(0, this.latencyCount).sort();
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return {
      p50: at(0.5),
      p99: at(0.99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      uncovered: this.resources * this.perResource - this.latencyCount,
    };
  }
}

class HeapSampler {
  private readonly baseline: number;
  private peak: number;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    (globalThis as { gc?: () => void }).gc?.();
    this.baseline = process.memoryUsage().heapUsed;
    this.peak = this.baseline;
    this.timer = setInterval(() => this.sample(), 10);
  }

  sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage().heapUsed);
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak - this.baseline;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Emits the bursts into `events$`, recording arrivals, then completes it. */
async function produce(config: Config, ids: readonly ResourceID[], events$: Subject<ResourceEvent>, book: LatencyBook): Promise<void> {
  const perBurst = config.events / config.bursts;
  for (let burst = 0; burst < config.bursts; burst++) {
    if (burst > 0) await sleep(config.gapMs);
    for (let k = 0; k < perBurst; k++) {
      for (let r = 0; r < ids.length; r++) {
        book.arrive(r, performance.now());
        events$.next({ id: ids[r], source: 'primary', action: 'modified', primary: true });
      }
    }
  }
  events$.complete();
}

interface Figures {
  readonly variant: string;
  readonly events: number;
  readonly runs: number;
  readonly runsPerEvent: number;
  readonly wallSeconds: number;
  readonly eventsPerSecond: number;
  readonly p50LatencyMs: number;
  readonly p99LatencyMs: number;
  readonly maxLatencyMs: number;
  readonly peakHeapMB: number;
}

async function measure(
  variant: string,
  config: Config,
  pipeline: (events$: Observable<ResourceEvent>, book: LatencyBook, indexOf: (id: ResourceID) => number) => Observable<unknown>,
): Promise<Figures> {
  const ids: ResourceID[] = Array.from({ length: config.resources }, (_, i) => ({ name: `r${i}`, namespace: 'bench' }));
  const index = new Map(ids.map((id, i) => [id, i]));
  const indexOf = (id: ResourceID) => index.get(id)!;
  const book = new LatencyBook(config.resources, config.events);
  const heap = new HeapSampler();
  const events$ = new Subject<ResourceEvent>();
  const started = performance.now();
  const done = lastValueFrom(pipeline(events$, book, indexOf), { defaultValue: undefined });
  await produce(config, ids, events$, book);
  heap.sample();
  await done;
  const wall = (performance.now() - started) / 1000;
  const peakHeap = heap.stop();
  const total = config.resources * config.events;
  const { p50, p99, max, uncovered } = book.percentiles();
  if (uncovered !== 0) throw new Error(`${variant}: ${uncovered} events were never covered by a run`);
  return {
    variant,
    events: total,
    runs: book.runs,
    runsPerEvent: round(book.runs / total, 4),
    wallSeconds: round(wall, 2),
    eventsPerSecond: Math.round(total / wall),
    p50LatencyMs: round(p50, 1),
    p99LatencyMs: round(p99, 1),
    maxLatencyMs: round(max, 1),
    peakHeapMB: round(peakHeap / 2 ** 20, 1),
  };
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

function reconciler(runMs: number): () => Promise<void> {
  return () => new Promise<void>((resolve) => setTimeout(resolve, runMs));
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const work = reconciler(config.runMs);
  console.log(
    `processing bench: ${config.resources} resources x ${config.events} events in ${config.bursts} bursts ${config.gapMs} ms apart, ` +
      `reconciler ${config.runMs} ms (setTimeout), node ${process.version}, ${cpus().length} cpus`,
  );
  const results: Figures[] = [];

  const coalescing =
    (maxConcurrentReconciliations: number) =>
    (events$: Observable<ResourceEvent>, book: LatencyBook, indexOf: (id: ResourceID) => number) =>
      events$.pipe(
        reconcileEach(
          (id) => {
            book.start(indexOf(id), performance.now(), true);
            return work();
          },
          { maxConcurrentReconciliations },
        ),
      );

  const wanted = (variant: NonNullable<Config['only']>) => config.only === undefined || config.only === variant;
  if (wanted('sync')) {
    results.push(
      await measure(
        `reconcileEach, synchronous run (maxConcurrentReconciliations ${config.concurrency})`,
        config,
        (events$, book, indexOf) =>
          events$.pipe(
            reconcileEach(
              (id) => {
                book.start(indexOf(id), performance.now(), true);
              },
              { maxConcurrentReconciliations: config.concurrency },
            ),
          ),
      ),
    );
    console.log(results.at(-1));
  }
  if (wanted('async')) {
    results.push(
      await measure(`reconcileEach (maxConcurrentReconciliations ${config.concurrency})`, config, coalescing(config.concurrency)),
    );
    console.log(results.at(-1));
    results.push(await measure(`reconcileEach (maxConcurrentReconciliations ${config.resources})`, config, coalescing(config.resources)));
    console.log(results.at(-1));
  }
  if (config.naive && wanted('naive')) {
    results.push(
      await measure('naive groupBy + concatMap', config, (events$, book, indexOf) =>
        events$.pipe(
          groupBy((event) => event.id),
          mergeMap((group$) =>
            group$.pipe(
              concatMap((event) => {
                book.start(indexOf(event.id), performance.now(), false);
                return from(work());
              }),
            ),
          ),
        ),
      ),
    );
    console.log(results.at(-1));
  }

  printTable(results);
  const naive = results.find((r) => r.variant.startsWith('naive'));
  const ratios = naive
    ? results
        .filter((r) => r !== naive)
        .map((r) => ({
          variant: r.variant,
          runsVsNaive: round(r.runs / naive.runs, 4),
          eventsPerSecondVsNaive: round(r.eventsPerSecond / naive.eventsPerSecond, 2),
          p50LatencyVsNaive: round(r.p50LatencyMs / naive.p50LatencyMs, 3),
          p99LatencyVsNaive: round(r.p99LatencyMs / naive.p99LatencyMs, 3),
          peakHeapVsNaive: round(r.peakHeapMB / naive.peakHeapMB, 2),
        }))
    : [];
  if (ratios.length > 0) console.table(ratios);
  mkdirSync(dirname(config.out), { recursive: true });
  writeFileSync(
    config.out,
    `${JSON.stringify(
      {
        bench: 'processing',
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
        config,
        results,
        ratios,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`saved ${config.out}`);
}

function printTable(results: readonly Figures[]): void {
  console.table(
    results.map((r) => ({
      variant: r.variant,
      'events/s': r.eventsPerSecond,
      runs: r.runs,
      'runs/event': r.runsPerEvent,
      'wall s': r.wallSeconds,
      'p50 ms': r.p50LatencyMs,
      'p99 ms': r.p99LatencyMs,
      'peak heap MB': r.peakHeapMB,
    })),
  );
}

await main();
