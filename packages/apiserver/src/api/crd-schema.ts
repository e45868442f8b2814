/**
 * What the real server does with a CRD version's structural schema (openAPIV3Schema) on every
 * write of a custom resource: apply `default`s, drop `null`s of non-nullable fields, prune fields
 * the schema does not declare (unless x-kubernetes-preserve-unknown-fields), and validate types,
 * required fields, enums, bounds, lengths, patterns, formats (formats.ts), item counts,
 * x-kubernetes-list-type uniqueness and x-kubernetes-validations (CEL rules, cel.ts), with
 * ratcheting on update: a value the update leaves unchanged is not validated again.
 *
 * Not covered: anyOf/oneOf/allOf/not, metadata schemas.
 */
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, deepEqual, isJsonObject, ownValue, setOwn } from '../base/json.js';
import { CelCostExceeded, compileRule, toCel, withCelBudget } from '../grammar/cel.js';
import { hasFormat } from '../grammar/formats.js';

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
      if (ownValue(value, key) === undefined && sub.default !== undefined) setOwn(value, key, deepClone(sub.default));
    }
  }
  for (const key of Object.keys(value)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const sub = ownValue(declared, key) ?? extra;
    const child = value[key];
    if (isJsonObject(sub)) {
      if (child === null && sub.nullable !== true) {
        delete value[key];
        continue;
      }
      normalize(child, sub, join(path, key), unknown, false);
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

/** What a node's value is correlated with in the stored object, for transition rules and ratcheting. */
type Old = JsonValue | undefined;

function oldChild(old: Old, key: string): Old {
  return isJsonObject(old) ? ownValue(old, key) : undefined;
}

/** Keys of a map-list item, as Kubernetes prints them in Duplicate errors. */
function keysOf(item: JsonValue, keys: readonly string[]): string | undefined {
  if (!isJsonObject(item)) return undefined;
  const parts = keys
    .filter((k) => item[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${typeof item[k] === 'string' ? JSON.stringify(item[k]) : JSON.stringify(item[k])}`);
  return `map[string]interface {}{${parts.join(', ')}}`;
}

function listMapKeys(s: JsonObject): string[] {
  return Array.isArray(s['x-kubernetes-list-map-keys'])
    ? s['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
    : [];
}

/** The item of the old list a new map-list item is correlated with (same keys). */
function oldItem(old: Old, item: JsonValue, s: JsonObject): Old {
  if (!Array.isArray(old) || s['x-kubernetes-list-type'] !== 'map' || !isJsonObject(item)) return undefined;
  const keys = listMapKeys(s);
  return old.find((o) => isJsonObject(o) && keys.every((k) => deepEqual(o[k], item[k])));
}

function duplicates(v: JsonValue[], s: JsonObject, path: string, causes: StatusCause[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType !== 'set' && listType !== 'map') return;
  const seen = new Set<string>();
  v.forEach((item, i) => {
    const id = listType === 'set' ? JSON.stringify(item) : keysOf(item, listMapKeys(s));
    if (id === undefined) return;
    if (seen.has(id))
      causes.push({
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${listType === 'set' ? shown(item) : id}`,
        field: `${path}[${i}]`,
      });
    seen.add(id);
  });
}

const RULE_REASONS: Readonly<Record<string, string>> = {
  FieldValueForbidden: 'Forbidden',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
};

/** A relative JSON path of a rule's fieldPath (".a.b", ".a['b.c']", ".l[1]") appended to `path`. */
function withFieldPath(path: string, fieldPath: string): string {
  const rel = fieldPath.replace(/\['([^']*)'\]/g, '[$1]').replace(/^\./, '');
  return rel ? join(path, rel) : path;
}

function ruleCauses(v: JsonValue, old: Old, s: JsonObject, path: string, causes: StatusCause[]): void {
  const rules = s['x-kubernetes-validations'];
  if (!Array.isArray(rules)) return;
  const type = typeof s.type === 'string' ? s.type : 'object';
  let self: ReturnType<typeof toCel> | undefined;
  let oldSelf: ReturnType<typeof toCel> | undefined;
  for (const rule of rules) {
    if (!isJsonObject(rule) || typeof rule.rule !== 'string') continue;
    const compiled = compileRule(rule.rule, s);
    if (!compiled.ok) continue;
    const program = compiled.program;
    if (program.usesOldSelf && old === undefined) continue;
    self ??= toCel(v, s);
    if (program.usesOldSelf && old !== undefined) oldSelf ??= toCel(old, s);
    // A rule at the root reports on Go's nil field path, which prints as "<nil>".
    const field = (typeof rule.fieldPath === 'string' ? withFieldPath(path, rule.fieldPath) : path) || '<nil>';
    let result: ReturnType<typeof program.run>;
    try {
      result = program.run(self, oldSelf);
    } catch (err) {
      if (!(err instanceof CelCostExceeded)) throw err;
      if (err.scope === 'call') {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(type)}: call cost exceeds limit for rule: ${rule.rule}`,
          field,
        });
        continue;
      }
      const spent = 'validation failed due to running out of cost budget, no further validation rules will be run';
      if (!causes.some((c) => c.message?.endsWith(spent)))
        causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(type)}: ${spent}`, field });
      return;
    }
    if (result instanceof Error) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(type)}: ${result.message} evaluating rule: ${rule.rule}`,
        field,
      });
      continue;
    }
    if (result === true) continue;
    let detail = typeof rule.message === 'string' && rule.message ? rule.message : `failed rule: ${rule.rule}`;
    if (typeof rule.messageExpression === 'string' && rule.messageExpression) {
      const m = compileRule(rule.messageExpression, s);
      const text = m.ok ? m.program.run(self, oldSelf) : undefined;
      if (typeof text === 'string' && text.trim() !== '' && !text.includes('\n')) detail = text;
    }
    const reason = typeof rule.reason === 'string' && RULE_REASONS[rule.reason] ? rule.reason : 'FieldValueInvalid';
    const message =
      reason === 'FieldValueInvalid'
        ? `Invalid value: ${JSON.stringify(type)}: ${detail}`
        : reason === 'FieldValueDuplicate'
          ? `Duplicate value: ${JSON.stringify(type)}`
          : `${RULE_REASONS[reason]}: ${detail}`;
    causes.push({ reason, message, field });
  }
}

/** The object CEL sees at the root: metadata is reduced to name and generateName, as in Kubernetes. */
function rootForCel(v: JsonObject): JsonObject {
  const meta = isJsonObject(v.metadata) ? v.metadata : {};
  const reduced: JsonObject = {};
  if (meta.name !== undefined) reduced.name = meta.name;
  if (meta.generateName !== undefined) reduced.generateName = meta.generateName;
  return { ...v, metadata: reduced };
}

function validate(v: JsonValue, old: Old, s: JsonObject, path: string, causes: StatusCause[], root: boolean): void {
  // Ratcheting: a value an update leaves unchanged stays valid (CRDValidationRatcheting).
  if (old !== undefined && !root && deepEqual(v, old)) return;
  const invalid = (detail: string, reason = 'FieldValueInvalid') =>
    causes.push({ reason, message: `Invalid value: ${shown(v)}: ${detail}`, field: path });
  if (v === null) {
    if (s.nullable !== true) invalid(`${path} in body must be of type ${String(s.type ?? 'object')}: "null"`, 'FieldValueTypeInvalid');
    return;
  }
  if (!matchesType(v, s)) {
    invalid(
      `${path} in body must be of type ${s['x-kubernetes-int-or-string'] === true ? 'integer or string' : String(s.type)}: "${typeName(v)}"`,
      'FieldValueTypeInvalid',
    );
    return;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${shown(v)}: supported values: ${s.enum.map(shown).join(', ')}`,
      field: path,
    });
  }
  if (typeof v === 'number') {
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)) {
      invalid(`${path} in body should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${s.minimum}`);
    }
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)) {
      invalid(`${path} in body should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${s.maximum}`);
    }
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf))
      invalid(`${path} in body should be a multiple of ${s.multipleOf}`);
  }
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' && [...v].length > s.maxLength) {
      causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${s.maxLength} bytes`, field: path });
    }
    if (typeof s.minLength === 'number' && [...v].length < s.minLength)
      invalid(`${path} in body should be at least ${s.minLength} chars long`);
    if (typeof s.pattern === 'string') {
      const re = compilePattern(s.pattern);
      if (typeof re !== 'string' && !re.matcher(v).find()) invalid(`${path} in body should match '${s.pattern}'`);
    }
    if (typeof s.format === 'string' && s['x-kubernetes-int-or-string'] !== true && !hasFormat(v, s.format))
      invalid(`${path} in body must be of type ${s.format}: ${shown(v)}`);
  }
  ruleCauses(root && isJsonObject(v) ? rootForCel(v) : v, root && isJsonObject(old) ? rootForCel(old) : old, s, path, causes);
  if (Array.isArray(v)) {
    if (typeof s.maxItems === 'number' && v.length > s.maxItems) {
      causes.push({ reason: 'FieldValueTooMany', message: `Too many: ${v.length}: must have at most ${s.maxItems} items`, field: path });
    }
    if (typeof s.minItems === 'number' && v.length < s.minItems) invalid(`${path} in body should have at least ${s.minItems} items`);
    if (s.uniqueItems === true && new Set(v.map((x) => JSON.stringify(x))).size !== v.length)
      invalid(`${path} in body shouldn't contain duplicates`);
    duplicates(v, s, path, causes);
    const items = isJsonObject(s.items) ? s.items : undefined;
    if (items) v.forEach((x, i) => validate(x, oldItem(old, x, s), items, `${path}[${i}]`, causes, false));
    return;
  }
  if (!isJsonObject(v)) return;
  const declared = props(s);
  const extra = additional(s);
  if (Array.isArray(s.required)) {
    for (const r of s.required)
      if (typeof r === 'string' && ownValue(v, r) === undefined)
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, r) });
  }
  const count = Object.keys(v).length;
  if (typeof s.maxProperties === 'number' && count > s.maxProperties)
    invalid(`${path} in body should have at most ${s.maxProperties} properties`);
  if (typeof s.minProperties === 'number' && count < s.minProperties)
    invalid(`${path} in body should have at least ${s.minProperties} properties`);
  for (const [key, child] of Object.entries(v)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const sub = ownValue(declared, key) ?? extra;
    if (isJsonObject(sub)) validate(child, oldChild(old, key), sub, join(path, key), causes, false);
  }
}

/**
 * Applies a CRD version's schema to a custom resource (in place): defaults, pruning, then
 * validation, with `old` (the stored object, on update) for transition rules and ratcheting.
 * No schema: nothing to do.
 */
export function applyCrdSchema(obj: JsonObject, schema: JsonValue | undefined, old?: JsonObject): SchemaOutcome {
  if (!isJsonObject(schema)) return { unknownFields: [], causes: [] };
  const unknownFields: string[] = [];
  normalize(obj, schema, '', unknownFields, true);
  const causes: StatusCause[] = [];
  withCelBudget(() => validate(obj, old, schema, '', causes, true));
  return { unknownFields, causes };
}

/**
 * A stored custom resource as version `schema` presents it: the real server prunes to the
 * version's schema when it converts (conversion None: only apiVersion changes) and applies the
 * version's defaults when it reads. Returns the object itself when nothing changes.
 */
export function asVersion(obj: JsonObject, apiVersion: string, schema: JsonValue | undefined): JsonObject {
  if (!isJsonObject(schema)) return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  const copy = deepClone(obj);
  copy.apiVersion = apiVersion;
  normalize(copy, schema, '', [], true);
  return deepEqual(copy, obj) ? obj : copy;
}
