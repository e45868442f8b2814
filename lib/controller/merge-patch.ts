// The JSON merge patch (RFC 7386) between two versions of an object.
import { isRecord, jsonEqual } from '../core/index.js';

/**
 * The JSON merge patch (RFC 7386) that turns `original` into `modified`: changed and added
 * members as they are, removed members as null, arrays whole. Values that are equal produce no
 * member, so an unchanged object gives `{}`.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isRecord(original) || !isRecord(modified)) return modified === undefined ? null : modified;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(original)) {
    if (!(key in modified) || modified[key] === undefined) patch[key] = null;
  }
  for (const [key, value] of Object.entries(modified)) {
    if (value === undefined) continue;
    const before = original[key];
    if (isRecord(before) && isRecord(value)) {
      const nested = createMergePatch(before, value);
      if (isRecord(nested) && Object.keys(nested).length > 0) patch[key] = nested;
    } else if (!jsonEqual(before, value)) {
      patch[key] = value;
    }
  }
  return patch;
}
