/** The WebPage custom resource: its type, its CRD and the secondaries it owns. */
import type { KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';

export interface WebPageSpec {
  html: string;
  /** An Ingress is made only when true. */
  exposed?: boolean;
}

export interface WebPageStatus {
  htmlConfigMap?: string;
  /** The nginx Deployment has all its replicas available. */
  ready?: boolean;
  errorMessage?: string;
  observedGeneration?: number;
}

export interface WebPage extends KubernetesObject {
  spec: WebPageSpec;
  status?: WebPageStatus;
}

export const GROUP = 'sample.rxkube.dev';

export const WEBPAGE = { apiVersion: `${GROUP}/v1`, kind: 'WebPage', plural: 'webpages', namespaced: true } as const;
export const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true } as const;
export const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true } as const;
export const SERVICE = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true } as const;
export const INGRESS = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses', namespaced: true } as const;

/** Every secondary a WebPage owns carries this label, so the operator watches only its own. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'rxkube-webpage' } as const;
export const MANAGED_SELECTOR = { matchLabels: MANAGED_BY };

export const webPageCrd: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `webpages.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'webpages', singular: 'webpage', kind: 'WebPage', listKind: 'WebPageList', shortNames: ['wp'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['html'],
                properties: { html: { type: 'string' }, exposed: { type: 'boolean' } },
              },
              status: {
                type: 'object',
                properties: {
                  htmlConfigMap: { type: 'string' },
                  ready: { type: 'boolean' },
                  errorMessage: { type: 'string' },
                  observedGeneration: { type: 'integer' },
                },
              },
            },
          },
        },
        additionalPrinterColumns: [
          { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
          { name: 'ConfigMap', type: 'string', jsonPath: '.status.htmlConfigMap' },
          { name: 'Error', type: 'string', jsonPath: '.status.errorMessage' },
        ],
      },
    ],
  },
};

export function webPage(name: string, html: string, options: { namespace?: string; exposed?: boolean } = {}): WebPage {
  return {
    apiVersion: WEBPAGE.apiVersion,
    kind: WEBPAGE.kind,
    metadata: { name, namespace: options.namespace ?? 'default' },
    spec: { html, ...(options.exposed === undefined ? {} : { exposed: options.exposed }) },
  };
}
