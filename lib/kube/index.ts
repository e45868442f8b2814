// The kube layer's entry: kubeconfig, descriptors, the client, requests, watches, CRDs and API errors.
export { loadKubeConfig, ownNamespace, readKubeConfig, type KubeConfigData, type LoadKubeConfigOptions } from './config.js';
export {
  apiVersionPath,
  parseApiVersion,
  resolveDescriptor,
  resourcePath,
  type GroupVersion,
  type ResolvedDescriptor,
  type ResourceDescriptor,
} from './descriptor.js';
export { classifyError, errorMessage, KubeApiError, statusCodeOf, statusOf, type KubeErrorKind, type KubeStatus } from './errors.js';
export { DEFAULT_POOL_CONNECTIONS, shareConnections, type ShareConnectionsOptions } from './connections.js';
export { type HttpVerb, type KubeRequest, type RequestFn } from './request.js';
export { openWatchStream } from './watch-stream.js';
export { METADATA_LIST_ACCEPT, METADATA_OBJECT_ACCEPT, toPartialObjectMetadata, type PartialObjectMetadata } from './metadata.js';
export { rxkubeUserAgent } from './user-agent.js';
export {
  createKubeClient,
  isKubeClient,
  kubeClientOf,
  watchTargetOf,
  refOf,
  abortingWith,
  serverOf,
  wrapRequests,
  type ApplyOptions,
  type DeleteOptions,
  type JsonPatchOperation,
  type KubeClient,
  type KubeClientOptions,
  type KubeList,
  type ListOptions,
  type ListResult,
  type ObjectRef,
  type PatchOptions,
  type PatchType,
  type RequestOptions,
  type ResourceClient,
  type WriteOptions,
} from './client.js';
export {
  formatFieldSelector,
  formatLabelSelector,
  type FieldSelector,
  type LabelSelector,
  type LabelSelectorObject,
  type LabelSelectorRequirement,
} from './selectors.js';
export { builtinResources } from './builtins.js';
export {
  crdToJson,
  customResourceDefinition,
  descriptorOf,
  installCustomResourceDefinition,
  statusConditionsSchema,
  type CustomResourceOptions,
} from './crd.js';
export { structuralSchema, type JsonSchema } from './structural.js';
export {
  defineResource,
  type ResourceDefinition,
  type ResourceDefinitionOptions,
  type ResourceOf,
  type ResourceVersion,
  type ResourceVersions,
  type StorageVersion,
  type ValidationRule,
} from './define.js';
export { StatusConditions } from './conditions-schema.js';
