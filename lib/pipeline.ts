/**
 * `rxkube/pipeline`: the parts of a controller's pipeline, for a pipeline of your own — the same
 * parts the Operator assembles (event side: informers, readYourWrites, toResourceEvents,
 * generationChanged, or all of them as controllerEvents; scheduling: reconcileEach; run side:
 * reconcilerRun; workflows as operators). Its old name, `rxkube/operators`, is a deprecated alias.
 * It exports its own names only: the types its signatures share with the Operator (`ResourceEvent`,
 * `KubeClient`, `Reconciler`, the workflow and dependent types, …) are imported from `rxkube`.
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
  type InformerOptions,
  type InformerError,
  type Namespaces,
  type CachedSource,
  type CacheReader,
  type WriteHandle,
  type WriteIntent,
  type InformerStore,
  type ReflectorFailure,
  type ScopeStatus,
  type WhenSyncedOptions,
} from './cache/index.js';
export {
  toResourceEvents,
  toPrimaryTriggers,
  secondarySource,
  type SecondarySource,
  type SecondarySourceOptions,
  type MapperError,
} from './sources/index.js';
export { resourceEvent, type ResourceEventOptions } from './core/index.js';
export type { SchedulingLoad } from './processing/index.js';
export { reconcileWorkflow, cleanupWorkflow } from './workflow/index.js';
// Types that appear in the signatures above, exported so that users can name them.
export type { InformerStoreOptions, ReconnectFailure, ScopeState } from './cache/index.js';
