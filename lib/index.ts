/**
 * `rxkube`: write an operator — the Operator, the Reconciler and its Context, controls,
 * configuration, retry and rate limit, dependents, workflows, mappers and the event sources a
 * controller takes. Pipeline builders: `rxkube/pipeline`; the Kubernetes client and CRD helpers:
 * `rxkube/kube`; test helpers: `rxkube/testing` (marble tests) and `rxkube/testing/cluster` (against the embedded API server, `@rxkube/apiserver`).
 *
 * @module rxkube
 */
import './node-check.js';
export type { ResourceID, ResourceEvent, EventAction, ReconcileOutcome, ReconcileResult, ReconcileCause, RetryInfo } from './core/index.js';
export type { EventCause, MaxIntervalCause, MaybePromise, RateLimitCause, RescheduleCause, RetryCause } from './core/index.js';
export { resourceKey, resourceIdOf, ConfigurationError, LeaseLostError, NoRetryError, RunTimeoutError, RxkubeError } from './core/index.js';
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
export type {
  AdmissionAnswer,
  AdmissionFailure,
  AdmissionOperation,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionUserInfo,
  AdmissionWebhook,
  AnyAdmissionWebhook,
  AnyWebhook,
  ConversionWebhook,
  WebhookServerOptions,
  WebhookTls,
} from './webhooks/index.js';
export { UpdateControl, DeleteControl, ErrorStatusUpdateControl, type PrimaryWrite } from './controller/index.js';
export {
  operatorManifests,
  manifestsToYaml,
  kustomizeBase,
  type ManifestOptions,
  type OperatorManifests,
  type PolicyRule,
} from './controller/index.js';
export type {
  Context,
  ControllerConfig,
  EventSourceLike,
  InformerTuning,
  Reconciler,
  RegisteredController,
  SecondaryConfig,
  SecondarySpec,
  SecondaryWrite,
  SourceErrorOptions,
  TrackedClient,
  EventSourceInfo,
} from './controller/index.js';

export {
  GenericRetry,
  LinearRateLimiter,
  type GenericRetrySettings,
  type Retry,
  type RateLimiter,
  type RateDecision,
  type LinearRateState,
} from './processing/index.js';
export type { ShardingOptions, ShardStatus } from './sharding/index.js';
export type { LeaderElectionOptions } from './leader/index.js';
export type { BackoffPolicy } from './core/index.js';
export type {
  ApplyOptions,
  FieldSelector,
  KubeClient,
  LabelSelector,
  PartialObjectMetadata,
  ResourceClient,
  ResourceDescriptor,
} from './kube/index.js';

export {
  Mappers,
  primaryAnnotations,
  PRIMARY_NAME_ANNOTATION,
  PRIMARY_NAMESPACE_ANNOTATION,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
  type OwnerReferenceMapperOptions,
  type PrimaryKind,
} from './sources/index.js';
export {
  compactManagedFields,
  stripManagedFields,
  type ObjectTransform,
  type BoundedStoreOptions,
  type Indexer,
  type StoreReader,
} from './cache/index.js';
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
  type PollingCommon,
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
  type KubernetesEventSource,
  type KubernetesMatchOptions,
  type KubernetesWriteOptions,
  type SecondaryWriter,
  type ServerReadable,
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
  type WorkflowErrorSummary,
  type WorkflowReconcileResult,
  type WorkflowCleanupResult,
  type CrdPresentOptions,
  type DeploymentReadiness,
  type ConditionKind,
  type ConditionValue,
  type CrdPresentDetail,
  type ResourceDeletedDetail,
  type ServerContext,
  type EventSourceRegistry,
  type ExecutionOptions,
  type ManagedWorkflow,
  type ManagedWorkflowInvocation,
  type WorkflowEvent,
  type WorkflowNode,
  type WorkflowResultBase,
} from './workflow/index.js';

export { createLogger, type CreateLoggerOptions, type Logger, type HealthCheck, type HealthCheckResult } from './observe/index.js';
export type {
  EventOptions,
  EventType,
  EventRecorder,
  ResourceEvents,
  RxkubeMetrics,
  SpanAttributes,
  SpanFn,
  StartupPhase,
  TracerProviderLike,
  TracingOptions,
} from './observe/index.js';

// Types that appear in the signatures above, exported so that users can name them.
export type {
  DeleteOptions,
  HttpVerb,
  JsonPatchOperation,
  KubeList,
  KubeRequest,
  LabelSelectorObject,
  LabelSelectorRequirement,
  ListOptions,
  ListResult,
  ObjectRef,
  PatchOptions,
  PatchType,
  RequestFn,
  RequestOptions,
  ResolvedDescriptor,
  WriteOptions,
} from './kube/index.js';
export type { LeaseClient } from './leader/index.js';
export type { ListAnswer, ListRequest, ListWatchClient, ListWatchScope, WatchEventType, WatchRequest } from './cache/index.js';
export type { CacheLabels, ControllerLabels } from './observe/index.js';
export type { BoundCondition, WorkflowRunKind } from './workflow/index.js';
