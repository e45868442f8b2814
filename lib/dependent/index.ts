// The dependent layer's entry: the DependentResource contract and its Kubernetes, bulk and external kinds.
export type { DeleteResult, DependentContext, DependentResource, DependentReconcileResult } from './types.js';
export { deleteDependent, isDeletable, reconcileDependent } from './reconcile.js';
export {
  isServerReadable,
  kubernetesDependent,
  requireServerClient,
  type KubernetesDependent,
  type KubernetesDependentContext,
  type KubernetesDependentOptions,
  type KubernetesEventSource,
  type KubernetesMatcher,
  type KubernetesWriteOptions,
  type SecondaryWriter,
  type ServerReadable,
} from './kubernetes.js';
export { kubernetesMatches, kubernetesMismatch, type KubernetesMatchOptions } from './matchers.js';
export { bulkDependent, type BulkDependent, type BulkDependentOptions, type DesiredSet } from './bulk.js';
export {
  externalDependent,
  externalStateDependent,
  type ExternalDependent,
  type ExternalDependentOptions,
  type ExternalPollingOptions,
  type ExternalStateDependent,
  type ExternalStateDependentOptions,
  type ExternalStateOptions,
} from './external.js';
