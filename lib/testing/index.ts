/**
 * `rxkube/testing`: helpers for tests of an operator — marble tests of its scheduling in virtual
 * time, and waiting for a condition; tests against the embedded API server: `rxkube/testing/cluster`.
 *
 * @module rxkube/testing
 */
import '../node-check.js';
export { causeCode, failAfter, outcomeCode, succeedAfter, testScheduler } from './marbles.js';
// Also in the main entry point (it builds events for pipelines of your own); kept here for marble tests.
export {
  resourceEvent,
  type ResourceEventOptions,
  type EventAction,
  type ReconcileCause,
  type ReconcileOutcome,
  type ResourceEvent,
} from '../core/index.js';
export type { Operator } from '../controller/index.js';
export type { RunResult } from '../processing/index.js';
export { consistently, eventually } from './wait.js';
export {
  parseTrace,
  recordTrace,
  replayTrace,
  TRACE_FORMAT,
  TRACE_VERSION,
  type TraceEntry,
  type TraceFile,
  type TraceRecorder,
  type TraceReplay,
  type TraceReplayOptions,
} from './trace.js';

// Types that appear in the signatures above, exported so that users can name them.
export type {
  Context,
  ControllerConfig,
  DeleteControl,
  ErrorStatusUpdateControl,
  EventSourceInfo,
  EventSourceLike,
  InformerTuning,
  OperatorOptions,
  PrimaryWrite,
  Reconciler,
  RegisteredController,
  SecondaryConfig,
  SecondarySpec,
  SourceErrorOptions,
  TrackedClient,
  UpdateControl,
} from '../controller/index.js';
export type {
  ConditionStatus,
  EventCause,
  MaxIntervalCause,
  MaybePromise,
  RateLimitCause,
  ReconcileResult,
  RescheduleCause,
  ResourceID,
  RetryCause,
  RetryInfo,
  StatusCondition,
} from '../core/index.js';
export type { DependentContext, DependentReconcileResult, DependentResource } from '../dependent/index.js';
export type {
  ApplyOptions,
  BackoffPolicy,
  DeleteOptions,
  FieldSelector,
  HttpVerb,
  JsonPatchOperation,
  KubeClient,
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
  ResourceDescriptor,
  WriteOptions,
} from '../kube/index.js';
export type { LeaderElectionOptions, LeaseClient } from '../leader/index.js';
export type {
  CacheLabels,
  ControllerLabels,
  EventOptions,
  HealthCheck,
  HealthCheckResult,
  EventRecorder,
  RxkubeMetrics,
} from '../observe/index.js';
export type { RateDecision, RateLimiter, Retry } from '../processing/index.js';
export type { ShardStatus, ShardingOptions } from '../sharding/index.js';
export type {
  BoundedStoreOptions,
  Indexer,
  ObjectTransform,
  PrimaryToSecondaryMapper,
  SecondaryToPrimaryMapper,
} from '../sources/index.js';
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
} from '../workflow/index.js';
