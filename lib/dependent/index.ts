export type {
  DeleteResult,
  DependentContext,
  DependentResource,
  DependentReconcileResult,
} from './types.js';
export {
  deleteDependent,
  dependentName,
  desiredFieldsEqual,
  isDeletable,
  reconcileDependent,
} from './reconcile.js';
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
export {
  appliedFieldsOf,
  kubernetesMatches,
  kubernetesMismatch,
  SERVER_OWNED_METADATA,
  type KubernetesMatchOptions,
} from './matchers.js';
export {
  BULK_DEPENDENT_LABEL,
  BULK_KEY_LABEL,
  bulkDependent,
  type BulkDependent,
  type BulkDependentOptions,
  type DesiredSet,
} from './bulk.js';
export {
  EXTERNAL_ID_KEY,
  externalDependent,
  externalStateDependent,
  type ExternalDependent,
  type ExternalDependentOptions,
  type ExternalPollingOptions,
  type ExternalStateDependent,
  type ExternalStateDependentOptions,
  type ExternalStateOptions,
} from './external.js';
