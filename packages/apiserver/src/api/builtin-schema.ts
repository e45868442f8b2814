/**
 * Built-in kinds by their OpenAPI schemas (generated from the Kubernetes definitions into
 * builtin-schemas.data.ts): what the real server's JSON decoding does to a built-in object. A
 * value of the wrong type fails the request as Go's decoder fails it (400, `cannot be handled as`);
 * fields the Go types do not declare are dropped, and reported by `fieldValidation`. A built-in
 * kind is checked whenever the data has a schema for its group/version/kind, so kinds added to
 * builtins.ts get it without more code.
 */
import { parseQuantity } from '../grammar/cel.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject, ownValue } from '../base/json.js';

interface SchemaData {
  kinds: [group: string, version: string, kind: string, definition: string][];
  definitions: Record<string, JsonObject>;
}

let data: SchemaData | undefined;
let loading: Promise<void> | undefined;
const NONE: SchemaData = { kinds: [], definitions: {} };

/**
 * Loads the definitions (about 450 kB) on the first request rather than at start-up; the server
 * awaits it before serving. Undefined once loaded, so requests after the first do not wait.
 */
export function loadBuiltinSchemas(): Promise<void> | undefined {
  if (data) return undefined;
  loading ??= import('./builtin-schemas.data.js').then((m) => {
    data = JSON.parse(m.BUILTIN_SCHEMAS_JSON) as SchemaData;
  });
  return loading;
}

/** Before the first request (the server's own seeding writes) there are no definitions yet. */
function schemaData(): SchemaData {
  return data ?? NONE;
}

const REF_PREFIX = '#/components/schemas/';

/** The OpenAPI definition name of a built-in kind (`io.k8s.api.apps.v1.Deployment`). */
export function builtinDefinitionName(group: string, version: string, kind: string): string | undefined {
  return schemaData().kinds.find(([g, v, k]) => g === group && v === version && k === kind)?.[3];
}

/** Every definition a kind's schema refers to, transitively, by name (for /openapi/v3). */
export function builtinDefinitionsOf(root: string): Record<string, JsonObject> {
  const { definitions } = schemaData();
  const out: Record<string, JsonObject> = {};
  const pending = [root];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (out[name] || !definitions[name]) continue;
    out[name] = definitions[name];
    for (const m of JSON.stringify(definitions[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) pending.push(m[1]);
  }
  return out;
}

/** A property schema with its `allOf: [{$ref}]` wrapper resolved to the definition it names. */
function resolve(s: JsonObject): { schema: JsonObject; name?: string } {
  const inner = Array.isArray(s.allOf) && isJsonObject(s.allOf[0]) ? s.allOf[0] : s;
  if (typeof inner.$ref === 'string' && inner.$ref.startsWith(REF_PREFIX)) {
    const name = inner.$ref.slice(REF_PREFIX.length);
    return { schema: schemaData().definitions[name] ?? {}, name };
  }
  return { schema: inner };
}

/** The Go type a schema stands for, as Go's JSON decoder names it in errors. */
function goType(s: JsonObject): string {
  const { schema, name } = resolve(s);
  if (name) return `v1.${name.slice(name.lastIndexOf('.') + 1)}`;
  if (schema['x-kubernetes-int-or-string'] === true) return schema.format === 'quantity' ? 'resource.Quantity' : 'intstr.IntOrString';
  switch (schema.type) {
    case 'integer':
      return typeof schema.format === 'string' ? schema.format : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
      return schema.format === 'date-time' ? 'v1.Time' : schema.format === 'byte' ? '[]uint8' : 'string';
    case 'array':
      return `[]${isJsonObject(schema.items) ? goType(schema.items) : 'interface {}'}`;
    case 'object':
      return isJsonObject(schema.additionalProperties) ? `map[string]${goType(schema.additionalProperties)}` : 'map[string]interface {}';
    default:
      return 'interface {}';
  }
}

function jsonKind(v: JsonValue): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'string' ? 'string' : 'object';
}

function typeFits(v: JsonValue, s: JsonObject): boolean {
  if (s['x-kubernetes-int-or-string'] === true) return typeof v === 'string' || typeof v === 'number';
  switch (s.type) {
    case 'integer':
      // Go's decoder refuses a number its integer type cannot hold (replicas: 1e12 into an int32).
      return (
        typeof v === 'number' &&
        Number.isInteger(v) &&
        (s.format === 'int32' ? v >= -(2 ** 31) && v < 2 ** 31 : v >= -(2 ** 63) && v < 2 ** 63)
      );
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isJsonObject(v);
    default:
      return true;
  }
}

export interface DecodeOutcome {
  /** Go's decoding error for the first value of the wrong type (the request fails with 400). */
  typeError?: string;
  /** Paths of fields the Go types do not declare (already dropped from the object). */
  unknownFields: string[];
}

/** resource.ErrFormatWrong, word for word. */
const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const ROOT_KEPT = new Set(['apiVersion', 'kind']);

/**
 * Decodes a built-in object as the real server's Go types would, in place: drops undeclared
 * fields and reports the first type mismatch. A kind without a schema passes untouched.
 */
export function decodeBuiltin(obj: JsonObject, definition: string): DecodeOutcome {
  const outcome: DecodeOutcome = { unknownFields: [] };
  const root = schemaData().definitions[definition];
  if (!root) return outcome;
  walk(obj, root, '', '', structOf(definition), outcome, true);
  return outcome;
}

/**
 * `path` names a field as strict decoding does (`containers[0].imagePolicy`), `goPath` as Go's type
 * errors do (`containers.ports`, no indices).
 */
function walk(value: JsonValue, s: JsonObject, path: string, goPath: string, struct: string, outcome: DecodeOutcome, root: boolean): void {
  // Go decodes null into any field as "leave it unset".
  if (value === null) return;
  if (!typeFits(value, s)) {
    if (outcome.typeError === undefined) {
      const what = typeof value === 'number' && s.type === 'integer' ? `number ${value}` : jsonKind(value);
      outcome.typeError = `json: cannot unmarshal ${what} into Go struct field ${struct}.${goPath} of type ${goType(s)}`;
    }
    return;
  }
  // resource.Quantity's UnmarshalJSON refuses a string that is not a quantity, with its own error.
  if (s.format === 'quantity' && typeof value === 'string' && parseQuantity(value.trim()) === undefined) {
    outcome.typeError ??= QUANTITY_FORMAT_ERROR;
    return;
  }
  if (Array.isArray(value)) {
    if (isJsonObject(s.items)) {
      const items = resolve(s.items);
      value.forEach((v, i) => walk(v, items.schema, `${path}[${i}]`, goPath, structFor(v, items, struct), outcome, false));
    }
    return;
  }
  if (!isJsonObject(value) || s['x-kubernetes-preserve-unknown-fields'] === true) return;
  const props = isJsonObject(s.properties) ? s.properties : undefined;
  const extra = isJsonObject(s.additionalProperties) ? resolve(s.additionalProperties) : undefined;
  for (const key of Object.keys(value)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const childPath = path ? `${path}.${key}` : key;
    const childGoPath = goPath ? `${goPath}.${key}` : key;
    const declared = ownValue(props, key);
    if (isJsonObject(declared)) {
      const child = resolve(declared);
      walk(value[key], child.schema, childPath, childGoPath, structFor(value[key], child, struct), outcome, false);
    } else if (extra) {
      walk(value[key], extra.schema, childPath, goPath, structFor(value[key], extra, struct), outcome, false);
    } else if (!props) {
      continue;
    } else {
      outcome.unknownFields.push(childPath);
      delete value[key];
    }
  }
}

const structOf = (definition: string): string => definition.slice(definition.lastIndexOf('.') + 1);

/** Go names the innermost struct reached: a value of the wrong type is reported in its parent's. */
function structFor(v: JsonValue, child: { schema: JsonObject; name?: string }, parent: string): string {
  return child.name && v !== null && typeFits(v, child.schema) ? structOf(child.name) : parent;
}
