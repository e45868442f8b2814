/**
 * Defaulting helpers the kinds share: set a field only when the client left it out.
 */
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';

export function objectAt(obj: JsonObject, key: string): JsonObject {
  const v = obj[key];
  if (isJsonObject(v)) return v;
  const fresh: JsonObject = {};
  obj[key] = fresh;
  return fresh;
}

export function setDefault(obj: JsonObject, key: string, value: JsonValue): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}
