/**
 * What a secondary source of ConfigMaps with data costs in the heap: whole objects (the default
 * transform) against metadata only (`metadataOnly`, PartialObjectMetadata), and what a list costs
 * at its peak: a watch-list (streamed into the store) against paged lists.
 *
 *   npm run bench:metadata-cache -- [--n 20000] [--bytes 1024] [--out bench/results/metadata-cache.json]
 *
 * An embedded API server in a process of its own serves N ConfigMaps of about `bytes` of data
 * each. In this process an informer lists and watches them; heap after full GCs before the informer
 * starts and after it synced, divided by N, is the heap per cached object. The peak of a list is
 * the highest heap in use sampled every 2 ms while the informer syncs, less the heap before it
 * started (garbage not collected yet included, as a container's memory limit sees it). Each
 * variant runs in a fresh informer after an uncounted warm-up one, and every informer runs to the
 * end, so that each variant's heap is its own store's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinResources, loadKubeConfig } from '../lib/kube/index.js';
import { informer } from '../lib/cache/index.js';
import { startConfigMapServer } from './configmap-server.js';
import { flag, settledHeap as heapAfterGc } from './heap.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const settledHeap = (): number => heapAfterGc('metadata-cache');

interface Variant {
  readonly name: string;
  readonly metadataOnly: boolean;
  readonly watchList: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'warm-up', metadataOnly: false, watchList: true },
  { name: 'whole objects, watch-list', metadataOnly: false, watchList: true },
  { name: 'whole objects, paged lists', metadataOnly: false, watchList: false },
  { name: 'metadata only, watch-list', metadataOnly: true, watchList: true },
  { name: 'metadata only, paged lists', metadataOnly: true, watchList: false },
];

async function main(): Promise<void> {
  const n = Number(flag('n', '20000'));
  const bytes = Number(flag('bytes', '1024'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${flag('n', '')}`);
  const out = flag('out', 'bench/results/metadata-cache.json');
  const server = await startConfigMapServer('metadata-cache', n, bytes);
  try {
    const kubeConfig = loadKubeConfig({ kubeconfigPath: server.kubeconfig });
    const results = [];
    const running: { stop(): void }[] = [];
    for (const variant of VARIANTS) {
      const before = settledHeap();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
      const inf = informer({
        kubeConfig,
        resource: builtinResources.configMap,
        namespaces: ['default'],
        metadataOnly: variant.metadataOnly,
        watchList: variant.watchList,
      });
      const started = process.hrtime.bigint();
      inf.start();
      await inf.whenSynced({ timeoutMs: 600_000 });
      const syncMs = Number(process.hrtime.bigint() - started) / 1e6;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      const after = settledHeap();
      const cached = inf.store.list().length;
      // Kept running until the end: a stopped informer's store is let go at some later GC, which
      // would land in the next variant's figures. Each variant adds its own store to the heap.
      running.push(inf);
      if (variant.name === 'warm-up') continue;
      const heapBytesPerObject = Math.round((after - before) / cached);
      const settledMB = (after - before) / 2 ** 20;
      const peakMB = (peak - before) / 2 ** 20;
      results.push({
        variant: variant.name,
        objects: cached,
        heapBytesPerObject,
        settledHeapMB: Math.round(settledMB * 10) / 10,
        listPeakHeapMB: Math.round(peakMB * 10) / 10,
        peakToSettled: Math.round((peakMB / settledMB) * 100) / 100,
        syncMs: Math.round(syncMs),
      });
      console.log(results.at(-1));
    }
    for (const inf of running) inf.stop();
    console.table(results);
    mkdirSync(dirname(resolve(ROOT, out)), { recursive: true });
    writeFileSync(
      resolve(ROOT, out),
      `${JSON.stringify({ bench: 'metadata-cache', date: new Date().toISOString(), node: process.version, n, dataBytes: bytes, results }, null, 2)}\n`,
    );
    console.log(`saved ${out}`);
  } finally {
    server.stop();
  }
}

await main();
