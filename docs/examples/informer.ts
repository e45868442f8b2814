// An informer on its own, its resilience, and read-your-writes (docs/event-sources.md):
// `npx tsx docs/examples/informer.ts`.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { filter, firstValueFrom } from 'rxjs';
import { informer, informer$, readYourWrites } from 'rxkube/pipeline';
import { builtinResources, createKubeClient } from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';

type ConfigMap = V1ConfigMap & KubernetesObject;
const CONFIGMAP = builtinResources.configMap;

const server = await startApiServer();
const kubeConfig = server.kubeConfig();
const configMaps = createKubeClient(kubeConfig).resource<ConfigMap>(CONFIGMAP);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const webConfig = informer<ConfigMap>({
  resource: CONFIGMAP,
  kubeConfig,
  namespaces: ['default'],
  labelSelector: { app: 'web' },
});
webConfig.events$.subscribe((event) => console.log(`${event.type} ${event.object.metadata?.name} ${JSON.stringify(event.object.data)}`));
webConfig.errors$.subscribe((failure) => console.log(`${failure.phase} failed, retrying in ${failure.delayMs} ms`));
webConfig.start();
await webConfig.whenSynced();

const labels = { app: 'web' };
await configMaps.create({ metadata: { name: 'web-1', namespace: 'default', labels }, data: { color: 'blue' } });
await configMaps.mergePatch({ name: 'web-1', namespace: 'default' }, { data: { color: 'green' } });
await configMaps.create({ metadata: { name: 'other', namespace: 'default' }, data: {} }); // not selected
await pause(200);
console.log(
  `cached: ${webConfig.store
    .list()
    .map((cm) => cm.metadata!.name)
    .join(', ')}`,
);

// ES1: history is compacted and the watch dropped while a change happens: the informer resumes,
// gets 410 Gone, lists again and emits what it missed.
server.faults.compact();
server.faults.dropWatches({ resource: 'configmaps' });
await configMaps.mergePatch({ name: 'web-1', namespace: 'default' }, { data: { color: 'red' } });
await firstValueFrom(webConfig.events$.pipe(filter((event) => event.object.data?.['color'] === 'red')));
console.log(`lists so far: ${webConfig.status()[0]?.lists}, healthy: ${webConfig.isHealthy()}`);

// Read-your-writes in front of the informer: `get` returns what we wrote until the watch
// delivers it, and the event our write caused is not passed on by cache.events$.
const cache = readYourWrites(webConfig);
const ref = { name: 'web-1', namespace: 'default' };
await cache.trackWrite(ref, () => configMaps.mergePatch(ref, { data: { color: 'black' } }));
console.log(`read back at once: ${cache.get(ref)?.data?.['color']}`);
cache.dispose();
webConfig.stop();

// informer$ is cold: subscribing starts an informer, unsubscribing closes its watches.
const deleted = firstValueFrom(
  informer$<ConfigMap>({ resource: CONFIGMAP, kubeConfig, namespaces: ['default'] }).pipe(filter((e) => e.type === 'deleted')),
);
await pause(200);
await configMaps.delete({ name: 'other', namespace: 'default' });
console.log(`deleted: ${(await deleted).object.metadata?.name}`);

await server.close();
