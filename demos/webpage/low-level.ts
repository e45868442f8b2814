/**
 * The WebPage operator written by hand: the reconciler applies its secondaries itself through
 * the context's tracked clients, and reads their state from the caches.
 */
import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import {
  deploymentReadiness,
  ErrorStatusUpdateControl,
  UpdateControl,
  type ControllerConfig,
  type Reconciler,
  type SecondarySpec,
} from '../../lib/index.js';
import { classifyError } from '../../lib/kube.js';
import { CONFIGMAP, DEPLOYMENT, INGRESS, MANAGED_SELECTOR, SERVICE, WEBPAGE, type WebPage } from './model.js';
import {
  appName,
  desiredConfigMap,
  desiredDeployment,
  desiredIngress,
  desiredService,
  errorStatus,
  invalidHtml,
  statusOf,
  deploymentReadyCondition,
} from './resources.js';

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
    return UpdateControl.patchStatus({ ...page, status: statusOf(page, deploymentReadyCondition(page, ready)) });
  },

  updateErrorStatus(page, ctx, error) {
    const control = ErrorStatusUpdateControl.patchStatus({ ...page, status: errorStatus(page, error) });
    // Invalid HTML stays invalid until the user edits the page, and the edit triggers a run.
    if (invalidHtml(error)) return control.withNoRetry();
    ctx.logger.info({ kind: classifyError(error) }, 'reconcile failed; retrying');
    return control;
  },
};

/** A source the reconciler also writes through (`writes`: what `rxkube manifests` grants for it). */
const secondary = (resource: SecondarySpec['resource'], writes: NonNullable<SecondarySpec['writes']>): SecondarySpec => ({
  resource,
  labelSelector: MANAGED_SELECTOR,
  writes,
});

export const lowLevelConfig: ControllerConfig<WebPage> = {
  resource: WEBPAGE,
  name: 'webpage',
  observedGeneration: true,
  secondaries: [
    secondary(CONFIGMAP, ['apply']),
    secondary(DEPLOYMENT, ['apply']),
    secondary(SERVICE, ['apply']),
    secondary(INGRESS, ['apply', 'delete']),
  ],
};
