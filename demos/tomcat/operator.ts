/** The Tomcat operator: two controllers, Tomcat and Webapp, in one Operator. */
import type { Operator, ReconcileOutcome, RegisteredController } from '../../lib/index.js';
import type { Observable } from 'rxjs';
import { tomcatConfig, tomcatReconciler } from './tomcat-controller.js';
import { webappConfig, webappReconciler } from './webapp-controller.js';

export { crds, tomcatCrd, webappCrd } from './model.js';

export type TomcatOperatorController = RegisteredController & { readonly outcome$: Observable<ReconcileOutcome> };

export interface TomcatOperatorControllers {
  readonly tomcats: TomcatOperatorController;
  readonly webapps: TomcatOperatorController;
}

/** Registers both controllers (before `operator.start()`); install `crds` first. */
export function registerTomcatOperator(operator: Operator): TomcatOperatorControllers {
  return {
    tomcats: operator.register(tomcatReconciler, tomcatConfig),
    webapps: operator.register(webappReconciler, webappConfig),
  };
}
