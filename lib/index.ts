/**
 * `rxkube`: write an operator — the Operator, the Reconciler and its Context, controls,
 * configuration, retry and rate limit, dependents, workflows, mappers and the event sources a
 * controller takes. Pipeline builders: `rxkube/operators`; the Kubernetes client and CRD helpers:
 * `rxkube/kube`; test helpers: `rxkube/testing` (marble tests) and `rxkube/testing/cluster` (against the embedded API server, `@rxkube/apiserver`).
 *
 * @module rxkube
 */
import './node-check.js';
export type { ResourceID, ResourceEvent, EventAction, ReconcileOutcome, ReconcileResult, ReconcileCause, RetryInfo } from './core/index.js';
export { resourceKey, resourceIdOf, ConfigurationError, LeaseLostError, NoRetryError, RxkubeError } from './core/index.js';
export {
  statusCondition,
  setStatusCondition,
  findStatusCondition,
  isStatusConditionTrue,
  type StatusCondition,
  type StatusConditionInput,
  type ConditionStatus,
} from './core/index.js';

export { Operator, type OperatorOptions } from './controller/index.js';
export { UpdateControl, DeleteControl, ErrorStatusUpdateControl, type PrimaryWrite } from './controller/index.js';
export { operatorManifests, manifestsToYaml, kustomizeBase, type ManifestOptions, type OperatorManifests, type PolicyRule } from './controller/index.js';
export type {
  Context,
  ControllerConfig,
  EventSourceLike,
  InformerTuning,
  Reconciler,
  RegisteredController,
  SecondaryConfig,
  SourceErrorOptions,
  TrackedClient,
} from './controller/index.js';

export { GenericRetry, LinearRateLimiter, type GenericRetrySettings, type Retry, type RateLimiter, type RateDecision } from './processing/index.js';
export type { ShardingOptions, ShardStatus } from './sharding/index.js';

export {
  Mappers,
  primaryAnnotations,
  PRIMARY_NAME_ANNOTATION,
  PRIMARY_NAMESPACE_ANNOTATION,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
  type OwnerReferenceMapperOptions,
} from './sources/index.js';
export { compactManagedFields, stripManagedFields, type ObjectTransform } from './sources/index.js';
export {
  pollingSource,
  perResourcePolling,
  inboundSource,
  cachingInboundSource,
  timerSource,
  type PollingSource,
  type PollingSourceOptions,
  type PerResourcePollingSource,
  type PerResourcePollingOptions,
  type InboundSource,
  type CachingInboundSource,
  type TimerSource,
  type SourceError,
} from './sources/index.js';

export {
  kubernetesDependent,
  bulkDependent,
  externalDependent,
  externalStateDependent,
  reconcileDependent,
  deleteDependent,
  type DependentResource,
  type DependentContext,
  type DependentReconcileResult,
  type DeleteResult,
  type KubernetesDependent,
  type KubernetesDependentContext,
  type KubernetesDependentOptions,
  kubernetesMismatch,
  type KubernetesMatcher,
  type BulkDependent,
  type BulkDependentOptions,
  type DesiredSet,
  type ExternalDependent,
  type ExternalDependentOptions,
  type ExternalPollingOptions,
  type ExternalStateDependent,
  type ExternalStateDependentOptions,
  type ExternalStateOptions,
} from './dependent/index.js';

export {
  workflow,
  AggregatedOperatorError,
  crdPresent,
  deploymentReady,
  deploymentReadiness,
  resourceDeleted,
  type Workflow,
  type WorkflowBuilder,
  type WorkflowOptions,
  type DependentOptions,
  type DependentRef,
  type Condition,
  type ConditionResult,
  type DetailedConditionResult,
  type DependentOutcome,
  type DependentResult,
  type WorkflowResult,
  type WorkflowReconcileResult,
  type WorkflowCleanupResult,
  type CrdPresentOptions,
  type DeploymentReadiness,
} from './workflow/index.js';

export { createLogger, type CreateLoggerOptions, type Logger, type HealthCheck, type HealthCheckResult } from './observe/index.js';
export type { EventOptions, EventType, ResourceEvents } from './observe/index.js';
