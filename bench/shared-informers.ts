/**
 * Watches, lists and heap of one operator with two controllers on ConfigMaps (issue 11).
 *
 *   npm run bench:shared-informers -- [--n 3000] [--bytes 1000] [--out bench/results/shared-informers.json]
 *
 * The embedded API server serves N ConfigMaps of about `bytes` of data each. One operator
 * registers two controllers on ConfigMaps (same namespaces, same selectors, default transform)
 * whose reconcilers do nothing, starts, and waits until both have run once for every ConfigMap.
 * Reported: the list and watch requests the server saw for ConfigMaps (its request log), and the
 * heap growth between a full GC before `start()` and one after every run. The server runs in this
 * process and its objects exist before the first GC, so the growth is the operator's caches and
 * the per-watch state on both ends.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { firstValueFrom, filter, scan } from 'rxjs';
import { UpdateControl, type Reconciler } from '../lib/controller/index.js';
import { createLogger } from '../lib/observe/index.js';
import { startTestCluster } from '../lib/testing/cluster/index.js';
import { flag, settledHeap as heapAfterGc } from './heap.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;
const NAMESPACE = 'bench';

const settledHeap = (): number => heapAfterGc('shared-informers');

async function main(): Promise<void> {
  const n = Number(flag('n', '3000'));
  const bytes = Number(flag('bytes', '1000'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${flag('n', '')}`);
  if (!Number.isInteger(bytes) || bytes < 0) throw new Error(`--bytes must be a non-negative integer, got ${flag('bytes', '')}`);
  const out = flag('out', 'bench/results/shared-informers.json');
  const cluster = await startTestCluster({ bookmarkIntervalMs: 3_600_000 });
  try {
    const configMaps = cluster.client.resource<V1ConfigMap>(CONFIGMAPS);
    await cluster.client
      .resource({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false })
      .create({ metadata: { name: NAMESPACE } });
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < n; i = next++) {
        await configMaps.create({ metadata: { name: `cm-${i}`, namespace: NAMESPACE }, data: { payload: 'x'.repeat(bytes) } });
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));

    const operator = cluster.operator({ logger: createLogger({ level: 'silent' }) });
    const noop: Reconciler<V1ConfigMap> = { reconcile: () => UpdateControl.noUpdate() };
    const runs = ['first', 'second'].map((name) => {
      const registered = operator.register(noop, { name, resource: CONFIGMAPS, namespaces: [NAMESPACE] });
      return firstValueFrom(
        registered.outcome$.pipe(
          scan((seen, outcome) => seen.add(outcome.id.name), new Set<string>()),
          filter((seen) => seen.size === n),
        ),
      );
    });
    cluster.server.requests.reset();
    const before = settledHeap();
    const started = performance.now();
    await operator.start();
    await Promise.all(runs);
    const startMs = Math.round(performance.now() - started);
    // Watches open after the lists answered: wait until no new one has come for a second.
    const watches = () => cluster.server.requests.count({ verb: 'watch', resource: 'configmaps' });
    for (let seen = -1; seen !== watches();) {
      seen = watches();
      await new Promise((done) => setTimeout(done, 1000));
    }
    const after = settledHeap();
    const result = {
      configMaps: n,
      dataBytes: bytes,
      controllers: 2,
      watches: watches(),
      lists: cluster.server.requests.count({ verb: 'list', resource: 'configmaps' }),
      heapGrowthMiB: Math.round(((after - before) / 2 ** 20) * 10) / 10,
      startAndFirstRunsMs: startMs,
    };
    console.log(result);
    mkdirSync(dirname(resolve(ROOT, out)), { recursive: true });
    writeFileSync(
      resolve(ROOT, out),
      `${JSON.stringify({ bench: 'shared-informers', date: new Date().toISOString(), node: process.version, result }, null, 2)}\n`,
    );
    console.log(`saved ${out}`);
  } finally {
    await cluster.close();
  }
}

await main();
