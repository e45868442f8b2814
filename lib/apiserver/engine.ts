/**
 * What the write path needs from the patch algorithms and field management. `patching.ts` is
 * the implementation over `patch/`; the interface keeps the write path testable on its own.
 */
import type { JsonObject, JsonValue } from './json.js';
import type { ApplyArgs as ManagedApplyArgs, TrackUpdateArgs } from './patch/managed-fields.js';
import type { ResourceType } from './registry.js';

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

/** The arguments of the field-management functions, less the type information the engine looks up itself. */
export type TrackArgs = TrackUpdateArgs;
export type ApplyArgs = Omit<ManagedApplyArgs, 'type'>;

export interface PatchEngine {
  /** The patched object; throws ApiError for a bad patch. */
  patch(kind: Exclude<PatchKind, 'apply'>, live: JsonObject, patch: JsonValue, type: ResourceType): JsonObject;
  /** Server-side apply: the merged object with its managedFields; throws ApiError 409 on conflicts. */
  apply(args: ApplyArgs, type: ResourceType): JsonObject;
  /** The managedFields after an update (or create, with `old` undefined) by `manager`. */
  trackUpdate(args: TrackArgs, type: ResourceType): JsonValue[];
}
