// The workflow of docs/workflows.md. Type-checked with the project; spec/workflow/docs.spec.ts
// checks that the diagram on that page is what `toMermaid()` prints for it.
import type { KubernetesObject, V1ConfigMap, V1Deployment, V1Ingress, V1Service } from '@kubernetes/client-node';
import {
  DeleteControl,
  UpdateControl,
  crdPresent,
  deploymentReady,
  kubernetesDependent,
  resourceDeleted,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
} from 'rxkube';
import { builtinResources } from 'rxkube/kube';

export interface WebPage extends KubernetesObject {
  spec: { html: string; exposed?: boolean; replicas?: number };
  status?: { ready?: boolean; waitingFor?: string[]; message?: string };
}

export const WEBPAGE = { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', plural: 'webpages' };

const nameOf = (page: WebPage) => page.metadata!.name!;
const { configMap: CONFIGMAP, deployment: DEPLOYMENT, service: SERVICE, ingress: INGRESS } = builtinResources;

const html = kubernetesDependent<V1ConfigMap, WebPage>({
  name: 'html',
  resource: CONFIGMAP,
  desired: (page) => ({ metadata: { name: `${nameOf(page)}-html` }, data: { 'index.html': page.spec.html } }),
});

const deployment = kubernetesDependent<V1Deployment, WebPage>({
  name: 'deployment',
  resource: DEPLOYMENT,
  desired: (page) => ({
    metadata: { name: nameOf(page) },
    spec: {
      replicas: page.spec.replicas ?? 1,
      selector: { matchLabels: { app: nameOf(page) } },
      template: {
        metadata: { labels: { app: nameOf(page) } },
        spec: {
          containers: [{ name: 'nginx', image: 'nginx:1.27', volumeMounts: [{ name: 'html', mountPath: '/usr/share/nginx/html' }] }],
          volumes: [{ name: 'html', configMap: { name: `${nameOf(page)}-html` } }],
        },
      },
    },
  }),
});

const service = kubernetesDependent<V1Service, WebPage>({
  name: 'service',
  resource: SERVICE,
  desired: (page) => ({
    metadata: { name: nameOf(page) },
    spec: { selector: { app: nameOf(page) }, ports: [{ port: 80 }] },
  }),
});

// Deleted by the workflow (not by owner references), so `resourceDeleted` can hold the rest back.
const ingress = kubernetesDependent<V1Ingress, WebPage>({
  name: 'ingress',
  resource: INGRESS,
  garbageCollected: false,
  desired: (page) => ({
    metadata: { name: nameOf(page) },
    spec: {
      rules: [
        {
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: nameOf(page), port: { number: 80 } } } }],
          },
        },
      ],
    },
  }),
});

// Only on clusters that have the Prometheus operator's CRD.
const monitor = kubernetesDependent<KubernetesObject & { spec: object }, WebPage>({
  name: 'monitor',
  resource: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', plural: 'servicemonitors' },
  desired: (page) => ({
    metadata: { name: nameOf(page) },
    spec: { selector: { matchLabels: { app: nameOf(page) } }, endpoints: [{ port: 'http' }] },
  }),
});

export const webPageWorkflow = workflow<WebPage, Context<WebPage>>()
  .add(html)
  .add(deployment, { dependsOn: html, readyPostcondition: deploymentReady })
  .add(service, { dependsOn: deployment })
  .add(ingress, {
    dependsOn: service,
    reconcilePrecondition: (_ingress, page) => page.spec.exposed === true,
    deletePostcondition: resourceDeleted,
  })
  .add(monitor, { dependsOn: service, activationCondition: crdPresent('servicemonitors.monitoring.coreos.com') });

// Managed: the workflow runs before reconcile, which reports its result in the status.
export const webPages: Reconciler<WebPage> = {
  reconcile(page, ctx) {
    const result = ctx.workflow?.reconcileResult;
    const status = { ready: result?.allReady() ?? false, waitingFor: [...(result?.notReady ?? [])] };
    return UpdateControl.patchStatus({ ...page, status });
  },
};

export const webPagesConfig: ControllerConfig<WebPage> = { resource: WEBPAGE, workflow: webPageWorkflow };

// Explicit invocation: the reconciler decides whether and when the managed workflow runs.
export const checkedWebPages: Reconciler<WebPage> = {
  async reconcile(page, ctx) {
    if (!page.spec.html.includes('<html')) {
      return UpdateControl.patchStatus({ ...page, status: { ready: false, message: 'spec.html is not an HTML page' } });
    }
    const result = await ctx.workflow!.reconcileManagedWorkflow();
    return UpdateControl.patchStatus({ ...page, status: { ready: result.allReady() } });
  },
};

export const checkedWebPagesConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  workflow: webPageWorkflow.build({ explicitInvocation: true }),
};

// Standalone: the reconciler owns the workflow and calls it; the dependents' event sources are
// declared as ordinary secondaries, and errors and the finalizer are the reconciler's to handle.
const standalone = workflow<WebPage, Context<WebPage>>()
  .add(html)
  .add(deployment, { dependsOn: html, readyPostcondition: deploymentReady })
  .add(service, { dependsOn: deployment })
  .build({ maxConcurrentDependents: 2 });

export const standaloneWebPages: Reconciler<WebPage> = {
  async reconcile(page, ctx) {
    const result = await standalone.reconcile(page, ctx);
    result.throwIfErrors();
    return UpdateControl.patchStatus({ ...page, status: { ready: result.allReady() } });
  },
  async cleanup(page, ctx) {
    const result = await standalone.cleanup(page, ctx);
    result.throwIfErrors();
    return result.allDeleted() ? DeleteControl.defaultDelete() : DeleteControl.noFinalizerRemoval().rescheduleAfter(5_000);
  },
};

export const standaloneWebPagesConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  secondaries: [html.eventSource, deployment.eventSource, service.eventSource],
};
