/**
 * The Tomcat controller: a Deployment running `tomcat:<version>` and a Service, as managed
 * dependents; the reconciler only reports status from the workflow's result.
 */
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import {
  deploymentReady,
  kubernetesDependent,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
} from '../../lib/index.js';
import { DEPLOYMENT, MANAGED_SELECTOR, SERVICE, TOMCAT, type Tomcat } from './model.js';
import { desiredTomcatDeployment, desiredTomcatService, tomcatStatus } from './resources.js';

export const tomcatDeployment = kubernetesDependent<V1Deployment, Tomcat, Context<Tomcat>>({
  name: 'deployment',
  resource: DEPLOYMENT,
  desired: desiredTomcatDeployment,
  labelSelector: MANAGED_SELECTOR,
});

export const tomcatService = kubernetesDependent<V1Service, Tomcat, Context<Tomcat>>({
  name: 'service',
  resource: SERVICE,
  desired: desiredTomcatService,
  labelSelector: MANAGED_SELECTOR,
});

export const tomcatWorkflow = workflow<Tomcat, Context<Tomcat>>()
  .add(tomcatDeployment, { readyPostcondition: deploymentReady })
  .add(tomcatService);

export const tomcatReconciler: Reconciler<Tomcat> = {
  reconcile(tomcat, ctx) {
    const ready = ctx.workflow!.reconcileResult!.readyCondition(tomcat);
    const deployment = ctx.getSecondaryResource<V1Deployment>(tomcatDeployment.sourceName);
    return UpdateControl.patchStatus({ ...tomcat, status: tomcatStatus(deployment, ready) });
  },
};

export const tomcatConfig: ControllerConfig<Tomcat> = {
  resource: TOMCAT,
  name: 'tomcat',
  observedGeneration: true,
  workflow: tomcatWorkflow,
};
