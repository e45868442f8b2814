// A registered controller triggered by sources outside Kubernetes (docs/event-sources.md):
// `npx tsx docs/examples/controller-sources.ts`.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { inboundSource, pollingSource, resourceKey, timerSource, UpdateControl, type ControllerConfig, type Reconciler } from 'rxkube';
import { builtinResources } from 'rxkube/kube';
import { startTestCluster } from 'rxkube/testing/cluster';

type App = V1ConfigMap & KubernetesObject;

// An external API answering the current release of every app in one call.
const releaseApi = new Map<string, string>([['web', 'v1']]);
export const releases = pollingSource({
  name: 'releases',
  intervalMs: 100,
  fetch: async () => [...releaseApi].map(([name, release]) => [{ name, namespace: 'default' }, release] as const),
});
// Pushed by a webhook handler of yours.
export const webhook = inboundSource<{ commit: string }>('webhook');
// One-shot timers per app.
export const timers = timerSource('timers');

export const apps: Reconciler<App> = {
  reconcile(app, ctx) {
    const id = { name: app.metadata!.name!, namespace: app.metadata!.namespace };
    const cause = ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type;
    console.log(`run ${resourceKey(id)} <- ${cause}: release ${releases.get(id) ?? '-'}`);
    return UpdateControl.noUpdate();
  },
};

export const appsConfig: ControllerConfig<App> = {
  resource: builtinResources.configMap,
  name: 'apps',
  labelSelector: { app: 'true' },
  sources: [releases, webhook, timers], // trigger the primaries they name; stopped with the controller
};

// Drive it against the embedded API server.
const cluster = await startTestCluster();
const operator = cluster.operator();
let runs = 0;
operator.register(apps, appsConfig).outcome$.subscribe(() => runs++);
await operator.start();
const settle = async (expected: number) => {
  for (let i = 0; runs < expected && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 250)); // longer than a poll: nothing else follows
  if (runs !== expected) throw new Error(`expected ${expected} runs, saw ${runs}`);
};

const web = { name: 'web', namespace: 'default' };
await cluster.apply(builtinResources.configMap, { metadata: { ...web, labels: { app: 'true' } } });
await settle(1);
releaseApi.set('web', 'v2'); // seen by the next poll
await settle(2);
webhook.push(web, { commit: 'a1b2c3' });
await settle(3);
timers.schedule(web, 50);
await settle(4);
webhook.push({ name: 'nobody', namespace: 'default' }); // no such primary: dropped
await settle(4);
timers.schedule(web, 60_000);
await cluster.close(); // stops the operator, and with it the timer source
console.log(`timers pending after stop: ${timers.pending().length}`);
