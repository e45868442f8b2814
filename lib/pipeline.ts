/**
 * `rxkube/pipeline`: the parts of a controller's pipeline, for a pipeline of your own — the same
 * parts the Operator assembles (event side: informers, readYourWrites, toResourceEvents,
 * generationChanged, or all of them as controllerEvents; scheduling: reconcileEach; run side:
 * reconcilerRun; workflows as operators). Its old name, `rxkube/operators`, is a deprecated alias.
 *
 * @module rxkube/pipeline
 */
import './node-check.js';
export {
  controllerEvents,
  Primaries,
  primaries,
  type PrimariesOptions,
  reconcilerRun,
  type ControllerEventsOptions,
  type ReconcilerRunOptions,
  type SecondaryLookup,
} from './controller/index.js';
export {
  reconcileEach,
  serializeByResource,
  generationChanged,
  type SerializeOptions,
  type GenerationFilterOptions,
  type PrimaryPresence,
  type ReconcileOptions,
  type RunContext,
  type RunFn,
  type RunOutput,
  type RunResult,
} from './processing/index.js';
export {
  informer,
  informer$,
  readYourWrites,
  type ReadYourWritesCache,
  type Informer,
  InformerPool,
  type InformerPoolOptions,
  type InformerLike,
  type IndexedStore,
  type PooledInformer,
  type SharedInformerOptions,
  type InformerEvent,
  type InformerEventType,
  type InformerOptions,
  type InformerError,
  type Namespaces,
  type StoreReader,
  type Indexer,
  type CachedSource,
  type CacheReader,
  type WriteHandle,
  type WriteIntent,
  type BoundedStoreOptions,
  type InformerStore,
  type ListWatchClient,
  type ReflectorFailure,
  type ScopeStatus,
  type WhenSyncedOptions,
  compactManagedFields,
  stripManagedFields,
  type ObjectTransform,
} from './cache/index.js';
export {
  toResourceEvents,
  toPrimaryTriggers,
  secondarySource,
  type SecondarySource,
  type SecondarySourceOptions,
  type MapperError,
  type PrimaryKind,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
} from './sources/index.js';
export {
  resourceEvent,
  type ResourceEventOptions,
  type EventAction,
  type ReconcileCause,
  type ReconcileOutcome,
  type ResourceEvent,
  type ResourceID,
  type RetryInfo,
} from './core/index.js';
export type { BackoffPolicy } from './core/index.js';
export type { FieldSelector, KubeClient, LabelSelector, ResolvedDescriptor, ResourceDescriptor } from './kube/index.js';
export type { ControllerConfig, Reconciler } from './controller/index.js';
export type { DependentContext } from './dependent/index.js';
export type { RateLimiter, Retry, SchedulingLoad } from './processing/index.js';
export type { EventRecorder, SpanAttributes, SpanFn } from './observe/index.js';
export {
  reconcileWorkflow,
  cleanupWorkflow,
  type WorkflowEvent,
  type ExecutionOptions,
  type EventSourceRegistry,
  type DependentResult,
  type Workflow,
  type WorkflowCleanupResult,
  type WorkflowReconcileResult,
} from './workflow/index.js';

// Types that appear in the signatures above, exported so that users can name them.
export type {
  Context,
  DeleteControl,
  ErrorStatusUpdateControl,
  EventSourceLike,
  InformerTuning,
  PrimaryWrite,
  SecondaryConfig,
  SecondarySpec,
  SecondaryWrite,
  SourceErrorOptions,
  TrackedClient,
  UpdateControl,
} from './controller/index.js';
export type {
  ConditionStatus,
  EventCause,
  MaxIntervalCause,
  MaybePromise,
  RateLimitCause,
  ReconcileResult,
  RescheduleCause,
  RetryCause,
  StatusCondition,
} from './core/index.js';
export type { DependentReconcileResult, DependentResource } from './dependent/index.js';
export type {
  ApplyOptions,
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
  ResourceClient,
  WriteOptions,
} from './kube/index.js';
export type { EventOptions } from './observe/index.js';
export type { RateDecision } from './processing/index.js';
export type { ShardingOptions } from './sharding/index.js';
export type {
  InformerStoreOptions,
  ListAnswer,
  ListRequest,
  ListWatchScope,
  ReconnectFailure,
  ScopeState,
  WatchEventType,
  WatchRequest,
} from './cache/index.js';
export type {
  BoundCondition,
  Condition,
  ConditionKind,
  ConditionResult,
  ConditionValue,
  DependentOptions,
  DependentOutcome,
  DependentRef,
  DetailedConditionResult,
  ManagedWorkflow,
  ManagedWorkflowInvocation,
  WorkflowBuilder,
  WorkflowNode,
  WorkflowOptions,
  WorkflowResultBase,
  WorkflowRunKind,
} from './workflow/index.js';
