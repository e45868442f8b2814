/**
 * The WebPage operator with managed dependents: the workflow runs before `reconcile`, which only
 * reports status from the workflow's result.
 */
import { deploymentReady, UpdateControl, workflow, type Context, type ControllerConfig, type Reconciler } from '../../lib/index.js';
import { configMapDependent, deploymentDependent, exposed, ingressDependent, serviceDependent, updateErrorStatus } from './dependents.js';
import { WEBPAGE, type WebPage } from './model.js';
import { statusOf } from './resources.js';

export const webPageWorkflow = workflow<WebPage, Context<WebPage>>()
  .add(configMapDependent)
  .add(deploymentDependent, { dependsOn: [configMapDependent], readyPostcondition: deploymentReady })
  .add(serviceDependent, { dependsOn: [configMapDependent] })
  .add(ingressDependent, { dependsOn: [serviceDependent], reconcilePrecondition: exposed });

export const managedReconciler: Reconciler<WebPage> = {
  reconcile(page, ctx) {
    // Ready is True once every dependent is ready; else False, naming the ones it waits for.
    const ready = ctx.workflow!.reconcileResult!.readyCondition(page);
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
