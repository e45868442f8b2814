/**
 * JSON values compared and addressed as JSON sees them: what the API server stores is the
 * serialized object, so a key whose value is `undefined` is absent and key order does not matter.
 */
import { isRecord } from './meta.js';

/** Deep equality of JSON values: key order ignored, a key whose value is `undefined` counts as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    const other = Object.keys(b).filter((k) => b[k] !== undefined);
    return keys.length === other.length && keys.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** One key or index as a JSON Pointer segment (RFC 6901): `~` and `/` inside it are escaped. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}
