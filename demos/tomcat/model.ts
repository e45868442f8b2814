/**
 * The two custom resources of the Tomcat operator — Tomcat (a server) and Webapp (a .war deployed
 * into a named Tomcat) — their CRDs, and the Kubernetes kinds they use.
 */
import type { KubernetesObject, V1CustomResourceDefinition, V1JSONSchemaProps } from '@kubernetes/client-node';
import type { StatusCondition } from '../../lib/index.js';
import { builtinResources, customResourceDefinition, descriptorOf, statusConditionsSchema } from '../../lib/kube.js';

export interface TomcatSpec {
  /** The tomcat image tag: the Deployment runs `tomcat:<version>`. */
  version: string;
  replicas: number;
}

export interface TomcatStatus {
  readyReplicas?: number;
  /** The Deployment rolled out the current spec and the Service exists. */
  ready?: boolean;
  observedGeneration?: number;
  /** `Ready`, from the workflow's result. */
  conditions?: StatusCondition[];
}

export interface Tomcat extends KubernetesObject {
  spec: TomcatSpec;
  status?: TomcatStatus;
}

export interface WebappSpec {
  /** The name of a Tomcat in the Webapp's namespace. */
  tomcat: string;
  /** Where the .war file is downloaded from. */
  url: string;
  /** Where Tomcat serves it; starts with '/'. */
  contextPath: string;
}

export interface WebappStatus {
  /** The Tomcat the Webapp is deployed into. */
  deployedTo?: string;
  /** `http://<tomcat-service><contextPath>`. */
  url?: string;
  /** The Tomcat it is deployed into is ready. */
  ready?: boolean;
  errorMessage?: string;
  observedGeneration?: number;
  /** `Ready`: deployed into a ready Tomcat. */
  conditions?: StatusCondition[];
}

export interface Webapp extends KubernetesObject {
  spec: WebappSpec;
  status?: WebappStatus;
}

export const GROUP = 'sample.rxkube.dev';

export const { configMap: CONFIGMAP, deployment: DEPLOYMENT, service: SERVICE } = builtinResources;

/** Every object the operator writes carries this label, so it watches only its own. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'rxkube-tomcat' } as const;
export const MANAGED_SELECTOR = { matchLabels: MANAGED_BY };
/** On a Webapp's deployment ConfigMap: the Tomcat it is deployed into (what a sidecar there selects). */
export const TOMCAT_LABEL = `${GROUP}/tomcat`;

/** A status schema of these fields plus observedGeneration and conditions. */
const statusSchema = (fields: Record<string, V1JSONSchemaProps>): V1JSONSchemaProps => ({
  type: 'object',
  properties: { ...fields, observedGeneration: { type: 'integer' }, conditions: statusConditionsSchema },
});

export const tomcatCrd = customResourceDefinition({
  group: GROUP,
  kind: 'Tomcat',
  plural: 'tomcats',
  shortNames: ['tc'],
  spec: {
    type: 'object',
    required: ['version', 'replicas'],
    properties: { version: { type: 'string', minLength: 1 }, replicas: { type: 'integer', minimum: 0 } },
  },
  status: statusSchema({ readyReplicas: { type: 'integer' }, ready: { type: 'boolean' } }),
  printerColumns: [
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  ],
});

export const webappCrd = customResourceDefinition({
  group: GROUP,
  kind: 'Webapp',
  plural: 'webapps',
  shortNames: ['wa'],
  spec: {
    type: 'object',
    required: ['tomcat', 'url', 'contextPath'],
    properties: { tomcat: { type: 'string' }, url: { type: 'string' }, contextPath: { type: 'string' } },
  },
  status: statusSchema({ deployedTo: { type: 'string' }, url: { type: 'string' }, ready: { type: 'boolean' }, errorMessage: { type: 'string' } }),
  printerColumns: [
    { name: 'Tomcat', type: 'string', jsonPath: '.spec.tomcat' },
    { name: 'URL', type: 'string', jsonPath: '.status.url' },
    { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
    { name: 'Error', type: 'string', jsonPath: '.status.errorMessage' },
  ],
});

export const TOMCAT = descriptorOf(tomcatCrd);
export const WEBAPP = descriptorOf(webappCrd);

export const crds: readonly V1CustomResourceDefinition[] = [tomcatCrd, webappCrd];

export function tomcat(name: string, spec: TomcatSpec, namespace = 'default'): Tomcat {
  return { apiVersion: TOMCAT.apiVersion, kind: TOMCAT.kind, metadata: { name, namespace }, spec };
}

export function webapp(name: string, spec: WebappSpec, namespace = 'default'): Webapp {
  return { apiVersion: WEBAPP.apiVersion, kind: WEBAPP.kind, metadata: { name, namespace }, spec };
}
