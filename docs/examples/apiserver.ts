// The embedded API server in code (docs/apiserver.md): `npx tsx docs/examples/apiserver.ts`.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startApiServer } from '@rxkube/apiserver';

const dir = mkdtempSync(join(tmpdir(), 'rxkube-apiserver-'));
const dataDir = join(dir, 'data');

const server = await startApiServer({
  dataDir, // every acknowledged write is in its fsynced log: it survives kill -9
  simulate: { pods: { readyAfterMs: 200 } }, // Deployments roll out: ReplicaSets, Pods on simulated Nodes
});
console.log(`serving ${server.url}`);

// @kubernetes/client-node, unmodified.
const kubeConfig = server.kubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'settings' }, data: { color: 'blue' } } });

// kubectl, through a kubeconfig file (run it asynchronously: the server lives in this process).
const kubeconfigPath = join(dir, 'kubeconfig');
await server.writeKubeconfig(kubeconfigPath);
const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfigPath, 'get', 'configmaps']);
console.log(stdout);

// The simulated deployment controller moves status as the real one would.
const apps = kubeConfig.makeApiClient(AppsV1Api);
await apps.createNamespacedDeployment({
  namespace: 'default',
  body: {
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
    },
  },
});
await new Promise((resolve) => setTimeout(resolve, 400));
const web = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
console.log(
  `web: ${web.status?.availableReplicas}/${web.spec?.replicas} available, ${web.status?.conditions?.map((c) => `${c.type}=${c.status}`).join(' ')}`,
);

// Faults: the next two reads of ConfigMaps answer 503, then the fault removes itself.
const fault = server.faults.failRequests({ verb: 'get', resource: 'configmaps', status: 503, count: 2 });
for (let i = 0; i < 3; i++) {
  const answer = await core.readNamespacedConfigMap({ name: 'settings', namespace: 'default' }).then(
    (cm) => `200 color=${cm.data?.['color']}`,
    (err: { code?: number }) => `${err.code}`,
  );
  console.log(`read ${i + 1}: ${answer}`);
}
console.log(`fault hits: ${fault.hits}, active faults: ${server.faults.active.length}`);

console.log(server.stats());
await server.close(); // writes a snapshot, so the next start replays no log

// A new server on the same data directory has everything back, resourceVersions included.
const again = await startApiServer({ dataDir });
const settings = await again.kubeConfig().makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'settings', namespace: 'default' });
console.log(`after restart: settings color=${settings.data?.['color']}, resourceVersion ${settings.metadata?.resourceVersion}`);
await again.close();
