// The controller layer's entry: the Reconciler and its Context, controls, the Operator and the pieces a hand-written pipeline composes.
export { DeleteControl, ErrorStatusUpdateControl, UpdateControl, type PrimaryWrite } from './controls.js';
export type {
  Context,
  ControllerConfig,
  EventSourceInfo,
  EventSourceLike,
  InformerTuning,
  Reconciler,
  RegisteredController,
} from './types.js';
// The one secondary spec, defined in sources/: what `ControllerConfig.secondaries` takes and dependents declare.
export type { SecondarySpec, SecondaryWrite } from '../sources/index.js';
export type { SourceErrorOptions } from './contained-source.js';
export { controllerEvents, type ControllerEventsOptions } from './pipeline.js';
export { Primaries, primaries, type PrimariesOptions } from './primaries.js';
export { reconcilerRun, type ReconcilerRunOptions, type SecondaryLookup } from './run.js';
export { type TrackedClient } from './tracked-client.js';
// What the process host (operator/) and the deployment artifacts (deploy/) build on.
export { Controller, DEFAULT_STOP_TIMEOUT_MS } from './controller.js';
export { resolveControllerConfig, type ResolvedControllerConfig } from './config.js';
export { controllerRules, EVENTS, LEASES, MEMBER_LEASES, mergeRules, rbacScope, type PolicyRule } from './rbac.js';
