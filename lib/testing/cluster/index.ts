/**
 * `rxkube/testing/cluster`: an operator's integration tests against the embedded API server
 * (`@rxkube/apiserver`, an optional peer dependency: install it as a dev dependency).
 *
 * @module rxkube/testing/cluster
 */
export { startTestCluster, type ServiceAccountIdentity, type TestCluster, type TestClusterOptions } from './cluster.js';
export { rbacUsage, type RbacUsage } from './rbac.js';
export type { Operator, OperatorOptions, PolicyRule } from '../../controller/index.js';
export type { KubeClient, ResourceDescriptor } from '../../kube/index.js';
export {
  explore,
  formatFailure,
  replay,
  schemaWorkload,
  seededRandom,
  type Action,
  type ClusterState,
  type Coverage,
  type ExploreBudget,
  type ExploreOptions,
  type ExploreResult,
  type Failure,
  type GeneratedCase,
  type InputCase,
  type Invariant,
  type Oracle,
  type Perturbation,
  type PerturbationType,
  type Random,
  type RunVerdict,
  type SchemaWorkloadOptions,
  type Trace,
  type Workload,
} from './explore/index.js';

// Types that appear in the signatures above, exported so that users can name them.
export type {
  Context,
  ControllerConfig,
  DeleteControl,
  ErrorStatusUpdateControl,
  EventSourceInfo,
  EventSourceLike,
  InformerTuning,
  PrimaryWrite,
  Reconciler,
  RegisteredController,
  SecondaryConfig,
  SecondarySpec,
  SourceErrorOptions,
  TrackedClient,
  UpdateControl,
} from '../../controller/index.js';
export type {
  ConditionStatus,
  EventAction,
  EventCause,
  MaxIntervalCause,
  MaybePromise,
  RateLimitCause,
  ReconcileCause,
  ReconcileOutcome,
  ReconcileResult,
  RescheduleCause,
  ResourceEvent,
  ResourceID,
  RetryCause,
  RetryInfo,
  StatusCondition,
} from '../../core/index.js';
export type { DependentContext, DependentReconcileResult, DependentResource } from '../../dependent/index.js';
export type {
  ApplyOptions,
  BackoffPolicy,
  DeleteOptions,
  FieldSelector,
  HttpVerb,
  JsonPatchOperation,
  KubeList,
  KubeRequest,
  LabelSelector,
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
  ResourceClient,
  WriteOptions,
} from '../../kube/index.js';
export type { LeaderElectionOptions, LeaseClient } from '../../leader/index.js';
export type {
  CacheLabels,
  ControllerLabels,
  EventOptions,
  HealthCheck,
  HealthCheckResult,
  EventRecorder,
  RxkubeMetrics,
} from '../../observe/index.js';
export type { RateDecision, RateLimiter, Retry } from '../../processing/index.js';
export type { ShardStatus, ShardingOptions } from '../../sharding/index.js';
export type {
  BoundedStoreOptions,
  Indexer,
  ObjectTransform,
  PrimaryToSecondaryMapper,
  SecondaryToPrimaryMapper,
} from '../../sources/index.js';
export type {
  BoundCondition,
  Condition,
  ConditionKind,
  ConditionResult,
  ConditionValue,
  DependentOptions,
  DependentOutcome,
  DependentRef,
  DependentResult,
  DetailedConditionResult,
  EventSourceRegistry,
  ExecutionOptions,
  ManagedWorkflow,
  ManagedWorkflowInvocation,
  Workflow,
  WorkflowBuilder,
  WorkflowCleanupResult,
  WorkflowEvent,
  WorkflowNode,
  WorkflowOptions,
  WorkflowReconcileResult,
  WorkflowResultBase,
  WorkflowRunKind,
} from '../../workflow/index.js';
