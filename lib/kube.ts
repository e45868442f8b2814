/**
 * `rxkube/kube`: the thin layer over @kubernetes/client-node — a client from a kubeconfig with
 * apply/patch/status, resource descriptors, CRD helpers and error classification. It exports its
 * own names only: the types a reconciler also meets (`KubeClient`, `ResourceDescriptor`, the request
 * options, selectors) are imported from `rxkube`.
 *
 * @module rxkube/kube
 */
import './node-check.js';
export { loadKubeConfig, ownNamespace, type LoadKubeConfigOptions } from './kube/index.js';
export { DEFAULT_POOL_CONNECTIONS, shareConnections, type ShareConnectionsOptions } from './kube/index.js';
export { createKubeClient, type KubeClientOptions } from './kube/index.js';
export { builtinResources, descriptorOf, type GroupVersion } from './kube/index.js';
export {
  customResourceDefinition,
  installCustomResourceDefinition,
  crdToJson,
  statusConditionsSchema,
  type CustomResourceOptions,
} from './kube/index.js';
export { classifyError, errorMessage, KubeApiError, statusCodeOf, type KubeErrorKind, type KubeStatus } from './kube/index.js';
export {
  defineResource,
  StatusConditions,
  structuralSchema,
  type JsonSchema,
  type ResourceDefinition,
  type ResourceDefinitionOptions,
  type ResourceOf,
  type ResourceVersion,
  type ResourceVersions,
  type StorageVersion,
  type ValidationRule,
} from './kube/index.js';
