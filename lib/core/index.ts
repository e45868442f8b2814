export type { ResourceID } from './resource.js';
export { isMarkedForDeletion, resourceKey, resourceIdOf } from './resource.js';
export type { EventAction, ResourceEvent } from './events.js';
export type {
  EventCause,
  MaxIntervalCause,
  RateLimitCause,
  ReconcileCause,
  ReconcileOutcome,
  ReconcileResult,
  RescheduleCause,
  RetryCause,
  RetryInfo,
} from './outcome.js';
export { underlyingCause } from './outcome.js';
export { ConfigurationError, NoRetryError, RxkubeError, describeError, describeValue } from './errors.js';
export {
  requireDuration,
  requireFunction,
  requireMethods,
  requirePositiveDuration,
  requirePositiveInteger,
} from './validate.js';
