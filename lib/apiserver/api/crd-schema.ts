/**
 * What the real server does with a CRD version's structural schema (openAPIV3Schema) on every
 * write of a custom resource: apply `default`s, drop `null`s of non-nullable fields, prune fields
 * the schema does not declare (unless x-kubernetes-preserve-unknown-fields), and validate types,
 * required fields, enums, bounds, lengths, patterns and item counts.
 *
 * Not covered: anyOf/oneOf/allOf/not, x-kubernetes-validations (CEL), formats, metadata schemas,
 * defaults on read of old objects, list-type uniqueness.
 */
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { StatusCause } from './errors.js';
import { fieldInvalid } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';
import { deepClone, isJsonObject } from './json.js';

export interface SchemaOutcome {
  /** Paths of fields the schema does not declare (already pruned from the object). */
  unknownFields: string[];
  causes: StatusCause[];
}

const compiled = new LRUCache<string, RE2JS | string>({ max: 500 });

/**
 * A schema `pattern` compiled as Go's regexp (RE2: linear-time matching, no lookaround or
 * backreferences), or Go's error message when Go would not compile it.
 */
export function compilePattern(pattern: string): RE2JS | string {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      re = (err as Error).message;
    }
    compiled.set(pattern, re);
  }
  return re;
}

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];

/** The real server's refusal of a CRD whose schema has a `pattern` Go cannot compile. */
export function invalidPatterns(schema: JsonValue | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const stack: Array<[JsonValue | undefined, string]> = [[schema, field]];
  while (stack.length > 0) {
    const [s, path] = stack.pop() as [JsonValue | undefined, string];
    if (!isJsonObject(s)) continue;
    if (typeof s.pattern === 'string') {
      const re = compilePattern(s.pattern);
      if (typeof re === 'string') causes.push(fieldInvalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${re}`));
    }
    for (const key of SUBSCHEMA_MAPS) {
      const children = s[key];
      if (isJsonObject(children)) for (const [name, child] of Object.entries(children)) stack.push([child, `${path}.${key}[${name}]`]);
    }
    for (const key of SUBSCHEMAS) stack.push([s[key], `${path}.${key}`]);
    for (const key of SUBSCHEMA_LISTS) {
      const list = s[key];
      if (Array.isArray(list)) list.forEach((child, i) => stack.push([child, `${path}.${key}[${i}]`]));
    }
  }
  return causes.reverse();
}

const ROOT_KEPT = new Set(['apiVersion', 'kind', 'metadata']);

function props(s: JsonObject): JsonObject | undefined {
  return isJsonObject(s.properties) ? s.properties : undefined;
}

function additional(s: JsonObject): JsonObject | undefined {
  return isJsonObject(s.additionalProperties) ? s.additionalProperties : undefined;
}

function preserves(s: JsonObject): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Defaults, null-dropping and pruning, in place. */
function normalize(value: JsonValue, s: JsonObject, path: string, unknown: string[], root: boolean): void {
  if (Array.isArray(value)) {
    const items = isJsonObject(s.items) ? s.items : undefined;
    if (items) value.forEach((v, i) => normalize(v, items, `${path}[${i}]`, unknown, false));
    return;
  }
  if (!isJsonObject(value)) return;
  const declared = props(s);
  const extra = additional(s);
  if (declared) {
    for (const [key, sub] of Object.entries(declared)) {
      if (!isJsonObject(sub)) continue;
      if (value[key] === undefined && sub.default !== undefined) value[key] = deepClone(sub.default);
    }
  }
  for (const key of Object.keys(value)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const sub = declared?.[key] ?? extra;
    const child = value[key];
    if (isJsonObject(sub)) {
      if (child === null && sub.nullable !== true) {
        delete value[key];
        continue;
      }
      normalize(child as JsonValue, sub, join(path, key), unknown, false);
    } else if (!preserves(s)) {
      unknown.push(join(path, key));
      delete value[key];
    }
  }
}

function typeName(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(v: JsonValue, s: JsonObject): boolean {
  if (s['x-kubernetes-int-or-string'] === true) return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
  switch (s.type) {
    case undefined:
      return true;
    case 'object':
      return isJsonObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

const shown = (v: JsonValue): string => JSON.stringify(v);

function validate(v: JsonValue, s: JsonObject, path: string, causes: StatusCause[], root: boolean): void {
  const invalid = (detail: string, reason = 'FieldValueInvalid') => causes.push({ reason, message: `Invalid value: ${shown(v)}: ${detail}`, field: path });
  if (v === null) {
    if (s.nullable !== true) invalid(`${path} in body must be of type ${String(s.type ?? 'object')}: "null"`, 'FieldValueTypeInvalid');
    return;
  }
  if (!matchesType(v, s)) {
    invalid(`${path} in body must be of type ${s['x-kubernetes-int-or-string'] === true ? 'integer or string' : String(s.type)}: "${typeName(v)}"`, 'FieldValueTypeInvalid');
    return;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${shown(v)}: supported values: ${s.enum.map(shown).join(', ')}`, field: path });
  }
  if (typeof v === 'number') {
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)) {
      invalid(`${path} in body should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${s.minimum}`);
    }
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)) {
      invalid(`${path} in body should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${s.maximum}`);
    }
  }
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' && [...v].length > s.maxLength) {
      causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${s.maxLength} bytes`, field: path });
    }
    if (typeof s.minLength === 'number' && [...v].length < s.minLength) invalid(`${path} in body should be at least ${s.minLength} chars long`);
    if (typeof s.pattern === 'string') {
      const re = compilePattern(s.pattern);
      if (typeof re !== 'string' && !re.matcher(v).find()) invalid(`${path} in body should match '${s.pattern}'`);
    }
  }
  if (Array.isArray(v)) {
    if (typeof s.maxItems === 'number' && v.length > s.maxItems) {
      causes.push({ reason: 'FieldValueTooMany', message: `Too many: ${v.length}: must have at most ${s.maxItems} items`, field: path });
    }
    if (typeof s.minItems === 'number' && v.length < s.minItems) invalid(`${path} in body should have at least ${s.minItems} items`);
    const items = isJsonObject(s.items) ? s.items : undefined;
    if (items) v.forEach((x, i) => validate(x, items, `${path}[${i}]`, causes, false));
    return;
  }
  if (!isJsonObject(v)) return;
  const declared = props(s);
  const extra = additional(s);
  if (Array.isArray(s.required)) {
    for (const r of s.required) if (typeof r === 'string' && v[r] === undefined) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, r) });
  }
  const count = Object.keys(v).length;
  if (typeof s.maxProperties === 'number' && count > s.maxProperties) invalid(`${path} in body should have at most ${s.maxProperties} properties`);
  if (typeof s.minProperties === 'number' && count < s.minProperties) invalid(`${path} in body should have at least ${s.minProperties} properties`);
  for (const [key, child] of Object.entries(v)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const sub = declared?.[key] ?? extra;
    if (isJsonObject(sub)) validate(child, sub, join(path, key), causes, false);
  }
}

/** Applies a CRD version's schema to a custom resource (in place). No schema: nothing to do. */
export function applyCrdSchema(obj: JsonObject, schema: JsonValue | undefined): SchemaOutcome {
  if (!isJsonObject(schema)) return { unknownFields: [], causes: [] };
  const unknownFields: string[] = [];
  normalize(obj, schema, '', unknownFields, true);
  const causes: StatusCause[] = [];
  validate(obj, schema, '', causes, true);
  return { unknownFields, causes };
}
