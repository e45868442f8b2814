/** The WebPage's secondaries as dependent resources, shared by the managed and standalone variants. */
import type { V1ConfigMap, V1Deployment, V1Ingress, V1Service } from '@kubernetes/client-node';
import { ErrorStatusUpdateControl, kubernetesDependent, type Context, type Reconciler } from '../../lib/index.js';
import { CONFIGMAP, DEPLOYMENT, INGRESS, MANAGED_SELECTOR, SERVICE, type WebPage } from './model.js';
import { desiredConfigMap, desiredDeployment, desiredIngress, desiredService, errorStatus, invalidHtml } from './resources.js';

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
  const control = ErrorStatusUpdateControl.patchStatus({ ...page, status: errorStatus(page, invalidHtml(error) ?? error) });
  return invalidHtml(error) ? control.withNoRetry() : control;
};
