/**
 * The data keys of ConfigMaps and Secrets, and their `immutable` flag.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldForbidden, fieldInvalid } from '../../base/errors.js';
import type { JsonObject } from '../../base/json.js';
import { deepEqual, isJsonObject } from '../../base/json.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

export function validateConfigKeys(obj: JsonObject, fields: string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const f of fields) {
    const data = obj[f];
    if (data === undefined || data === null) continue;
    if (!isJsonObject(data)) {
      causes.push(fieldInvalid(f, data, 'must be a map of strings'));
      continue;
    }
    for (const [k, v] of Object.entries(data)) {
      if (!CONFIG_KEY.test(k) || k.length > 253) {
        causes.push(
          fieldInvalid(
            `${f}[${k}]`,
            k,
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
          ),
        );
      }
      if (typeof v !== 'string') causes.push(fieldInvalid(`${f}[${k}]`, v, 'must be a string'));
    }
  }
  return causes;
}

export function immutableData(obj: JsonObject, old: JsonObject | undefined, fields: string[]): StatusCause[] {
  if (!old || old.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (obj.immutable !== true) causes.push(fieldForbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (!deepEqual(obj[f] ?? {}, old[f] ?? {})) causes.push(fieldForbidden(f, 'field is immutable when `immutable` is set'));
  }
  return causes;
}
