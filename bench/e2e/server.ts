/**
 * The embedded API server of the end-to-end bench, in a process of its own:
 *
 *   tsx bench/e2e/server.ts --data <state.json> [--populate N]
 *
 * With --populate it creates the Counter CRD and N counters (spec.value = index), saves the
 * state to --data and exits: the template every variant's fresh server starts from. Without it
 * it serves the state in --data, writes a kubeconfig next to it and prints one JSON line
 * `{ "url", "kubeconfig" }` when ready; SIGTERM stops it.
 */
import { startApiServer } from '../../lib/apiserver/index.js';
import { createKubeClient, installCustomResourceDefinition } from '../../lib/kube/index.js';
import { COUNTERS, counterCrd, NAMESPACE } from './counter.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const dataFile = args.get('data');
if (!dataFile) throw new Error('server.ts: --data <file> is required');

// Watches of the bench last for the whole phase; no bookmarks needed.
const server = await startApiServer({ dataFile, bookmarkIntervalMs: 3_600_000, historySize: 100_000 });
const populate = args.get('populate');
if (populate !== undefined) {
  const n = Number(populate);
  if (!Number.isInteger(n) || n < 1) throw new Error(`server.ts: --populate must be a positive integer, got ${populate}`);
  const client = createKubeClient(server.kubeConfig());
  await installCustomResourceDefinition(client, counterCrd, { timeoutMs: 10_000 });
  const counters = client.resource(COUNTERS);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      await counters.create({ apiVersion: COUNTERS.apiVersion, kind: COUNTERS.kind, metadata: { name: `c${i}`, namespace: NAMESPACE }, spec: { value: i } } as never);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await server.close();
  process.exit(0);
}
// One write after the load: the server treats loaded state as compacted at its revision, and a
// paginated list at exactly that revision would get 410 on its `continue` (noted in the report).
await createKubeClient(server.kubeConfig())
  .resource({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true })
  .create({ metadata: { name: 'bench-started', namespace: NAMESPACE } });
const kubeconfig = `${dataFile}.kubeconfig`;
await server.writeKubeconfig(kubeconfig);
console.log(JSON.stringify({ url: server.url, kubeconfig }));
process.on('SIGTERM', () => {
  // The state is thrown away: no save.
  process.exit(0);
});
