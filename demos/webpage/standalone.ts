/**
 * The WebPage operator with a standalone workflow: the reconciler validates first, then runs the
 * workflow itself and decides what its result means.
 */
import { deploymentReady, UpdateControl, workflow, type Context, type ControllerConfig, type Reconciler } from '../../lib/index.js';
import { configMapDependent, deploymentDependent, exposed, ingressDependent, serviceDependent, updateErrorStatus } from './dependents.js';
import { WEBPAGE, type WebPage } from './model.js';
import { statusOf, validateHtml } from './resources.js';

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
    return UpdateControl.patchStatus({ ...page, status: statusOf(page, result.readyCondition(page)) });
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
