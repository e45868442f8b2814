/**
 * Shared JSON types and helpers for the embedded API server. Pure: no I/O, no dependencies.
 *
 * Objects stored and served by the API server are plain JSON (what `JSON.parse` returns), so
 * these helpers only handle null, booleans, numbers, strings, arrays and plain objects.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A plain JSON object: not null, not an array. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Structural equality of JSON values. Object key order does not matter, array order does.
 * A key whose value is `undefined` counts as absent (so `{a: undefined}` equals `{}`).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null) return false;
  if (typeof a === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== 'object') return false;
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const bArray = b as unknown[];
    if (a.length !== bArray.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bArray[i])) return false;
    return true;
  }
  const aObj = a as Record<string, unknown>;
  const bObj = b as Record<string, unknown>;
  const aKeys = Object.keys(aObj).filter((k) => aObj[k] !== undefined);
  const bKeys = Object.keys(bObj).filter((k) => bObj[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  for (const k of aKeys) {
    if (!Object.prototype.hasOwnProperty.call(bObj, k)) return false;
    if (!deepEqual(aObj[k], bObj[k])) return false;
  }
  return true;
}

/** A deep copy sharing no arrays or objects with the input. */
export function deepClone<T extends JsonValue>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((item) => deepClone(item)) as T;
  const out: JsonObject = {};
  for (const [k, item] of Object.entries(v)) {
    if (item !== undefined) setOwn(out, k, deepClone(item));
  }
  return out as T;
}

/**
 * Sets `obj[key] = value` as an own property. Plain assignment would treat a key named
 * "__proto__" (legal in JSON, and what JSON.parse produces) as a prototype change.
 */
export function setOwn<T = JsonValue>(obj: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** `Object.hasOwn` for JSON objects (never consults the prototype). */
export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/**
 * `obj[key]` if `obj` has it as its own member, else undefined. Looking up a field name (a schema's
 * `properties`, an object's members) must never reach Object.prototype: `properties['__proto__']`
 * is Object.prototype itself, which reads as a schema that accepts anything.
 */
export function ownValue(obj: JsonObject | undefined, key: string): JsonValue | undefined {
  return obj !== undefined && hasOwn(obj, key) ? obj[key] : undefined;
}

/** A string field's value; anything else reads as ''. */
export function stringOf(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : '';
}

/** The strings of a list field; anything else reads as an empty list. */
export function stringsOf(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
