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
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  type BoundedStoreOptions,
  type IndexedStore,
  type Indexer,
  type InformerStoreOptions,
  type StoreReader,
} from './store.js';
export { compactManagedFields, stripManagedFields, type ObjectTransform } from './transform.js';
export { reconnectWithBackoff, SHORT_CONNECTION_MS, type ReconnectFailure, type ReconnectOptions } from './reconnect.js';
export {
  isDroppedConnection,
  reflector,
  WatchDroppedError,
  WatchSilentError,
  type ReflectorFailure,
  type ReflectorMessage,
  type ReflectorOptions,
} from './reflector.js';
export {
  kubeListWatch,
  type KubeListWatchOptions,
  type ListAnswer,
  type ListRequest,
  type ListWatchClient,
  type ListWatchScope,
  type WatchEventType,
  type WatchRequest,
} from './list-watch.js';
export { compareResourceVersions, resourceVersionOf } from './resource-version.js';
export {
  ReadYourWritesCache,
  readYourWrites,
  type CachedSource,
  type CacheReader,
  type WriteHandle,
} from './read-your-writes.js';
export { foreignChangeIn, newerOf, type WriteIntent } from './own-writes.js';
export {
  isOwnerReferenceMapper,
  mapBoth,
  Mappers,
  PRIMARY_NAME_ANNOTATION,
  PRIMARY_NAMESPACE_ANNOTATION,
  primaryAnnotations,
  primaryToSecondaryIndexer,
  type OwnerReferenceMapperOptions,
  type PrimaryKind,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
} from './mappers.js';
export { toPrimaryTriggers, toResourceEvents, triggersOf } from './resource-events.js';
export type { SecondarySpec } from './secondary-spec.js';
export { SecondarySource, secondarySource, type MapperError, type SecondarySourceOptions } from './secondary.js';
export {
  PerResourcePollingSource,
  perResourcePolling,
  PollingSource,
  pollingSource,
  trigger,
  type PerResourcePollingOptions,
  type PollingCommon,
  type PollingSourceOptions,
  type SourceError,
} from './polling.js';
export {
  CachingInboundSource,
  cachingInboundSource,
  InboundSource,
  inboundSource,
} from './inbound.js';
export { TimerSource, timerSource } from './timer.js';
