export {
  createLogger,
  errorLogLevel,
  loggerFor,
  resourceBindings,
  type CreateLoggerOptions,
  type Logger,
  type ResourceLogFields,
} from './logging.js';
export {
  controllerLabels,
  createMetrics,
  type CacheLabels,
  type ControllerLabels,
  type MetricsOptions,
  type RxkubeMetrics,
} from './metrics.js';
export {
  checkFromObservable,
  runChecks,
  startHealthServer,
  type HealthCheck,
  type HealthCheckResult,
  type HealthServer,
  type HealthServerOptions,
} from './health.js';
export { EventBroadcaster, type EventOptions, type EventBroadcasterOptions, type EventType, type EventRecorder, type ResourceEvents } from './events.js';
