/**
 * The patch algorithms behind the write path: the PatchEngine that api/patch-port.ts declares,
 * over this folder's JSON patch, merge patch, strategic merge (built-ins, with their type info),
 * server-side apply and managedFields tracking.
 */
import { ApiError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { PatchError } from './errors.js';
import { applyConflictError, serverSideApply, trackUpdate } from './apply.js';
import { applyJsonPatch } from './json-patch.js';
import { applyMergePatch } from './merge-patch.js';
import { typeInfoFromCrdSchema, typeInfoOrGeneric, typeInfoFor, type TypeInfo } from './schema.js';
import { applyStrategicMergePatch } from './strategic-merge.js';
import type { ResourceType } from '../api/registry.js';
import type { ApplyArgs, PatchEngine, TrackArgs } from '../api/patch-port.js';

export type { ApplyArgs, PatchEngine, PatchKind, TrackArgs } from '../api/patch-port.js';

/** The structure of a type in one version (custom resources: from that version's schema). */
function typeInfo(type: ResourceType, apiVersion?: string): TypeInfo {
  if (!type.custom) return typeInfoOrGeneric(typeInfoFor(type.group, type.kind));
  const name = apiVersion?.slice(apiVersion.indexOf('/') + 1) ?? type.storageVersion;
  const version = type.versions.find((v) => v.name === name) ?? type.versions.find((v) => v.name === type.storageVersion);
  return typeInfoFromCrdSchema(type.group, type.kind, version?.schema);
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
      const result = serverSideApply({ ...args, type: typeInfo(type, args.apiVersion) });
      if (result.ok) return result.object;
      throw applyConflictError(result.conflicts);
    } catch (err) {
      throw asApiError(err, type);
    }
  },

  trackUpdate(args: TrackArgs, type: ResourceType): JsonValue[] {
    try {
      return trackUpdate(args, typeInfo(type, args.apiVersion)) as unknown as JsonValue[];
    } catch (err) {
      throw asApiError(err, type);
    }
  },
};
