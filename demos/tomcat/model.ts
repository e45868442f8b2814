/**
 * The two custom resources of the Tomcat operator — Tomcat (a server) and Webapp (a .war deployed
 * into a named Tomcat) — their CRDs, and the Kubernetes kinds they use.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { Type, type Static, type TProperties } from 'typebox';
import { builtinResources, defineResource, StatusConditions, type ResourceOf } from '../../lib/kube.js';

export const GROUP = 'sample.rxkube.dev';

export const { configMap: CONFIGMAP, deployment: DEPLOYMENT, service: SERVICE } = builtinResources;

/** Every object the operator writes carries this label, so it watches only its own. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'rxkube-tomcat' } as const;
export const MANAGED_SELECTOR = { matchLabels: MANAGED_BY };
/** On a Webapp's deployment ConfigMap: the Tomcat it is deployed into (what a sidecar there selects). */
export const TOMCAT_LABEL = `${GROUP}/tomcat`;

/** A status schema of these fields plus observedGeneration and conditions. */
const statusSchema = <F extends TProperties>(fields: F) =>
  Type.Object({ ...fields, observedGeneration: Type.Optional(Type.Integer()), conditions: Type.Optional(StatusConditions) });

export const TomcatSpec = Type.Object({
  version: Type.String({ minLength: 1, description: 'The tomcat image tag: the Deployment runs `tomcat:<version>`.' }),
  replicas: Type.Integer({ minimum: 0 }),
});
export const TomcatStatus = statusSchema({
  readyReplicas: Type.Optional(Type.Integer()),
  ready: Type.Optional(Type.Boolean({ description: 'The Deployment rolled out the current spec and the Service exists.' })),
});

export const WebappSpec = Type.Object({
  tomcat: Type.String({ description: "The name of a Tomcat in the Webapp's namespace." }),
  url: Type.String({ description: 'Where the .war file is downloaded from.' }),
  contextPath: Type.String({ description: "Where Tomcat serves it; starts with '/'." }),
});
export const WebappStatus = statusSchema({
  deployedTo: Type.Optional(Type.String({ description: 'The Tomcat the Webapp is deployed into.' })),
  url: Type.Optional(Type.String({ description: '`http://<tomcat-service><contextPath>`.' })),
  ready: Type.Optional(Type.Boolean({ description: 'The Tomcat it is deployed into is ready.' })),
  errorMessage: Type.Optional(Type.String()),
});

export const TomcatResource = defineResource({
  group: GROUP,
  kind: 'Tomcat',
  plural: 'tomcats',
  shortNames: ['tc'],
  versions: {
    v1: {
      spec: TomcatSpec,
      status: TomcatStatus,
      printerColumns: [
        { name: 'Version', type: 'string', jsonPath: '.spec.version' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
      ],
    },
  },
});

export const WebappResource = defineResource({
  group: GROUP,
  kind: 'Webapp',
  plural: 'webapps',
  shortNames: ['wa'],
  versions: {
    v1: {
      spec: WebappSpec,
      status: WebappStatus,
      printerColumns: [
        { name: 'Tomcat', type: 'string', jsonPath: '.spec.tomcat' },
        { name: 'URL', type: 'string', jsonPath: '.status.url' },
        { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
        { name: 'Error', type: 'string', jsonPath: '.status.errorMessage' },
      ],
    },
  },
});

export type TomcatSpec = Static<typeof TomcatSpec>;
export type TomcatStatus = Static<typeof TomcatStatus>;
export type Tomcat = ResourceOf<typeof TomcatResource>;
export type WebappSpec = Static<typeof WebappSpec>;
export type WebappStatus = Static<typeof WebappStatus>;
export type Webapp = ResourceOf<typeof WebappResource>;

export const tomcatCrd = TomcatResource.crd;
export const webappCrd = WebappResource.crd;
export const TOMCAT = TomcatResource.descriptor;
export const WEBAPP = WebappResource.descriptor;

export const crds: readonly V1CustomResourceDefinition[] = [tomcatCrd, webappCrd];

export function tomcat(name: string, spec: TomcatSpec, namespace = 'default'): Tomcat {
  return { apiVersion: TOMCAT.apiVersion, kind: TOMCAT.kind, metadata: { name, namespace }, spec };
}

export function webapp(name: string, spec: WebappSpec, namespace = 'default'): Webapp {
  return { apiVersion: WEBAPP.apiVersion, kind: WEBAPP.kind, metadata: { name, namespace }, spec };
}
