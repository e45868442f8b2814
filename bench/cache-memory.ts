/**
 * Heap per cached object against the object's JSON size (DESIGN goal: at most 2×).
 *
 *   npm run bench:cache-memory -- [--n 10000] [--out bench/results/cache-memory.json]
 *
 * An embedded API server in a process of its own (bench/e2e/server.ts) serves N counters, as in
 * bench:e2e, with their managedFields. In this process an informer lists and watches them; the
 * heap growth between a full GC before the informer starts and one after it has synced, divided
 * by N, is the heap per cached object. Measured with the default transform (managedFields keep
 * only server-side-apply entries) and with the identity transform (objects as the server sent
 * them), each in a fresh informer, after an uncounted warm-up one. A last variant puts the
 * read-your-writes cache in front of a default informer and writes every object's status through
 * it (as a controller does): once the informer has caught up with every write the cache must hold
 * nothing (one copy per object, the store's), so its heap per object stays that of the store.
 * A metadata-only informer (PartialObjectMetadata) is measured beside them, against the same
 * (whole object's) JSON. Before each baseline the previous informer's store must have been
 * collected (a weak reference says so): a store let go at some later GC would land in the next
 * variant's figures.
 *
 * Last, without the server: what the store itself keeps beside the objects (its map, indexes and
 * records), the same N objects parsed from their JSON held in an array against held in an
 * InformerStore.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import { createKubeClient, loadKubeConfig } from '../lib/kube/index.js';
import { informer, InformerStore, readYourWrites } from '../lib/cache/index.js';
import { resourceIdOf } from '../lib/core/index.js';
import { COUNTERS, NAMESPACE } from './e2e/counter.js';
import { flag, settledHeap as heapAfterGc } from './heap.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const E2E = join(ROOT, 'bench/e2e');

type Counter = KubernetesObject & { status?: { value?: number } };

function refOf(object: KubernetesObject): { name: string; namespace?: string } {
  return { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace };
}

/** Waits until a stopped informer's store is garbage, so that it is not in the next baseline. */
async function released(ref: WeakRef<object>, variant: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    settledHeap();
    if (ref.deref() === undefined) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`cache-memory: the store of '${variant}' was still reachable 60 s after its informer stopped`);
}

/** Heap per object an InformerStore keeps beside the objects themselves (its map, indexes, records). */
function storeBookkeeping(texts: readonly string[]): { objectBytes: number; storeBytes: number } {
  const before = settledHeap();
  const objects = texts.map((text) => JSON.parse(text) as KubernetesObject);
  const parsed = settledHeap();
  const store = new InformerStore<KubernetesObject>();
  for (const object of objects) store.upsert(object);
  const stored = settledHeap();
  if (store.size !== objects.length) throw new Error('cache-memory: the store lost objects');
  return { objectBytes: Math.round((parsed - before) / texts.length), storeBytes: Math.round((stored - parsed) / texts.length) };
}

const settledHeap = (): number => heapAfterGc('cache-memory');

async function main(): Promise<void> {
  const n = Number(flag('n', '10000'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${flag('n', '')}`);
  const out = flag('out', 'bench/results/cache-memory.json');
  const dataDir = join(E2E, '.data');
  mkdirSync(dataDir, { recursive: true });
  const kubeconfigFile = join(dataDir, `cache-memory-${n}.kubeconfig`);
  const server = spawn(
    process.execPath,
    ['--import', 'tsx', join(E2E, 'server.ts'), '--populate', String(n), '--kubeconfig', kubeconfigFile],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: ROOT,
    },
  );
  try {
    const line = await new Promise<string>((done) => createInterface(server.stdout).once('line', done));
    const { kubeconfig } = JSON.parse(line) as { kubeconfig: string };
    const kubeConfig = loadKubeConfig({ kubeconfigPath: kubeconfig });
    const listed = await createKubeClient(kubeConfig).resource(COUNTERS).list({ namespace: NAMESPACE });
    const jsonBytes = listed.items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0) / listed.items.length;

    const results = [];
    // The first informer also pays for what is made once (code, the connection pool): a warm-up
    // round is not counted.
    for (const [variant, transform, metadataOnly] of [
      ['warm-up', undefined, false],
      ['default transform (compactManagedFields)', undefined, false],
      ['identity transform (as the server sent them)', (object: KubernetesObject) => object, false],
      ['metadata only (PartialObjectMetadata)', undefined, true],
    ] as const) {
      // In a function of its own: once it returns, nothing but the weak reference reaches the informer.
      const store = await (async () => {
        const before = settledHeap();
        const inf = informer({
          kubeConfig,
          resource: COUNTERS,
          namespaces: [NAMESPACE],
          transform: transform,
          metadataOnly,
        });
        inf.start();
        await inf.whenSynced({ timeoutMs: 600_000 });
        const after = settledHeap();
        const cached = inf.store.list().length;
        const perObject = (after - before) / cached;
        inf.stop();
        if (variant === 'warm-up') return new WeakRef(inf.store);
        results.push({
          variant,
          objects: cached,
          heapBytesPerObject: Math.round(perObject),
          jsonBytesPerObject: Math.round(jsonBytes),
          heapToJson: Math.round((perObject / jsonBytes) * 100) / 100,
          storeHeapMB: Math.round(((after - before) / 2 ** 20) * 10) / 10,
        });
        console.log(results.at(-1));
        return new WeakRef(inf.store);
      })();
      await released(store, variant);
    }
    for (const [round, throughCache] of [
      [1, true],
      [2, false],
      [3, true],
    ] as const) {
      const variant = `default transform, after a status write per object${throughCache ? ' through the read-your-writes cache' : ' (no read-your-writes cache)'}`;
      const store = await (async () => {
        const client = createKubeClient(kubeConfig).resource<Counter>(COUNTERS);
        // What the first write makes once (code, the write path's pool) is not counted.
        await client.mergePatchStatus(refOf(listed.items[0]), { status: { value: -round } });
        const before = settledHeap();
        const inf = informer<Counter>({ kubeConfig, resource: COUNTERS, namespaces: [NAMESPACE] });
        const cache = readYourWrites(inf);
        inf.start();
        await inf.whenSynced({ timeoutMs: 600_000 });
        // Ids only: holding the listed objects would keep the versions before the writes alive.
        const ids = cache.list().map((object) => resourceIdOf(object));
        let next = 0;
        // 32 writes in flight, as the bench's controllers would (the pool size).
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (next < ids.length) {
              const id = ids[next++];
              const write = () => client.mergePatchStatus({ name: id.name, namespace: id.namespace }, { status: { value: round } });
              await (throughCache ? cache.trackWrite(id, write) : write());
            }
          }),
        );
        const heldAfterWrites = cache.size;
        const caughtUp = () => cache.size === 0 && inf.store.list().every((object) => object.status?.value === round);
        for (let waited = 0; !caughtUp() && waited < 30_000; waited += 50) await new Promise((done) => setTimeout(done, 50));
        const after = settledHeap();
        const cached = inf.store.list().length;
        const perObject = (after - before) / cached;
        if (round === 1) {
          // Warm-up: what the first written watch events and answers make once is not counted.
          cache.dispose();
          inf.stop();
          return new WeakRef(inf.store);
        }
        // The written objects are larger (a status, one more managedFields entry): their own JSON size.
        const written = await client.list({ namespace: NAMESPACE });
        const writtenJson = written.items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0) / written.items.length;
        results.push({
          variant,
          objects: cached,
          heapBytesPerObject: Math.round(perObject),
          jsonBytesPerObject: Math.round(writtenJson),
          heapToJson: Math.round((perObject / writtenJson) * 100) / 100,
          writtenHeldRightAfterWrites: heldAfterWrites,
          writtenHeldAtMeasure: cache.size,
        });
        console.log(results.at(-1));
        cache.dispose();
        inf.stop();
        return new WeakRef(inf.store);
      })();
      await released(store, variant);
    }
    const texts = listed.items.map((item) => JSON.stringify(item));
    const bookkeeping = storeBookkeeping(texts);
    results.push({
      variant: 'InformerStore beside the objects it holds (no server)',
      objects: texts.length,
      heapBytesPerObject: bookkeeping.storeBytes,
      jsonBytesPerObject: Math.round(texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / texts.length),
      parsedObjectBytes: bookkeeping.objectBytes,
    });
    console.log(results.at(-1));
    console.table(results);
    mkdirSync(dirname(resolve(ROOT, out)), { recursive: true });
    writeFileSync(
      resolve(ROOT, out),
      `${JSON.stringify({ bench: 'cache-memory', date: new Date().toISOString(), node: process.version, n, results }, null, 2)}\n`,
    );
    console.log(`saved ${out}`);
  } finally {
    server.kill('SIGTERM');
    rmSync(kubeconfigFile, { force: true });
  }
}

await main();
