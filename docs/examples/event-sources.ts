// Secondary sources and mappers (docs/event-sources.md): `npx tsx docs/examples/event-sources.ts`.
import type { KubernetesObject, V1ConfigMap, V1Secret, V1Service } from '@kubernetes/client-node';
import { Mappers, primaryAnnotations, UpdateControl, type ControllerConfig, type Reconciler } from 'rxkube';
import { builtinResources, customResourceDefinition, descriptorOf } from 'rxkube/kube';
import { startTestCluster } from 'rxkube/testing/cluster';

export interface App extends KubernetesObject {
  spec: { uses?: string[] };
}

export const appCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'App',
  plural: 'apps',
  spec: { type: 'object', properties: { uses: { type: 'array', items: { type: 'string' } } } },
});
export const APP = descriptorOf(appCrd);
const { configMap: CONFIGMAP, secret: SECRET, service: SERVICE, namespace: NAMESPACE } = builtinResources;

export const appConfig: ControllerConfig<App> = {
  resource: APP,
  namespaces: ['team-a'],
  secondaries: [
    // Owner references (the default mapper): ConfigMaps this App owns; it applies them (writes).
    { name: 'owned', resource: CONFIGMAP, labelSelector: { 'example.com/part-of': 'app' }, writes: ['apply'] },
    // Annotations: Secrets that name their App in rxkube.dev/primary-name (and -namespace).
    { name: 'credentials', resource: SECRET, toPrimaries: Mappers.fromDefaultAnnotations() },
    // Any function from a secondary to the ResourceIDs of its primaries (empty: ignore it).
    {
      name: 'services',
      resource: SERVICE,
      toPrimaries: (service) => {
        const app = (service as V1Service).spec?.selector?.['app'];
        return app ? [{ name: app, namespace: service.metadata!.namespace }] : [];
      },
    },
    // Many-to-many: the ConfigMaps an App lists in spec.uses; one change runs every App using it.
    {
      name: 'shared',
      resource: CONFIGMAP,
      labelSelector: 'example.com/shared',
      toSecondaries: (app) => (app.spec.uses ?? []).map((name) => ({ name, namespace: app.metadata!.namespace })),
    },
  ],
};

export const apps: Reconciler<App> = {
  async reconcile(app, ctx) {
    const cause = ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type;
    const shared = ctx.getSecondaryResources<V1ConfigMap & KubernetesObject>('shared').map((cm) => cm.metadata!.name);
    const credentials = ctx.getSecondaryResource<V1Secret & KubernetesObject>('credentials')?.metadata?.name;
    console.log(
      `run ${app.metadata!.namespace}/${app.metadata!.name} <- ${cause}; shared: [${shared.join(', ')}], credentials: ${credentials ?? '-'}`,
    );
    // Written through the source's client: this write triggers no run, and the next run reads it.
    await ctx.secondaryClient<V1ConfigMap & KubernetesObject>('owned').apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `${app.metadata!.name}-settings`,
        namespace: app.metadata!.namespace!,
        labels: { 'example.com/part-of': 'app' },
        ownerReferences: [
          { apiVersion: APP.apiVersion, kind: APP.kind, name: app.metadata!.name!, uid: app.metadata!.uid!, controller: true },
        ],
      },
      data: { uses: (app.spec.uses ?? []).join(',') },
    });
    return UpdateControl.noUpdate();
  },
};

// Drive it against the embedded API server.
const cluster = await startTestCluster({ crds: [appCrd] });
for (const name of ['team-a', 'team-b']) await cluster.apply(NAMESPACE, { metadata: { name } });

const operator = cluster.operator();
const controller = operator.register(apps, appConfig);
let runs = 0;
controller.outcome$.subscribe(() => runs++);
await operator.start();
const settle = async (expected: number) => {
  for (let i = 0; runs < expected && i < 200; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  await new Promise((resolve) => setTimeout(resolve, 100)); // and nothing more follows
  if (runs !== expected) throw new Error(`expected ${expected} runs, saw ${runs}`);
};

const app = (name: string, namespace: string, uses: string[] = []): App => ({ metadata: { name, namespace }, spec: { uses } });
await cluster.apply(CONFIGMAP, {
  metadata: { name: 'feature-flags', namespace: 'team-a', labels: { 'example.com/shared': 'true' } },
  data: { beta: 'off' },
});
await cluster.apply(APP, app('shop', 'team-a', ['feature-flags']));
await cluster.apply(APP, app('blog', 'team-a', ['feature-flags']));
await settle(2); // one run each; their own ConfigMap writes ran nothing

await cluster.apply(SECRET, {
  metadata: { name: 'shop-db', namespace: 'team-a', annotations: primaryAnnotations({ name: 'shop', namespace: 'team-a' }) },
});
await settle(3);
await cluster.apply(SERVICE, {
  metadata: { name: 'blog-http', namespace: 'team-a' },
  spec: { selector: { app: 'blog' }, ports: [{ port: 80 }] },
});
await settle(4);
await cluster.apply(CONFIGMAP, {
  metadata: { name: 'feature-flags', namespace: 'team-a', labels: { 'example.com/shared': 'true' } },
  data: { beta: 'on' },
});
await settle(6); // both Apps use it

await cluster.apply(APP, app('wiki', 'team-b'));
await settle(6); // team-b is not watched yet
controller.changeNamespaces(['team-a', 'team-b']);
await settle(7); // wiki is listed now, and runs

await cluster.close();
