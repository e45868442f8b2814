// The observe layer's entry: logging, metrics, health, Kubernetes Events and tracing.
export { createLogger, errorLogLevel, loggerFor, resourceBindings, type CreateLoggerOptions, type Logger } from './logging.js';
export {
  controllerLabels,
  createMetrics,
  type CacheLabels,
  type ControllerLabels,
  type RxkubeMetrics,
  type StartupPhase,
} from './metrics.js';
export { startHealthServer, type HealthCheck, type HealthCheckResult, type HealthServer } from './health.js';
export { EventBroadcaster, type EventOptions, type EventType, type EventRecorder, type ResourceEvents } from './events.js';
export {
  inSpan,
  MAX_LINKS,
  Tracing,
  type OpenSpan,
  type SpanAttributes,
  type SpanFn,
  type SpanRef,
  type TraceIds,
  type TracerProviderLike,
  type TracingOptions,
} from './tracing.js';
