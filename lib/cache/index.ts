/** The cache's door: reflector, list-watch, informers and their pool, stores, transforms, read-your-writes and own writes. */
export {
  Informer,
  informer,
  informer$,
  type InformerError,
  type InformerEvent,
  type InformerEventType,
  type InformerLike,
  type InformerOptions,
  type Namespaces,
  type ScopeState,
  type ScopeStatus,
  type WhenSyncedOptions,
} from './informer.js';
export { InformerPool, type InformerPoolOptions, type PooledInformer, type SharedInformerOptions } from './informer-pool.js';
export {
  InformerStore,
  OWNER_UID_INDEX,
  type BoundedStoreOptions,
  type IndexedStore,
  type Indexer,
  type InformerStoreOptions,
  type StoreReader,
} from './store.js';
export { compactManagedFields, stripManagedFields, type ObjectTransform } from './transform.js';
export { type ReconnectFailure } from './reconnect.js';
export { type ReflectorFailure } from './reflector.js';
export {
  kubeListWatch,
  type ListAnswer,
  type ListRequest,
  type ListWatchClient,
  type ListWatchScope,
  type WatchEventType,
  type WatchRequest,
} from './list-watch.js';
export { ReadYourWritesCache, readYourWrites, type CachedSource, type CacheReader, type WriteHandle } from './read-your-writes.js';
export { newerOf, type WriteIntent } from './own-writes.js';
export { compareResourceVersions } from './resource-version.js';
