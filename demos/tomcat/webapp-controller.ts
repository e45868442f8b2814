/**
 * The Webapp controller: deploys a .war into the Tomcat a Webapp names. "Deploying" writes the
 * Webapp's deployment ConfigMap (a managed dependent, owned by the Webapp, labelled with the
 * Tomcat). The Tomcats are a secondary source mapped from the Webapp (`toSecondaries`), so a
 * Tomcat's changes — its creation, its status, its spec — run every Webapp that names it (ES3).
 */
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import {
  ErrorStatusUpdateControl,
  kubernetesDependent,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
  type SecondarySpec,
} from '../../lib/index.js';
import { CONFIGMAP, MANAGED_SELECTOR, TOMCAT, WEBAPP, type Tomcat, type Webapp } from './model.js';
import { desiredDeploymentConfigMap, errorStatus, invalidWebapp, tomcatOf, validateWebapp, webappStatus } from './resources.js';

/** The source name of the Tomcats in the Webapp controller. */
export const TOMCAT_SOURCE = 'tomcat';

export const tomcatSource: SecondarySpec<KubernetesObject, Webapp> = {
  name: TOMCAT_SOURCE,
  resource: TOMCAT,
  // Only the inverse is needed: a Tomcat's events map back to the Webapps naming it through an
  // index of this mapper on the Webapp cache.
  toSecondaries: tomcatOf,
};

const namedTomcat = (ctx: Context<Webapp>): Tomcat | undefined => ctx.getSecondaryResource<Tomcat>(TOMCAT_SOURCE);

export const webappDeployment = kubernetesDependent<V1ConfigMap, Webapp, Context<Webapp>>({
  name: 'deployment',
  resource: CONFIGMAP,
  desired: desiredDeploymentConfigMap,
  labelSelector: MANAGED_SELECTOR,
});

/**
 * Invoked explicitly, after the spec was validated. Without its Tomcat a Webapp is not deployed
 * (a deployment left from before the Tomcat went away is deleted).
 */
export const webappWorkflow = workflow<Webapp, Context<Webapp>>()
  .add(webappDeployment, { reconcilePrecondition: (_dependent, _webapp, ctx) => namedTomcat(ctx) !== undefined })
  .build({ explicitInvocation: true });

export const webappReconciler: Reconciler<Webapp> = {
  async reconcile(webapp, ctx) {
    validateWebapp(webapp); // an invalid spec deploys nothing
    const result = await ctx.workflow!.reconcileManagedWorkflow();
    result.throwIfErrors();
    // No Tomcat yet: the status says so and the run ends without a retry; the Tomcat's creation
    // is an event of the Tomcat source, and it runs this Webapp again.
    return UpdateControl.patchStatus({ ...webapp, status: webappStatus(webapp, namedTomcat(ctx)) });
  },

  updateErrorStatus(webapp, _ctx, error) {
    const control = ErrorStatusUpdateControl.patchStatus({ ...webapp, status: errorStatus(webapp, error) });
    // An invalid spec stays invalid until the user edits the Webapp, and the edit triggers a run.
    return invalidWebapp(error) ? control.withNoRetry() : control;
  },
};

export const webappConfig: ControllerConfig<Webapp> = {
  resource: WEBAPP,
  name: 'webapp',
  observedGeneration: true,
  secondaries: [tomcatSource],
  workflow: webappWorkflow,
};
