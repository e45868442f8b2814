/** The WebPage custom resource, defined once: its type, its CRD and its descriptor; and the secondaries it owns. */
import { Type, type Static } from 'typebox';
import { builtinResources, defineResource, StatusConditions, type ResourceOf } from '../../lib/kube.js';

export const WebPageSpec = Type.Object({
  html: Type.String({ description: 'The page nginx serves, a whole <html> document.' }),
  exposed: Type.Optional(Type.Boolean({ description: 'An Ingress is made only when true.' })),
});

export const WebPageStatus = Type.Object({
  htmlConfigMap: Type.Optional(Type.String()),
  ready: Type.Optional(Type.Boolean({ description: 'The nginx Deployment has all its replicas available.' })),
  errorMessage: Type.Optional(Type.String()),
  observedGeneration: Type.Optional(Type.Integer()),
  conditions: Type.Optional(StatusConditions),
});

export type WebPageSpec = Static<typeof WebPageSpec>;
export type WebPageStatus = Static<typeof WebPageStatus>;

export const WebPageResource = defineResource({
  group: 'sample.rxkube.dev',
  kind: 'WebPage',
  plural: 'webpages',
  shortNames: ['wp'],
  versions: {
    v1: {
      spec: WebPageSpec,
      status: WebPageStatus,
      printerColumns: [
        { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
        { name: 'ConfigMap', type: 'string', jsonPath: '.status.htmlConfigMap' },
        { name: 'Error', type: 'string', jsonPath: '.status.errorMessage' },
      ],
    },
  },
});

export type WebPage = ResourceOf<typeof WebPageResource>;

export const webPageCrd = WebPageResource.crd;
export const WEBPAGE = WebPageResource.descriptor;
export const { configMap: CONFIGMAP, deployment: DEPLOYMENT, service: SERVICE, ingress: INGRESS } = builtinResources;

/** Every secondary a WebPage owns carries this label, so the operator watches only its own. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'rxkube-webpage' } as const;
export const MANAGED_SELECTOR = { matchLabels: MANAGED_BY };

export function webPage(name: string, html: string, options: { namespace?: string; exposed?: boolean } = {}): WebPage {
  return {
    apiVersion: WEBPAGE.apiVersion,
    kind: WEBPAGE.kind,
    metadata: { name, namespace: options.namespace ?? 'default' },
    spec: { html, ...(options.exposed === undefined ? {} : { exposed: options.exposed }) },
  };
}
