export {
  Informer,
  informer,
  informer$,
  type InformerError,
  type InformerEvent,
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
export {
  Mappers,
  PRIMARY_NAME_ANNOTATION,
  PRIMARY_NAMESPACE_ANNOTATION,
  primaryAnnotations,
  type OwnerReferenceMapperOptions,
  type PrimaryKind,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
} from './mappers.js';
export { toPrimaryTriggers, toResourceEvents } from './resource-events.js';
export type { SecondarySpec, SecondaryWrite } from './secondary-spec.js';
export { SecondarySource, secondarySource, type MapperError, type SecondarySourceOptions } from './secondary.js';
export {
  PerResourcePollingSource,
  perResourcePolling,
  PollingSource,
  pollingSource,
  type PerResourcePollingOptions,
  type PollingCommon,
  type PollingSourceOptions,
  type SourceError,
} from './polling.js';
export { CachingInboundSource, cachingInboundSource, InboundSource, inboundSource } from './inbound.js';
export { TimerSource, timerSource } from './timer.js';
