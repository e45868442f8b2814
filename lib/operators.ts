/**
 * `rxkube/operators`: the pipeable operators and sources for a pipeline of your own — the same
 * parts the Operator assembles (event side: informers, readYourWrites, toResourceEvents,
 * generationChanged, or all of them as controllerEvents; scheduling: reconcileEach; run side:
 * reconcilerRun; workflows as operators).
 *
 * @module rxkube/operators
 */
import './node-check.js';
export {
  controllerEvents,
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
  type ReconcileOptions,
  type RunContext,
  type RunFn,
  type RunOutput,
  type RunResult,
} from './processing/index.js';
export {
  informer,
  informer$,
  toResourceEvents,
  toPrimaryTriggers,
  readYourWrites,
  type ReadYourWritesCache,
  secondarySource,
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
  type SecondarySource,
  type SecondarySourceOptions,
  type MapperError,
  compactManagedFields,
  stripManagedFields,
  type ObjectTransform,
} from './sources/index.js';
export { resourceEvent, type ResourceEventOptions } from './core/index.js';
export { reconcileWorkflow, cleanupWorkflow, type WorkflowEvent, type ExecutionOptions, type EventSourceRegistry } from './workflow/index.js';
