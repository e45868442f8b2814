/** The event sources' door: secondary sources and their mappers, polling, inbound and timer sources. */
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
