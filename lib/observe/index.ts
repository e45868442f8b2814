export { createLogger, errorLogLevel, loggerFor, resourceBindings, type CreateLoggerOptions, type Logger } from './logging.js';
export { controllerLabels, createMetrics, type CacheLabels, type ControllerLabels, type RxkubeMetrics } from './metrics.js';
export { startHealthServer, type HealthCheck, type HealthCheckResult, type HealthServer } from './health.js';
export { EventBroadcaster, type EventOptions, type EventType, type EventRecorder, type ResourceEvents } from './events.js';
