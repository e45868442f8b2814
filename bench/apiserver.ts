/**
 * Benchmark of the embedded API server (lib/apiserver).
 *
 *   npx tsx --expose-gc bench/apiserver.ts [--objects 10000] [--watchers 100] [--updates 10000]
 *                                          [--concurrency 50] [--writes 2000] [--phase all|writes]
 *                                          [--out bench/results/apiserver.json]
 *
 * `--phase writes` runs phase 4 alone and saves to bench/results/apiserver-writes.json.
 *
 * Clients speak raw HTTP/1.1 with a keep-alive agent (not client-node), so the figures measure the
 * server rather than a client library; client and server share one Node process and its event
 * loop, so the server alone would do better. Phases:
 *   1. create `objects` ConfigMaps (5 data keys, 2 labels each), `concurrency` requests in flight;
 *   2. list them: one unpaged list, then pages of 500 (limit/continue);
 *   3. open `watchers` watches on the namespace (from the current resourceVersion), then make
 *      `updates` updates (merge patches changing one key), `concurrency` in flight; the phase ends
 *      when every watcher has received every event. Events delivered/s = watchers x updates over
 *      the time from the first update to the last event received.
 *   4. durability: on fresh servers without and with a data directory (`dataDir`, `--data`),
 *      create `writes` ConfigMaps with 1 writer and with `concurrency` writers; writes/s, and
 *      with the data directory the writes per log flush (fdatasync): concurrent writers share
 *      one flush (group commit), so the cost of durability shrinks as concurrency grows.
 * Memory per stored object: heapUsed growth over phase 1 (collected heap before and after, with
 * --expose-gc), divided by `objects`; it includes the indexes and the watch history ring.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';

interface Config {
  readonly objects: number;
  readonly watchers: number;
  readonly updates: number;
  readonly concurrency: number;
  readonly writes: number;
  /** `all`, or `writes` for phase 4 alone. */
  readonly phase: string;
  readonly out: string;
}

function parseArgs(argv: string[]): Config {
  const cfg = { objects: 10_000, watchers: 100, updates: 10_000, concurrency: 50, writes: 2000, phase: 'all', out: '' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const key = flag.replace(/^--/, '');
    if (!(key in cfg) || value === undefined) throw new Error(`bench/apiserver: unknown option or missing value: ${flag}`);
    if (key === 'out') cfg.out = value;
    else if (key === 'phase') {
      if (value !== 'all' && value !== 'writes') throw new Error(`bench/apiserver: --phase must be all or writes, got ${value}`);
      cfg.phase = value;
    } else {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0) throw new Error(`bench/apiserver: ${flag} must be a positive integer, got ${value}`);
      (cfg as Record<string, number | string>)[key] = n;
    }
    i++;
  }
  cfg.out ||= cfg.phase === 'writes' ? 'bench/results/apiserver-writes.json' : 'bench/results/apiserver.json';
  return cfg;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function call(
  server: ApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, server.url),
      { method, agent, headers: payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Runs `count` tasks with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const CMS = '/api/v1/namespaces/bench/configmaps';

function configMap(i: number): object {
  const data: Record<string, string> = {};
  for (let k = 0; k < 5; k++) data[`key${k}`] = `value-${i}-${k}-${'x'.repeat(20)}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'bench', shard: String(i % 10) } }, data };
}

interface Watcher {
  events: number;
  close(): void;
}

function openWatch(server: ApiServer, rv: string, onEvent: () => void): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const w: Watcher = { events: 0, close: () => req.destroy() };
    const req = request(new URL(`${CMS}?watch=true&resourceVersion=${rv}`, server.url), { method: 'GET' }, (res) => {
      res.on('data', (chunk: Buffer) => {
        // Count lines without parsing: one event per line.
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
          w.events++;
          onEvent();
        }
      });
      res.on('error', () => undefined);
      resolve(w);
    });
    req.on('error', (err) => {
      if (w.events === 0) reject(err);
    });
    req.end();
  });
}

interface WriteFigures {
  writesPerSecond: number;
  /** With a data directory: writes acknowledged per log flush (fdatasync). */
  writesPerFlush?: number;
  failed: number;
}

/** Creates `writes` ConfigMaps on a fresh server with `writers` in flight. */
async function writeThroughput(writes: number, writers: number, dataDir: string | undefined): Promise<WriteFigures> {
  const server = await startApiServer({ clientNode: false, dataDir });
  try {
    await call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    const flushesBefore = server.stats().logFlushes ?? 0;
    let failed = 0;
    const t0 = performance.now();
    await pool(writes, writers, async (i) => {
      const res = await call(server, 'POST', CMS, configMap(i));
      if (res.status !== 201) failed++;
    });
    const seconds = (performance.now() - t0) / 1000;
    const flushes = (server.stats().logFlushes ?? 0) - flushesBefore;
    return {
      writesPerSecond: Math.round(writes / seconds),
      ...(dataDir ? { writesPerFlush: Number((writes / flushes).toFixed(1)) } : {}),
      failed,
    };
  } finally {
    await server.close();
  }
}

async function durability(cfg: Config): Promise<Record<string, WriteFigures>> {
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-bench-'));
  const out: Record<string, WriteFigures> = {};
  try {
    for (const writers of [1, cfg.concurrency]) {
      out[`memory, ${writers} writers`] = await writeThroughput(cfg.writes, writers, undefined);
      out[`dataDir, ${writers} writers`] = await writeThroughput(cfg.writes, writers, join(dir, `data-${writers}`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function writeRows(cfg: Config, writes: Record<string, WriteFigures>): [string, string][] {
  return Object.entries(writes).map(([k, w]): [string, string] => [
    `create ${cfg.writes}, ${k}`,
    `${w.writesPerSecond} writes/s${w.writesPerFlush !== undefined ? ` (${w.writesPerFlush} writes per fdatasync)` : ''}`,
  ]);
}

function save(cfg: Config, results: object, rows: [string, string][]): void {
  const report = {
    bench: 'apiserver',
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage1m: Number(loadavg()[0]?.toFixed(2)),
    gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
    client: 'raw http (keep-alive agent), same process',
    config: cfg,
    results,
  };
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(
    `rxkube apiserver benchmark (node ${process.version}, ${cpus().length} cpus; ${report.client}; load ${report.loadAverage1m})`,
  );
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`saved ${cfg.out}`);
}

async function main(): Promise<void> {
  const cfg = parseArgs(process.argv.slice(2));
  if (cfg.phase === 'writes') {
    const writes = await durability(cfg);
    save(cfg, { writes }, writeRows(cfg, writes));
    return;
  }
  const gcExposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  const server = await startApiServer({ historySize: Math.max(10_000, cfg.updates + cfg.objects), clientNode: false });
  await call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });

  // 1. creates
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let t0 = performance.now();
  let failures = 0;
  await pool(cfg.objects, cfg.concurrency, async (i) => {
    const res = await call(server, 'POST', CMS, configMap(i));
    if (res.status !== 201) failures++;
  });
  const createSeconds = (performance.now() - t0) / 1000;
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const bytesPerObject = (heapAfter - heapBefore) / cfg.objects;

  // 2. lists
  t0 = performance.now();
  const full = await call(server, 'GET', CMS);
  const fullListMs = performance.now() - t0;
  const fullCount = (JSON.parse(full.body) as { items: unknown[] }).items.length;
  t0 = performance.now();
  let paged = 0;
  let token: string | undefined;
  do {
    const res = await call(server, 'GET', `${CMS}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    const page = JSON.parse(res.body) as { items: unknown[]; metadata: { continue?: string } };
    paged += page.items.length;
    token = page.metadata.continue;
  } while (token);
  const pagedListMs = performance.now() - t0;

  // 3. watchers + updates
  const rv = String(server.stats().resourceVersion);
  const expected = cfg.watchers * cfg.updates;
  let received = 0;
  let lastEventAt = 0;
  let allDelivered: () => void = () => undefined;
  const delivered = new Promise<void>((resolve) => (allDelivered = resolve));
  const watchers: Watcher[] = [];
  for (let i = 0; i < cfg.watchers; i++) {
    watchers.push(
      await openWatch(server, rv, () => {
        received++;
        lastEventAt = performance.now();
        if (received === expected) allDelivered();
      }),
    );
  }
  t0 = performance.now();
  await pool(cfg.updates, cfg.concurrency, async (i) => {
    const res = await call(
      server,
      'PATCH',
      `${CMS}/cm-${i % cfg.objects}`,
      { data: { key0: `updated-${i}` } },
      'application/merge-patch+json',
    );
    if (res.status !== 200) failures++;
  });
  const updateSeconds = (performance.now() - t0) / 1000;
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 120_000).unref());
  await Promise.race([delivered, timeout]);
  const deliverySeconds = (lastEventAt - t0) / 1000;
  for (const w of watchers) w.close();
  const stats = server.stats();
  await server.close();
  agent.destroy();

  // 4. durability
  const writes = await durability(cfg);

  const results = {
    createRequestsPerSecond: Math.round(cfg.objects / createSeconds),
    createSeconds: Number(createSeconds.toFixed(2)),
    fullListMs: Number(fullListMs.toFixed(1)),
    fullListItems: fullCount,
    fullListBytes: full.body.length,
    pagedListMs: Number(pagedListMs.toFixed(1)),
    pagedListItems: paged,
    updateRequestsPerSecond: Math.round(cfg.updates / updateSeconds),
    updateSecondsWithWatchers: Number(updateSeconds.toFixed(2)),
    watchEventsDelivered: received,
    watchEventsExpected: expected,
    watchEventsPerSecond: Math.round(received / deliverySeconds),
    deliverySeconds: Number(deliverySeconds.toFixed(2)),
    bytesPerStoredObject: Math.round(bytesPerObject),
    failedRequests: failures,
    finalResourceVersion: stats.resourceVersion,
    writes,
  };
  const rows: [string, string][] = [
    [`create ${cfg.objects} ConfigMaps`, `${results.createRequestsPerSecond} req/s (${results.createSeconds} s)`],
    [`list ${fullCount} (one response, ${(results.fullListBytes / 1e6).toFixed(1)} MB)`, `${results.fullListMs} ms`],
    [`list ${paged} in pages of 500`, `${results.pagedListMs} ms`],
    [
      `update ${cfg.updates} with ${cfg.watchers} watchers`,
      `${results.updateRequestsPerSecond} req/s (${results.updateSecondsWithWatchers} s)`,
    ],
    [`watch events delivered`, `${received}/${expected} in ${results.deliverySeconds} s = ${results.watchEventsPerSecond} events/s`],
    [`memory per stored object`, `${results.bytesPerStoredObject} bytes${gcExposed ? '' : ' (no --expose-gc: noisy)'}`],
    ...writeRows(cfg, writes),
    [`failed requests`, String(failures + Object.values(writes).reduce((n, w) => n + w.failed, 0))],
  ];
  save(cfg, results, rows);
  if (received !== expected) process.exitCode = 1;
}

await main();
