/**
 * The PatchEngine over the patch algorithms in `patch/`: JSON patch, merge patch, strategic merge
 * (built-ins, with their type info), server-side apply and managedFields tracking.
 */
import type { ApplyArgs, PatchEngine, TrackArgs } from './engine.js';
import { ApiError } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';
import { isJsonObject } from './json.js';
import { PatchError } from './patch/errors.js';
import { applyConflictError, serverSideApply, trackUpdate } from './patch/managed-fields.js';
import { applyJsonPatch } from './patch/json-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { typeInfoOrGeneric, typeInfoFor, type TypeInfo } from './patch/schema.js';
import { applyStrategicMergePatch } from './patch/strategic-merge.js';
import type { ResourceType } from './registry.js';

function typeInfo(type: ResourceType): TypeInfo {
  return typeInfoOrGeneric(type.custom ? undefined : typeInfoFor(type.group, type.kind));
}

/** PatchError (from the algorithms) as the Status error the server answers. */
function asApiError(err: unknown, type: ResourceType): unknown {
  if (!(err instanceof PatchError)) return err;
  return new ApiError(err.code, err.statusReason, err.message, {
    group: type.group,
    kind: err.code === 422 ? type.kind : type.plural,
    causes: err.causes?.map((c) => ({ ...c })),
  });
}

function asObject(v: JsonValue, what: string): JsonObject {
  if (!isJsonObject(v)) throw new ApiError(422, 'Invalid', `the ${what} result is not an object`, {});
  return v;
}

export const patchEngine: PatchEngine = {
  patch(kind, live, patch, type) {
    try {
      switch (kind) {
        case 'json':
          return asObject(applyJsonPatch(live, patch), 'json patch');
        case 'merge':
          return asObject(applyMergePatch(live, patch), 'merge patch');
        case 'strategic':
          if (!isJsonObject(patch)) throw new PatchError(400, 'a strategic merge patch must be a JSON object');
          return applyStrategicMergePatch(live, patch, typeInfo(type));
      }
    } catch (err) {
      throw asApiError(err, type);
    }
  },

  apply(args: ApplyArgs, type: ResourceType): JsonObject {
    try {
      const result = serverSideApply({ ...args, type: typeInfo(type) });
      if (result.ok) return result.object;
      throw applyConflictError(result.conflicts);
    } catch (err) {
      throw asApiError(err, type);
    }
  },

  trackUpdate(args: TrackArgs, type: ResourceType): JsonValue[] {
    try {
      return trackUpdate(args, typeInfo(type)) as unknown as JsonValue[];
    } catch (err) {
      throw asApiError(err, type);
    }
  },
};

