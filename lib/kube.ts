/**
 * `rxkube/kube`: the thin layer over @kubernetes/client-node — a client from a kubeconfig with
 * apply/patch/status, resource descriptors, CRD helpers and error classification.
 *
 * @module rxkube/kube
 */
import './node-check.js';
export { loadKubeConfig, ownNamespace, type LoadKubeConfigOptions } from './kube/index.js';
export { DEFAULT_POOL_CONNECTIONS, shareConnections, type ShareConnectionsOptions } from './kube/index.js';
export {
  createKubeClient,
  type KubeClient,
  type KubeClientOptions,
  type ResourceClient,
  type ApplyOptions,
  type DeleteOptions,
  type JsonPatchOperation,
  type KubeList,
  type ListOptions,
  type ListResult,
  type ObjectRef,
  type PatchOptions,
  type PatchType,
  type RequestOptions,
  type WriteOptions,
  type KubeRequest,
  type HttpVerb,
} from './kube/index.js';
export { builtinResources, descriptorOf, type ResourceDescriptor, type ResolvedDescriptor, type GroupVersion } from './kube/index.js';
export type { RequestFn } from './kube/index.js';
export {
  customResourceDefinition,
  installCustomResourceDefinition,
  crdToJson,
  statusConditionsSchema,
  type CustomResourceOptions,
} from './kube/index.js';
export { classifyError, errorMessage, KubeApiError, statusCodeOf, type KubeErrorKind, type KubeStatus } from './kube/index.js';
export type { FieldSelector, LabelSelector, LabelSelectorObject, LabelSelectorRequirement } from './kube/index.js';
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
