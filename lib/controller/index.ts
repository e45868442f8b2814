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
  SecondaryConfig,
} from './types.js';
// The one secondary spec, defined in sources/: what `SecondaryConfig` names and dependents declare.
export type { SecondarySpec, SecondaryWrite } from '../sources/index.js';
export type { SourceErrorOptions } from './contained-source.js';
export { controllerEvents, type ControllerEventsOptions } from './pipeline.js';
export { Primaries, primaries, type PrimariesOptions } from './primaries.js';
export { reconcilerRun, type ReconcilerRunOptions, type SecondaryLookup } from './run.js';
export { Operator, type OperatorOptions } from './operator.js';
export { type TrackedClient } from './tracked-client.js';
export { kustomizeBase, manifestsToYaml, operatorManifests, type ManifestOptions, type OperatorManifests } from './manifests.js';
export type { PolicyRule } from './rbac.js';
