/** Descriptors of the built-in kinds a controller most often reads or writes. */
import type { ResourceDescriptor } from './descriptor.js';

/** Descriptors of the built-in kinds a controller most often reads or writes. */
export const builtinResources = {
  namespace: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  configMap: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  secret: { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  service: { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  serviceAccount: { apiVersion: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true },
  pod: { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  event: { apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  ingress: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses', namespaced: true },
  lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true },
  customResourceDefinition: {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceDescriptor>;
