/**
 * What a relist costs at its peak: the heap while an informer of N ConfigMaps lists again after a
 * 410, against the settled heap of its store (after full GCs), with a watch-list and with paged
 * lists.
 *
 *   npm run bench:relist-peak -- [--n 50000] [--bytes 1024] [--out bench/results/relist-peak.json]
 *
 * An embedded API server in a process of its own (bench/metadata-cache-server.ts) serves N
 * ConfigMaps of about `bytes` of data each. In this process an informer lists and watches them;
 * once synced, the heap after full GCs less the heap before it started is the settled store.
 * Then the server closes the watch and answers its resume 410 (history gone): the informer lists
 * again. The peak is the highest heap in use sampled every 2 ms from then until that relist has
 * ended, less the heap before the informer started (garbage not collected yet included); beside
 * it, what the process's RSS grew by from just before the relist to its peak (what a container's
 * memory limit meets). Each variant runs in a fresh informer after an uncounted warm-up one, and
 * waits until the previous informer's store has been collected.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { informer } from '../lib/cache/index.js';
import { builtinResources, loadKubeConfig } from '../lib/kube/index.js';
import { startConfigMapServer } from './configmap-server.js';
import { flag, settledHeap as heapAfterGc } from './heap.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const settledHeap = (): number => heapAfterGc('relist-peak');
const MB = 2 ** 20;

/** Bytes in use in the old generation and the large-object space: objects that outlived young collections. */
function oldGenerationUsed(): number {
  return getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'old_space' || s.space_name === 'large_object_space')
    .reduce((sum, s) => sum + s.space_used_size, 0);
}

const youngGenerationSize = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

interface RelistFigures {
  readonly variant: string;
  readonly objects: number;
  readonly settledStoreMB: number;
  readonly relistPeakMB: number;
  readonly peakToSettled: number;
  /** The peak of the old generation and large objects (what survived young collections), less the same before the informer started. */
  readonly oldGenerationPeakMB: number;
  readonly oldGenerationPeakToSettled: number;
  /** The young generation's size at the peak: garbage up to this much is in `relistPeakMB` without anything keeping it. */
  readonly youngGenerationMB: number;
  readonly settledAfterRelistMB: number;
  /** How much the process's RSS rose from just before the relist to its peak during it (what a container's limit meets). */
  readonly rssGrowthMB: number;
  readonly relistMs: number;
}

const VARIANTS = [
  { name: 'warm-up', watchList: true },
  { name: 'watch-list', watchList: true },
  { name: 'paged lists', watchList: false },
] as const;

async function released(ref: WeakRef<object>, variant: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    settledHeap();
    if (ref.deref() === undefined) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`relist-peak: the store of '${variant}' was still reachable 60 s after its informer stopped`);
}

async function main(): Promise<void> {
  const n = Number(flag('n', '50000'));
  const bytes = Number(flag('bytes', '1024'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${flag('n', '')}`);
  const out = flag('out', 'bench/results/relist-peak.json');
  const server = await startConfigMapServer('relist-peak', n, bytes);
  try {
    const kubeConfig = loadKubeConfig({ kubeconfigPath: server.kubeconfig });
    const results: RelistFigures[] = [];
    for (const variant of VARIANTS) {
      // In a function of its own: once it returns, nothing but the weak reference reaches the informer.
      const store = await (async () => {
        const before = settledHeap();
        const oldBefore = oldGenerationUsed();
        const inf = informer({
          kubeConfig,
          resource: builtinResources.configMap,
          namespaces: ['default'],
          watchList: variant.watchList,
          listTimeoutMs: 600_000,
        });
        inf.start();
        await inf.whenSynced({ timeoutMs: 600_000 });
        const settled = settledHeap() - before;
        const objects = inf.store.size;
        const lists = () => inf.status()[0]?.lists ?? 0;
        let peak = process.memoryUsage().heapUsed;
        let oldPeak = oldGenerationUsed();
        let young = youngGenerationSize();
        const rssBefore = process.memoryUsage.rss();
        let rssPeak = rssBefore;
        const sampler = setInterval(() => {
          const usage = process.memoryUsage();
          if (usage.heapUsed > peak) [peak, young] = [usage.heapUsed, youngGenerationSize()];
          oldPeak = Math.max(oldPeak, oldGenerationUsed());
          rssPeak = Math.max(rssPeak, usage.rss);
        }, 2);
        const started = process.hrtime.bigint();
        const relisting = server.nextLine();
        server.relist();
        await relisting;
        const deadline = Date.now() + 1_200_000;
        while (lists() < 2) {
          if (Date.now() > deadline) throw new Error(`relist-peak: '${variant.name}' did not list again within 20 min`);
          await new Promise((done) => setTimeout(done, 5));
        }
        const relistMs = Number(process.hrtime.bigint() - started) / 1e6;
        clearInterval(sampler);
        peak = Math.max(peak, process.memoryUsage().heapUsed) - before;
        oldPeak = Math.max(oldPeak, oldGenerationUsed()) - oldBefore;
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
        const settledAfter = settledHeap() - before;
        inf.stop();
        if (variant.name !== 'warm-up') {
          results.push({
            variant: variant.name,
            objects,
            settledStoreMB: Math.round((settled / MB) * 10) / 10,
            relistPeakMB: Math.round((peak / MB) * 10) / 10,
            peakToSettled: Math.round((peak / settled) * 100) / 100,
            oldGenerationPeakMB: Math.round((oldPeak / MB) * 10) / 10,
            oldGenerationPeakToSettled: Math.round((oldPeak / settled) * 100) / 100,
            youngGenerationMB: Math.round((young / MB) * 10) / 10,
            settledAfterRelistMB: Math.round((settledAfter / MB) * 10) / 10,
            rssGrowthMB: Math.round(((rssPeak - rssBefore) / MB) * 10) / 10,
            relistMs: Math.round(relistMs),
          });
          console.log(results.at(-1));
        }
        return new WeakRef(inf.store);
      })();
      await released(store, variant.name);
    }
    console.table(results);
    mkdirSync(dirname(resolve(ROOT, out)), { recursive: true });
    writeFileSync(
      resolve(ROOT, out),
      `${JSON.stringify({ bench: 'relist-peak', date: new Date().toISOString(), node: process.version, n, dataBytes: bytes, results }, null, 2)}\n`,
    );
    console.log(`saved ${out}`);
  } finally {
    server.stop();
  }
}

await main();
