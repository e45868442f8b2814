// The processing layer's entry: reconcileEach and its options, retries, rate limits and the generation filter.
export { reconcileEach } from './reconcile-each.js';
export { serializeByResource, type SerializeOptions } from './serialize.js';
export { generationChanged, type GenerationFilterOptions } from './generation.js';
export { GenericRetry, type GenericRetrySettings, type Retry } from './retry.js';
export { LinearRateLimiter, type LinearRateState, type RateDecision, type RateLimiter } from './rate-limit.js';
export {
  resolveReconcileOptions,
  type ReconcileOptions,
  type PrimaryPresence,
  type ResolvedReconcileOptions,
  type RunContext,
  type RunFn,
  type RunOutput,
  type RunResult,
  type SchedulingLoad,
} from './options.js';
