// The WebPage operator of demos/webpage written three ways (docs/dependent-resources.md): by hand,
// with a managed workflow of dependents, and with a standalone workflow. The code between the
// "from demos/webpage/..." markers is copied from the demo, and running this file checks that it
// still is; the model and the desired objects are the demo's own.
// `npx tsx docs/examples/webpage.ts` runs the three against the embedded API server.
import { readFileSync } from 'node:fs';
import type { KubernetesObject, V1ConfigMap, V1Deployment, V1Ingress, V1Service } from '@kubernetes/client-node';
import {
  classifyError,
  deploymentReadiness,
  deploymentReady,
  ErrorStatusUpdateControl,
  kubernetesDependent,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
  type SecondaryConfig,
} from 'rxkube';
import { eventually, startTestCluster } from 'rxkube/testing';
import { CONFIGMAP, DEPLOYMENT, INGRESS, MANAGED_SELECTOR, SERVICE, WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import {
  appName,
  desiredConfigMap,
  desiredDeployment,
  desiredIngress,
  desiredService,
  errorStatus,
  invalidHtml,
  statusOf,
  validateHtml,
} from '../../demos/webpage/resources.js';

// ---- from demos/webpage/dependents.ts
export const configMapDependent = kubernetesDependent<V1ConfigMap, WebPage, Context<WebPage>>({
  name: 'configmap',
  resource: CONFIGMAP,
  desired: desiredConfigMap,
  labelSelector: MANAGED_SELECTOR,
});

export const deploymentDependent = kubernetesDependent<V1Deployment, WebPage, Context<WebPage>>({
  name: 'deployment',
  resource: DEPLOYMENT,
  desired: desiredDeployment,
  labelSelector: MANAGED_SELECTOR,
});

export const serviceDependent = kubernetesDependent<V1Service, WebPage, Context<WebPage>>({
  name: 'service',
  resource: SERVICE,
  desired: desiredService,
  labelSelector: MANAGED_SELECTOR,
});

export const ingressDependent = kubernetesDependent<V1Ingress, WebPage, Context<WebPage>>({
  name: 'ingress',
  resource: INGRESS,
  desired: desiredIngress,
  labelSelector: MANAGED_SELECTOR,
});

/** Only exposed pages get an Ingress; turning `exposed` off deletes it. */
export const exposed = (_dependent: unknown, page: WebPage): boolean => page.spec.exposed === true;

/** The error handling both dependent-based variants share with the low-level one. */
export const updateErrorStatus: NonNullable<Reconciler<WebPage>['updateErrorStatus']> = (page, _ctx, error) => {
  const control = ErrorStatusUpdateControl.patchStatus({ ...page, status: errorStatus(invalidHtml(error) ?? error) });
  return invalidHtml(error) ? control.withNoRetry() : control;
};
// ---- end

// ---- from demos/webpage/low-level.ts
/** Sets the primary as controlling owner, so Kubernetes deletes the secondary with it. */
function owned<T extends KubernetesObject>(page: WebPage, obj: T): T {
  const owner = {
    apiVersion: page.apiVersion ?? WEBPAGE.apiVersion,
    kind: page.kind ?? WEBPAGE.kind,
    name: page.metadata?.name ?? '',
    uid: page.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [owner] } };
}

export const lowLevelReconciler: Reconciler<WebPage> = {
  async reconcile(page, ctx) {
    const configMap = desiredConfigMap(page); // throws InvalidHtmlError before anything is written
    await ctx.secondaryClient('configmaps').apply(owned(page, configMap));
    await ctx.secondaryClient('deployments').apply(owned(page, desiredDeployment(page)));
    await ctx.secondaryClient('services').apply(owned(page, desiredService(page)));
    const ingresses = ctx.secondaryClient('ingresses');
    if (page.spec.exposed) {
      await ingresses.apply(owned(page, desiredIngress(page)));
    } else if (ctx.getSecondaryResource('ingresses')) {
      await ingresses.delete({ name: appName(page), namespace: page.metadata?.namespace });
    }
    const ready = deploymentReadiness(ctx.getSecondaryResource<V1Deployment>('deployments')).met;
    return UpdateControl.patchStatus({ ...page, status: statusOf(page, ready) });
  },

  updateErrorStatus(page, ctx, error) {
    const control = ErrorStatusUpdateControl.patchStatus({ ...page, status: errorStatus(error) });
    // Invalid HTML stays invalid until the user edits the page, and the edit triggers a run.
    if (invalidHtml(error)) return control.withNoRetry();
    ctx.logger.info({ kind: classifyError(error) }, 'reconcile failed; retrying');
    return control;
  },
};

const secondary = (resource: SecondaryConfig['resource']): SecondaryConfig => ({ resource, labelSelector: MANAGED_SELECTOR });

export const lowLevelConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  name: 'webpage',
  observedGeneration: true,
  secondaries: [secondary(CONFIGMAP), secondary(DEPLOYMENT), secondary(SERVICE), secondary(INGRESS)],
};
// ---- end

// ---- from demos/webpage/managed.ts
export const webPageWorkflow = workflow<WebPage, Context<WebPage>>()
  .add(configMapDependent)
  .add(deploymentDependent, { dependsOn: [configMapDependent], readyPostcondition: deploymentReady })
  .add(serviceDependent, { dependsOn: [configMapDependent] })
  .add(ingressDependent, { dependsOn: [serviceDependent], reconcilePrecondition: exposed });

export const managedReconciler: Reconciler<WebPage> = {
  reconcile(page, ctx) {
    const ready = ctx.workflow?.reconcileResult?.allReady() ?? false;
    return UpdateControl.patchStatus({ ...page, status: statusOf(page, ready) });
  },
  updateErrorStatus,
};

export const managedConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  name: 'webpage',
  observedGeneration: true,
  workflow: webPageWorkflow,
};
// ---- end

// ---- from demos/webpage/standalone.ts
const dependents = [configMapDependent, deploymentDependent, serviceDependent, ingressDependent];

const standaloneWorkflow = workflow<WebPage, Context<WebPage>>()
  .add(configMapDependent)
  .add(deploymentDependent, { dependsOn: [configMapDependent], readyPostcondition: deploymentReady })
  .add(serviceDependent, { dependsOn: [configMapDependent] })
  .add(ingressDependent, { dependsOn: [serviceDependent], reconcilePrecondition: exposed })
  .build();

export const standaloneReconciler: Reconciler<WebPage> = {
  async reconcile(page, ctx) {
    validateHtml(page.spec?.html); // nothing is written for a page with invalid HTML
    const result = await standaloneWorkflow.reconcile(page, ctx);
    result.throwIfErrors();
    return UpdateControl.patchStatus({ ...page, status: statusOf(page, result.allReady()) });
  },
  updateErrorStatus,
};

export const standaloneConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  name: 'webpage',
  observedGeneration: true,
  // A standalone workflow's event sources are registered like any secondary source.
  secondaries: dependents.map((d) => d.eventSource),
};
// ---- end

// Every region above must still stand, verbatim (whitespace aside), in the demo file it names.
const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();
const self = readFileSync(new URL(import.meta.url), 'utf8');
for (const [, file, code] of self.matchAll(/\/\/ ---- from (demos\/webpage\/[\w-]+\.ts)\n([\s\S]*?)\/\/ ---- end/g)) {
  const demo = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  if (!normalize(demo).includes(normalize(code!))) throw new Error(`docs/examples/webpage.ts: the copy of ${file} no longer matches the demo`);
}

// The same script for each variant.
const variants: [string, Reconciler<WebPage>, ControllerConfig<WebPage>][] = [
  ['low-level', lowLevelReconciler, lowLevelConfig],
  ['managed', managedReconciler, managedConfig],
  ['standalone', standaloneReconciler, standaloneConfig],
];
for (const [name, reconciler, config] of variants) {
  const cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 100 } } });
  const operator = cluster.operator();
  operator.register(reconciler, config);
  await operator.start();
  const pages = cluster.client.resource<WebPage>(WEBPAGE);
  const statusOfPage = (page: string, done: (status: NonNullable<WebPage['status']>) => boolean) =>
    eventually(`${name}: ${page}`, async () => {
      const status = (await pages.find({ name: page, namespace: 'default' }))?.status;
      return status && done(status) ? status : undefined;
    });
  const names = async () => {
    const kinds = await Promise.all(
      [CONFIGMAP, DEPLOYMENT, SERVICE, INGRESS].map(async (resource) =>
        (await cluster.client.resource(resource).list({ namespace: 'default' })).items.map((o) => `${resource.kind} ${o.metadata!.name}`),
      ),
    );
    return kinds.flat().join(', ');
  };

  await cluster.apply(WEBPAGE, webPage('hello', '<html><body><h1>Hello</h1></body></html>', { exposed: true }));
  console.log(`${name}: hello ${JSON.stringify(await statusOfPage('hello', (s) => s.ready === true))}; ${await names()}`);
  await cluster.apply(WEBPAGE, webPage('hello', '<html><body><h1>Hello</h1></body></html>', { exposed: false }));
  await eventually(`${name}: ingress deleted`, async () => (await cluster.client.resource(INGRESS).list()).items.length === 0);
  console.log(`${name}: not exposed; ${await names()}`);
  await cluster.apply(WEBPAGE, webPage('broken', '<html><body><p>never closed</body></html>'));
  console.log(`${name}: broken ${JSON.stringify(await statusOfPage('broken', (s) => s.errorMessage !== undefined))}`);
  await cluster.close();
}
