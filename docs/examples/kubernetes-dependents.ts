// Kubernetes and bulk dependents (docs/dependent-resources.md): server-side apply, owner references
// or not, a shared event source, a read-only dependent, a custom matcher, a keyed set.
// `npx tsx docs/examples/kubernetes-dependents.ts` runs it against the embedded API server.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import {
  bulkDependent,
  createLogger,
  kubernetesDependent,
  kubernetesMismatch,
  resourceDeleted,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
} from 'rxkube';
import { builtinResources, customResourceDefinition, descriptorOf } from 'rxkube/kube';
import { eventually } from 'rxkube/testing';
import { startTestCluster } from 'rxkube/testing/cluster';

export interface Site extends KubernetesObject {
  spec: { title: string; regions: string[] };
  status?: { ready?: boolean };
}

export const siteCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Site',
  plural: 'sites',
  spec: {
    type: 'object',
    required: ['title'],
    properties: { title: { type: 'string' }, regions: { type: 'array', items: { type: 'string' } } },
  },
  // no status schema: any object (x-kubernetes-preserve-unknown-fields)
});
export const SITE = descriptorOf(siteCrd); // { apiVersion: 'example.com/v1', kind: 'Site', plural: 'sites', namespaced: true }
const { configMap: CONFIGMAP, namespace: NAMESPACE } = builtinResources;

const nameOf = (site: Site) => site.metadata!.name!;

// Read-only: a ConfigMap someone else provides. Never written; its changes run the Sites.
export const defaults = kubernetesDependent<V1ConfigMap, Site, Context<Site>>({
  name: 'defaults',
  resource: CONFIGMAP,
  readOnly: true,
  resourceId: () => ({ name: 'site-defaults' }),
});

// Garbage-collected (the default): owned by the Site, applied only when it differs. The matcher is
// the default one, plus a log line telling where the object drifted.
export const page = kubernetesDependent<V1ConfigMap, Site, Context<Site>>({
  name: 'page',
  resource: CONFIGMAP,
  desired: async (site, ctx) => {
    const theme = (await defaults.getSecondary!(site, ctx))?.data?.['theme'] ?? 'light';
    return { metadata: { name: `${nameOf(site)}-page` }, data: { 'index.html': `<h1 class="${theme}">${site.spec.title}</h1>` } };
  },
  match: (actual, desired, _site, ctx) => {
    const drift = kubernetesMismatch(actual, desired, { fieldManager: ctx.fieldManager });
    if (drift !== undefined) ctx.logger.info({ drift }, 'page differs');
    return drift === undefined;
  },
});

// A second ConfigMap of the same Site: it targets its own object by its desired name, and
// shares the `configmaps` event source with `page`.
export const settings = kubernetesDependent<V1ConfigMap, Site, Context<Site>>({
  name: 'settings',
  resource: CONFIGMAP,
  desired: (site) => ({ metadata: { name: `${nameOf(site)}-settings` }, data: { regions: site.spec.regions.join(',') } }),
});

// In another namespace, where an owner reference cannot point: the workflow deletes it
// (garbageCollected: false, so the Site gets a finalizer).
export const route = kubernetesDependent<V1ConfigMap, Site, Context<Site>>({
  name: 'route',
  resource: CONFIGMAP,
  garbageCollected: false,
  desired: (site) => ({
    metadata: { name: `${site.metadata!.namespace}-${nameOf(site)}`, namespace: 'routing' },
    data: { host: `${nameOf(site)}.example.com`, backend: `${nameOf(site)}-page` },
  }),
});

// A keyed set: one ConfigMap per region; a region added is created, a region removed is deleted.
export const regions = bulkDependent<V1ConfigMap, Site, Context<Site>>({
  name: 'regions',
  resource: CONFIGMAP,
  desiredResources: (site) =>
    new Map(site.spec.regions.map((region) => [region, { metadata: { name: `${nameOf(site)}-${region}` }, data: { region } }])),
});

export const siteWorkflow = workflow<Site, Context<Site>>()
  .add(defaults)
  .add(page)
  .add(settings)
  .add(regions)
  .add(route, { dependsOn: page, deletePostcondition: resourceDeleted });

// The reconciler logs what each dependent did in this run, and reports readiness.
export const sites: Reconciler<Site> = {
  reconcile(site, ctx) {
    const result = ctx.workflow!.reconcileResult!;
    const operations = Object.fromEntries([...result.dependents].map(([name, d]) => [name, d.reconcileResult?.operation ?? d.outcome]));
    ctx.logger.info({ operations }, 'dependents reconciled');
    return UpdateControl.patchStatus({ ...site, status: { ready: result.allReady() } });
  },
};

export const sitesConfig: ControllerConfig<Site> = { resource: SITE, workflow: siteWorkflow };

// Drive it against the embedded API server.
const cluster = await startTestCluster({ crds: [siteCrd] });
await cluster.apply(NAMESPACE, { metadata: { name: 'routing' } });
await cluster.apply(CONFIGMAP, { metadata: { name: 'site-defaults', namespace: 'default' }, data: { theme: 'dark' } });
// Prints the log lines of the reconciler and the matcher.
const printLog = {
  write(line: string) {
    const entry = JSON.parse(line) as { msg: string; drift?: string; operations?: object };
    if (entry.drift) console.log(`  ${entry.msg} at ${entry.drift}`);
    if (entry.operations) console.log(`  ${entry.msg}: ${JSON.stringify(entry.operations)}`);
  },
};
const operator = cluster.operator({ logger: createLogger({ level: 'info', destination: printLog }) });
let runs = 0;
operator.register(sites, sitesConfig).outcome$.subscribe(() => runs++);
await operator.start();

const configMaps = cluster.client.resource<V1ConfigMap & KubernetesObject>(CONFIGMAP);
const siteRef = { name: 'shop', namespace: 'default' };
// Makes a change and waits for the run it causes, checking that no other follows.
const step = async (what: string, change: () => Promise<unknown>, expectedRuns = 1) => {
  const before = runs;
  console.log(what);
  await change();
  await eventually(what, () => runs >= before + expectedRuns);
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (runs !== before + expectedRuns) throw new Error(`${what}: expected ${expectedRuns} runs, saw ${runs - before}`);
};
const listConfigMaps = async () =>
  (await configMaps.list()).items
    .map((cm) => `${cm.metadata!.namespace}/${cm.metadata!.name}${cm.metadata!.ownerReferences ? ' (owned)' : ''}`)
    .join(', ');

// Two runs: the first only adds the finalizer.
await step('created', () => cluster.apply(SITE, { metadata: siteRef, spec: { title: 'Shop', regions: ['eu', 'us'] } }), 2);
console.log(`  configmaps: ${await listConfigMaps()}`);
console.log(`  finalizers: ${JSON.stringify((await cluster.client.resource<Site>(SITE).get(siteRef)).metadata?.finalizers)}`);
await step('title changed', () => cluster.apply(SITE, { metadata: siteRef, spec: { title: 'The Shop', regions: ['eu', 'us'] } }));
await step('page edited by hand', () =>
  configMaps.mergePatch({ name: 'shop-page', namespace: 'default' }, { data: { 'index.html': 'defaced' } }),
);
await step('defaults changed', () => configMaps.mergePatch({ name: 'site-defaults', namespace: 'default' }, { data: { theme: 'light' } }));
// Two runs: the watch event of a delete the dependent made is not recognised as its own yet.
await step('region removed', () => cluster.apply(SITE, { metadata: siteRef, spec: { title: 'The Shop', regions: ['eu'] } }), 2);
console.log(`  configmaps: ${await listConfigMaps()}`);

await cluster.client.resource(SITE).delete(siteRef);
await eventually('site gone', async () => (await cluster.client.resource(SITE).find(siteRef)) === undefined);
await eventually(
  'owned configmaps collected',
  async () => (await configMaps.find({ name: 'shop-page', namespace: 'default' })) === undefined,
);
console.log(`deleted\n  configmaps: ${await listConfigMaps()}`);
await cluster.close();
