/** The WebPage custom resource: its type, its CRD and the secondaries it owns. */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { StatusCondition } from '../../lib/index.js';
import { builtinResources, customResourceDefinition, descriptorOf, statusConditionsSchema } from '../../lib/kube.js';

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
  /** `Ready`: what `kubectl wait --for=condition=Ready` waits for. */
  conditions?: StatusCondition[];
}

export interface WebPage extends KubernetesObject {
  spec: WebPageSpec;
  status?: WebPageStatus;
}

export const webPageCrd = customResourceDefinition({
  group: 'sample.rxkube.dev',
  kind: 'WebPage',
  plural: 'webpages',
  shortNames: ['wp'],
  spec: { type: 'object', required: ['html'], properties: { html: { type: 'string' }, exposed: { type: 'boolean' } } },
  status: {
    type: 'object',
    properties: {
      htmlConfigMap: { type: 'string' },
      ready: { type: 'boolean' },
      errorMessage: { type: 'string' },
      observedGeneration: { type: 'integer' },
      conditions: statusConditionsSchema,
    },
  },
  printerColumns: [
    { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
    { name: 'ConfigMap', type: 'string', jsonPath: '.status.htmlConfigMap' },
    { name: 'Error', type: 'string', jsonPath: '.status.errorMessage' },
  ],
});

export const WEBPAGE = descriptorOf(webPageCrd);
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
