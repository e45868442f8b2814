/**
 * The embedded API server of the end-to-end bench, in a process of its own:
 *
 *   node --import tsx bench/e2e/server.ts --populate N --kubeconfig <file>
 *
 * Serves in memory (no data directory: no fsync per write), creates the Counter CRD and N
 * counters (spec.value = index), writes a kubeconfig for itself to --kubeconfig and then prints
 * one JSON line `{ "url", "kubeconfig" }`. SIGTERM stops it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startApiServer } from '@rxkube/apiserver';
import { createKubeClient, installCustomResourceDefinition } from '../../lib/kube/index.js';
import { COUNTERS, counterCrd, NAMESPACE } from './counter.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1] ?? '');
const n = Number(args.get('populate'));
if (!Number.isInteger(n) || n < 0) throw new Error(`server.ts: --populate must be a non-negative integer, got ${args.get('populate')}`);
const kubeconfig = args.get('kubeconfig');
if (!kubeconfig) throw new Error('server.ts: --kubeconfig <file> is required');

// Watches of the bench last for the whole phase; no bookmarks needed.
const server = await startApiServer({ bookmarkIntervalMs: 3_600_000, historySize: 100_000 });
const client = createKubeClient(server.kubeConfig());
await installCustomResourceDefinition(client, counterCrd, { timeoutMs: 10_000 });
const counters = client.resource(COUNTERS);
let next = 0;
const worker = async (): Promise<void> => {
  for (let i = next++; i < n; i = next++) {
    await counters.create({
      apiVersion: COUNTERS.apiVersion,
      kind: COUNTERS.kind,
      metadata: { name: `c${i}`, namespace: NAMESPACE },
      spec: { value: i },
    } as never);
  }
};
await Promise.all(Array.from({ length: 16 }, worker));
await server.writeKubeconfig(kubeconfig);
console.log(JSON.stringify({ url: server.url, kubeconfig }));
// E2E_TRACE: the server's event-loop delay, printed when it stops (is the server busy, or waited for?).
const loopDelay = process.env['E2E_TRACE'] ? monitorEventLoopDelay({ resolution: 5 }) : undefined;
loopDelay?.enable();
process.on('SIGTERM', () => {
  if (loopDelay)
    console.error(
      `  server event-loop delay ms: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)}, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)}, max ${(loopDelay.max / 1e6).toFixed(1)}`,
    );
  process.exit(0);
});
