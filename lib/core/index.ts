// The core layer's entry: resource ids, events, outcomes, errors, backoff and validation, which every other layer uses.
export type { ResourceID } from './resource.js';
export { resourceKey, resourceIdOf } from './resource.js';
export { generationGrew, isMarkedForDeletion, isRecord } from './meta.js';
export { resourceEvent, type EventAction, type ResourceEvent, type ResourceEventOptions } from './events.js';
export type {
  EventCause,
  MaxIntervalCause,
  MaybePromise,
  RateLimitCause,
  ReconcileCause,
  ReconcileOutcome,
  ReconcileResult,
  RescheduleCause,
  RetryCause,
  RetryInfo,
} from './outcome.js';
export { underlyingCause } from './outcome.js';
export { backoffDelay, WATCH_BACKOFF, type BackoffPolicy } from './backoff.js';
export { ConfigurationError, LeaseLostError, NoRetryError, RunTimeoutError, RxkubeError, describeError, describeValue } from './errors.js';
export {
  requireFunction,
  requireKnownKeys,
  requireMethods,
  requireNamespaceName,
  requirePositiveDuration,
  requirePositiveInteger,
} from './validate.js';
export {
  findStatusCondition,
  isStatusConditionTrue,
  setStatusCondition,
  statusCondition,
  type ConditionStatus,
  type StatusCondition,
  type StatusConditionInput,
} from './conditions.js';
export { jsonDepth, MAX_JSON_DEPTH, requestPath } from './http-input.js';
export { isKubernetesObject, objectReference, redactJson, redactText, secretValues, secretValuesWithin } from './redact.js';
