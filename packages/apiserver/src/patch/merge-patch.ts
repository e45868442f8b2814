/**
 * RFC 7386 JSON Merge Patch (`application/merge-patch+json`): objects merge recursively, `null`
 * deletes a member, anything else (arrays included) replaces the target value whole. A patch
 * that is not an object replaces the whole target; whether such a result is an acceptable
 * Kubernetes object is for the caller to judge. Never mutates its inputs.
 */
import { deepClone, hasOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from '../base/json.js';

export function applyMergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  return mergeInto(deepClone(target), patch);
}

/** Merges `patch` into `target`, which it may mutate; `patch` is copied, never shared. */
function mergeInto(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return deepClone(patch);
  const result: JsonObject = isJsonObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, mergeInto(hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}
