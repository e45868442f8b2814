/** The Tomcat operator: two controllers, Tomcat and Webapp, in one Operator. */
import type { Operator, RegisteredController } from '../../lib/index.js';
import { tomcatConfig, tomcatReconciler } from './tomcat-controller.js';
import { webappConfig, webappReconciler } from './webapp-controller.js';

export { crds, tomcatCrd, webappCrd } from './model.js';

export interface TomcatOperatorControllers {
  readonly tomcats: RegisteredController;
  readonly webapps: RegisteredController;
}

/** Registers both controllers (before `operator.start()`); install `crds` first. */
export function registerTomcatOperator(operator: Operator): TomcatOperatorControllers {
  return {
    tomcats: operator.register(tomcatReconciler, tomcatConfig),
    webapps: operator.register(webappReconciler, webappConfig),
  };
}

/** For `rxkube manifests --module demos/tomcat/operator.ts`. */
export { registerTomcatOperator as register };
