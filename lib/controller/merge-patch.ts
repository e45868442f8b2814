/**
 * The JSON merge patch (RFC 7386) that turns `original` into `modified`: changed and added
 * members as they are, removed members as null, arrays whole. Values that are equal produce no
 * member, so an unchanged object gives `{}`.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isPlainObject(original) || !isPlainObject(modified)) return modified === undefined ? null : modified;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(original)) {
    if (!(key in modified) || modified[key] === undefined) patch[key] = null;
  }
  for (const [key, value] of Object.entries(modified)) {
    if (value === undefined) continue;
    const before = original[key];
    if (isPlainObject(before) && isPlainObject(value)) {
      const nested = createMergePatch(before, value);
      if (isPlainObject(nested) && Object.keys(nested).length > 0) patch[key] = nested;
    } else if (!jsonEqual(before, value)) {
      patch[key] = value;
    }
  }
  return patch;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}
