/** Desired state of the Tomcat operator: pure functions of the primaries (and the Tomcat a Webapp names). */
import type { V1ConfigMap, V1Deployment, V1Service } from '@kubernetes/client-node';
import { statusCondition, type ResourceID, type StatusCondition } from '../../lib/index.js';
import { MANAGED_BY, TOMCAT_LABEL, type Tomcat, type TomcatStatus, type Webapp, type WebappStatus } from './model.js';

/** A Webapp spec that cannot be deployed whatever happens elsewhere: only an edit fixes it. */
export class InvalidWebappError extends Error {
  override readonly name = 'InvalidWebappError';
}

/** The Tomcat's Deployment and Service are both named after the Tomcat. */
export const tomcatAppName = (tomcat: Tomcat): string => `${tomcat.metadata?.name}`;
export const deploymentConfigMapName = (webapp: Webapp): string => `${webapp.metadata?.name}-deployment`;

function metadata(name: string, namespace: string | undefined, labels: Record<string, string>) {
  return { name, namespace, labels: { ...MANAGED_BY, ...labels } };
}

export function desiredTomcatDeployment(tomcat: Tomcat): V1Deployment {
  const app = tomcatAppName(tomcat);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(app, tomcat.metadata?.namespace, { app }),
    spec: {
      replicas: tomcat.spec.replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          containers: [{ name: 'tomcat', image: `tomcat:${tomcat.spec.version}`, ports: [{ containerPort: 8080 }] }],
        },
      },
    },
  };
}

export function desiredTomcatService(tomcat: Tomcat): V1Service {
  const app = tomcatAppName(tomcat);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(app, tomcat.metadata?.namespace, { app }),
    spec: { selector: { app }, ports: [{ port: 80, targetPort: 8080 }] },
  };
}

export function tomcatStatus(deployment: V1Deployment | undefined, ready: StatusCondition): TomcatStatus {
  return { readyReplicas: deployment?.status?.readyReplicas ?? 0, ready: ready.status === 'True', conditions: [ready] };
}

/** Throws InvalidWebappError naming every field that is wrong. */
export function validateWebapp(webapp: Webapp): Webapp {
  const spec: Partial<Record<keyof Webapp['spec'], unknown>> = webapp.spec ?? {};
  const problems: string[] = [];
  if (typeof spec.tomcat !== 'string' || spec.tomcat === '') problems.push('spec.tomcat must name a Tomcat');
  if (typeof spec.url !== 'string' || !spec.url.endsWith('.war')) {
    problems.push(`spec.url must be the URL of a .war file, got ${JSON.stringify(spec.url ?? null)}`);
  }
  if (typeof spec.contextPath !== 'string' || !spec.contextPath.startsWith('/')) {
    problems.push(`spec.contextPath must start with '/', got ${JSON.stringify(spec.contextPath ?? null)}`);
  }
  if (problems.length > 0) throw new InvalidWebappError(problems.join('; '));
  return webapp;
}

/** The Tomcat a Webapp names (ES3 primary → secondary, many Webapps to one Tomcat). */
export function tomcatOf(webapp: Webapp): ResourceID[] {
  const name = webapp.spec?.tomcat;
  if (typeof name !== 'string' || name === '') return [];
  const namespace = webapp.metadata?.namespace;
  return [namespace ? { name, namespace } : { name }];
}

/**
 * The Webapp "deployed": what a sidecar in the Tomcat's pods would pick up (selected by the
 * Tomcat label) to download the war into Tomcat's webapps folder.
 */
export function desiredDeploymentConfigMap(webapp: Webapp): V1ConfigMap {
  const { tomcat, url, contextPath } = validateWebapp(webapp).spec;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(deploymentConfigMapName(webapp), webapp.metadata?.namespace, { [TOMCAT_LABEL]: tomcat }),
    data: { warUrl: url, contextPath },
  };
}

/**
 * A Tomcat is ready for its Webapps once its own controller reported ready for its current
 * generation (a status from before a spec change does not count).
 */
export function tomcatReady(tomcat: Tomcat): boolean {
  const status = tomcat.status;
  return status?.ready === true && status.observedGeneration === tomcat.metadata?.generation;
}

export function webappStatus(webapp: Webapp, tomcat: Tomcat | undefined): WebappStatus {
  if (!tomcat) {
    const where = webapp.metadata?.namespace ? ` in namespace '${webapp.metadata.namespace}'` : '';
    const message = `Tomcat '${webapp.spec.tomcat}' not found${where}; the Webapp is deployed when it is created`;
    return {
      ready: false,
      errorMessage: message,
      conditions: [statusCondition(webapp, { type: 'Ready', status: false, reason: 'TomcatNotFound', message })],
    };
  }
  const ready = tomcatReady(tomcat);
  return {
    deployedTo: tomcatAppName(tomcat),
    url: `http://${tomcatAppName(tomcat)}${webapp.spec.contextPath}`,
    ready,
    conditions: [
      statusCondition(webapp, {
        type: 'Ready',
        status: ready,
        reason: ready ? 'TomcatReady' : 'TomcatNotReady',
        message: `deployed into Tomcat '${tomcatAppName(tomcat)}'${ready ? '' : ', which is not ready yet'}`,
      }),
    ],
  };
}

export function errorStatus(webapp: Webapp, error: unknown): WebappStatus {
  const message = error instanceof Error ? error.message : String(error);
  return {
    ready: false,
    errorMessage: message,
    conditions: [statusCondition(webapp, { type: 'Ready', status: false, reason: 'ReconcileFailed', message })],
  };
}

/** The InvalidWebappError behind `error`, also when a workflow aggregated it with others. */
export function invalidWebapp(error: unknown): InvalidWebappError | undefined {
  if (error instanceof InvalidWebappError) return error;
  if (error instanceof AggregateError) return error.errors.map(invalidWebapp).find((e) => e !== undefined);
  return undefined;
}
