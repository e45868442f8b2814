/**
 * What the write path needs from the patch algorithms, declared where the write path lives:
 * the verbs and the write path take a PatchEngine and patch/ implements it, so the types below it never import the
 * algorithms above them (and the write path stays testable on its own).
 */
import type { JsonObject, JsonValue } from '../base/json.js';
import type { ResourceType } from './registry.js';

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

/** An update (or a create, with `old` undefined) whose managedFields are to be tracked. */
export interface TrackArgs {
  old: JsonObject | undefined;
  updated: JsonObject;
  manager: string;
  apiVersion: string;
  now: string;
  subresource?: string;
}

/** A server-side apply of `applied` over `live` (undefined when the object does not exist yet). */
export interface ApplyArgs {
  live: JsonObject | undefined;
  applied: JsonObject;
  manager: string;
  force: boolean;
  apiVersion: string;
  now: string;
  subresource?: string;
}

export interface PatchEngine {
  /** The patched object; throws ApiError for a bad patch. */
  patch(kind: Exclude<PatchKind, 'apply'>, live: JsonObject, patch: JsonValue, type: ResourceType): JsonObject;
  /** Server-side apply: the merged object with its managedFields; throws ApiError 409 on conflicts. */
  apply(args: ApplyArgs, type: ResourceType): JsonObject;
  /** The managedFields after an update (or create, with `old` undefined) by `manager`. */
  trackUpdate(args: TrackArgs, type: ResourceType): JsonValue[];
}
