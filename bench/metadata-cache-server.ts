/**
 * The embedded API server of bench:metadata-cache, in a process of its own:
 *
 *   node --import tsx bench/metadata-cache-server.ts --populate N --bytes B --kubeconfig <file>
 *
 * Serves in memory N ConfigMaps in `default`, each with about B bytes of data and a label, writes
 * a kubeconfig for itself to --kubeconfig and prints one JSON line `{ "kubeconfig" }`. SIGTERM stops it.
 * A line `relist` on its standard input makes the informer list again (bench:relist-peak): its
 * watch is closed and its resume answered 410 (history gone); it answers the line `relisting`.
 */
import { createInterface } from 'node:readline';
import { startApiServer } from '@rxkube/apiserver';
import { builtinResources, createKubeClient } from '../lib/kube/index.js';
import { flag } from './heap.js';

const n = Number(flag('populate', '0'));
const bytes = Number(flag('bytes', '1024'));
const kubeconfig = flag('kubeconfig', '');
if (!Number.isInteger(n) || n < 0)
  throw new Error(`metadata-cache-server.ts: --populate must be a non-negative integer, got ${flag('populate', '')}`);
if (!kubeconfig) throw new Error('metadata-cache-server.ts: --kubeconfig <file> is required');

const server = await startApiServer({ bookmarkIntervalMs: 3_600_000 });
const configMaps = createKubeClient(server.kubeConfig()).resource(builtinResources.configMap);
const payload = 'x'.repeat(bytes);
let next = 0;
const worker = async (): Promise<void> => {
  for (let i = next++; i < n; i = next++) {
    await configMaps.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm${i}`, namespace: 'default', labels: { app: 'bench' } },
      data: { payload },
    } as never);
  }
};
await Promise.all(Array.from({ length: 16 }, worker));
await server.writeKubeconfig(kubeconfig);
console.log(JSON.stringify({ kubeconfig }));
createInterface(process.stdin).on('line', (line) => {
  if (line.trim() !== 'relist') return;
  // The watches resume at once; the first resume is answered 410 (history gone): each lists again.
  server.faults.failRequests({ verb: 'watch', resource: 'configmaps', status: 410, count: 1 });
  server.faults.dropWatches();
  console.log('relisting');
});
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
