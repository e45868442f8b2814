/**
 * A TypeBox schema as the structural schema a CustomResourceDefinition needs. TypeBox writes JSON
 * Schema (draft 2020-12); a CRD takes the OpenAPI v3.0 subset Kubernetes calls structural: a type
 * on every node, no `$ref`, no `const`, unions only as enums, nullable or int-or-string. The few
 * TypeBox forms with a structural equivalent are rewritten; anything else is an error naming the
 * path, so that a schema never silently means less in the cluster than in the type.
 */
import type { TSchema } from 'typebox';
import { ConfigurationError } from '../core/index.js';

/** A schema node as JSON (the keys the API server reads, `x-kubernetes-*` spelled with dashes). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** Keywords passed through as they are; the rest are rewritten below or rejected. */
const KEPT = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'nullable',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
/** TypeBox options that say nothing a CRD can hold; dropped rather than sent as unknown fields. */
const DROPPED = new Set(['$id', '$schema', 'examples', 'readOnly', 'writeOnly', '$comment']);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
/** The key TypeBox gives `Type.Record(Type.String(), T)`: any property name. */
const ANY_KEY = '^.*$';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function fail(path: string, message: string): never {
  throw new ConfigurationError(path, message);
}

/** The JSON type of the values of an enum, when they share one. */
function enumType(values: readonly unknown[], path: string): string {
  const types = new Set(values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)));
  if (types.size === 2 && types.has('integer') && types.has('number')) return 'number';
  const [type] = types;
  if (types.size !== 1 || type === undefined || !TYPES.has(type)) {
    fail(path, `an enum's values must share one type (string, integer, number or boolean), got ${JSON.stringify(values)}`);
  }
  return type;
}

/** The options on a union node itself (description, default...), without the union. */
function withoutKey(schema: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = schema;
  return rest;
}

/** `A | B | ...` with a structural equivalent: literals (an enum), `T | null` (nullable), `integer | string` (int-or-string). */
function union(schema: Record<string, unknown>, key: 'anyOf' | 'oneOf', path: string): Record<string, unknown> {
  const members = schema[key];
  if (!Array.isArray(members) || !members.every(isObject)) fail(path, `${key} must be a list of schemas`);
  const options = withoutKey(schema, key);
  const nonNull = members.filter((m) => m['type'] !== 'null');
  if (nonNull.length < members.length) {
    const [only, ...more] = nonNull;
    if (only === undefined) fail(path, 'null alone is not a type a CRD schema can hold');
    const inner = more.length === 0 ? only : { ...options, [key]: nonNull };
    return { ...(more.length === 0 ? options : {}), ...structural(inner, path), nullable: true };
  }
  if (members.every((m) => 'const' in m)) {
    const values = members.map((m) => m['const']);
    return structural({ ...options, enum: values }, path);
  }
  if (members.every((m) => Array.isArray(m['enum']))) {
    return structural({ ...options, enum: members.flatMap((m) => m['enum'] as unknown[]) }, path);
  }
  const types = members.map((m) => m['type']).sort();
  if (members.length === 2 && types[0] === 'integer' && types[1] === 'string' && members.every((m) => Object.keys(m).length === 1)) {
    return structural({ ...options, 'x-kubernetes-int-or-string': true }, path);
  }
  return fail(
    path,
    `a union is structural only as literals (an enum), T | null or Integer | String; split it into optional fields or use Type.Unknown() with x-kubernetes-preserve-unknown-fields (got ${key} of ${members.length} schemas)`,
  );
}

/** `A & B` of objects: one object with the properties and required fields of both. */
function intersection(schema: Record<string, unknown>, path: string): Record<string, unknown> {
  const members = schema['allOf'];
  if (!Array.isArray(members) || !members.every((m) => isObject(m) && m['type'] === 'object' && isObject(m['properties']))) {
    return fail(path, 'an intersection is structural only of objects with properties (Type.Intersect of Type.Object)');
  }
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  for (const member of members as Record<string, unknown>[]) {
    for (const [name, property] of Object.entries(member['properties'] as Record<string, unknown>)) {
      if (name in properties) fail(`${path}.properties.${name}`, 'is declared by two members of an intersection; declare it once');
      properties[name] = property;
    }
    for (const name of (member['required'] as string[] | undefined) ?? []) required.add(name);
  }
  return structural(
    { ...withoutKey(schema, 'allOf'), type: 'object', properties, ...(required.size > 0 ? { required: [...required] } : {}) },
    path,
  );
}

/**
 * The structural form of one schema node; `path` names it in errors (e.g. `WebPage v1 spec.html`).
 * Exported for tests and for users who assemble a CRD by hand.
 */
export function structuralSchema(schema: TSchema, path = 'schema'): JsonSchema {
  return structural(schema, path);
}

function structural(node: unknown, path: string): Record<string, unknown> {
  if (!isObject(node)) return fail(path, `must be a schema object, got ${JSON.stringify(node)}`);
  if ('$ref' in node) return fail(path, 'a CRD schema cannot refer to other schemas ($ref, Type.Ref): write the schema inline');
  if ('anyOf' in node) return union(node, 'anyOf', path);
  if ('oneOf' in node) return union(node, 'oneOf', path);
  if ('allOf' in node) return intersection(node, path);
  if ('const' in node) return structural({ ...withoutKey(node, 'const'), enum: [node['const']] }, path);

  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (key === 'properties') {
      if (!isObject(value)) fail(`${path}.properties`, 'must be an object of schemas');
      out[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, structural(property, `${path}.${name}`)]));
    } else if (key === 'items' || key === 'prefixItems' || key === 'additionalItems') {
      if (key !== 'items' || !isObject(value))
        fail(`${path}.items`, 'must be one schema: a tuple is not structural (use an object with named fields)');
      out[key] = structural(value, `${path}[]`);
    } else if (key === 'additionalProperties') {
      // Kubernetes prunes unknown fields by itself; `false` beside properties is rejected, `true` means keep them.
      if (value === true) out['x-kubernetes-preserve-unknown-fields'] = true;
      else if (isObject(value)) out[key] = structural(value, `${path}.*`);
    } else if (key === 'patternProperties') {
      if (!isObject(value) || Object.keys(value).length !== 1 || !(ANY_KEY in value)) {
        fail(
          `${path}.patternProperties`,
          'only Type.Record(Type.String(), T) maps to a CRD schema (additionalProperties); patterns of keys are not structural',
        );
      }
      out['additionalProperties'] = structural(value[ANY_KEY], `${path}.*`);
    } else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') {
      // JSON Schema 2020-12 says `exclusiveMinimum: n`; OpenAPI v3.0 says `minimum: n, exclusiveMinimum: true`.
      if (typeof value !== 'number') fail(`${path}.${key}`, 'must be a number');
      out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
      out[key] = true;
    } else if (KEPT.has(key)) {
      out[key] = value;
    } else {
      fail(`${path}.${key}`, `is not a keyword a CRD schema can hold (${[...KEPT].join(', ')})`);
    }
  }
  if (Array.isArray(out['enum']) && out['type'] === undefined) out['type'] = enumType(out['enum'], path);
  if (out['type'] === undefined && out['x-kubernetes-int-or-string'] !== true) {
    // Type.Unknown() / Type.Any(): anything, kept as it is.
    if (
      Object.keys(out).every(
        (k) => k === 'description' || k === 'title' || k === 'default' || k === 'nullable' || k.startsWith('x-kubernetes-'),
      )
    ) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else {
      fail(path, 'has no type: a structural schema names one (object, array, string, integer, number, boolean)');
    }
  }
  if (out['type'] !== undefined && (typeof out['type'] !== 'string' || !TYPES.has(out['type']))) {
    fail(`${path}.type`, `${JSON.stringify(out['type'])} is not a CRD schema type (${[...TYPES].join(', ')})`);
  }
  if (out['type'] === 'object' && out['properties'] !== undefined && out['additionalProperties'] !== undefined) {
    fail(path, 'an object has either properties or additionalProperties (a map), not both');
  }
  if (out['type'] === 'array' && out['items'] === undefined) fail(path, 'an array needs items');
  return out;
}
