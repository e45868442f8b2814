/**
 * The CustomResourceDefinition object as the real server checks it: the fields apiextensions/v1
 * declares (anything else is an unknown field, e.g. client-node's `x_kubernetes_preserve_unknown_fields`
 * spelling), and the rules for a version's openAPIV3Schema — structural (a type everywhere,
 * properties and additionalProperties not both), list and map types, patterns RE2 compiles, and
 * CEL rules that compile within the cost limit.
 */
import { compileRule, PER_RULE_COST_LIMIT } from '../grammar/cel.js';
import { compilePattern } from './crd-schema.js';
import type { StatusCause } from '../base/errors.js';
import { fieldForbidden, fieldInvalid, fieldRequired } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject, ownValue } from '../base/json.js';

// ---------------------------------------------------------------------------------------------
// Known fields

/** A field's shape: a struct of known fields, a list or map of one shape, or anything. */
type Shape = Resolved | (() => Resolved);
type Resolved = { fields: Readonly<Record<string, Shape>> } | { list: Shape } | { map: Shape } | 'any';

const ANY = 'any' as const;
const struct = (fields: Record<string, Shape>): Resolved => ({ fields });
const list = (item: Shape): Resolved => ({ list: item });
const map = (value: Shape): Resolved => ({ map: value });

const SCHEMA_PROPS: Resolved = struct({
  id: ANY,
  $schema: ANY,
  $ref: ANY,
  description: ANY,
  type: ANY,
  format: ANY,
  title: ANY,
  default: ANY,
  maximum: ANY,
  exclusiveMaximum: ANY,
  minimum: ANY,
  exclusiveMinimum: ANY,
  maxLength: ANY,
  minLength: ANY,
  pattern: ANY,
  maxItems: ANY,
  minItems: ANY,
  uniqueItems: ANY,
  multipleOf: ANY,
  enum: ANY,
  maxProperties: ANY,
  minProperties: ANY,
  required: ANY,
  items: () => SCHEMA_OR_ARRAY,
  allOf: () => list(SCHEMA_PROPS),
  oneOf: () => list(SCHEMA_PROPS),
  anyOf: () => list(SCHEMA_PROPS),
  not: () => SCHEMA_PROPS,
  properties: () => map(SCHEMA_PROPS),
  additionalProperties: () => SCHEMA_OR_BOOL,
  patternProperties: () => map(SCHEMA_PROPS),
  dependencies: ANY,
  additionalItems: () => SCHEMA_OR_BOOL,
  definitions: () => map(SCHEMA_PROPS),
  externalDocs: struct({ description: ANY, url: ANY }),
  example: ANY,
  nullable: ANY,
  'x-kubernetes-preserve-unknown-fields': ANY,
  'x-kubernetes-embedded-resource': ANY,
  'x-kubernetes-int-or-string': ANY,
  'x-kubernetes-list-map-keys': ANY,
  'x-kubernetes-list-type': ANY,
  'x-kubernetes-map-type': ANY,
  'x-kubernetes-validations': list(
    struct({ rule: ANY, message: ANY, messageExpression: ANY, reason: ANY, fieldPath: ANY, optionalOldSelf: ANY }),
  ),
});
/** JSONSchemaPropsOrArray / OrBool: a schema, or (items) a list of schemas, or (additional*) a boolean. */
const SCHEMA_OR_ARRAY: Resolved = SCHEMA_PROPS;
const SCHEMA_OR_BOOL: Resolved = SCHEMA_PROPS;

const CRD_SHAPE: Shape = struct({
  apiVersion: ANY,
  kind: ANY,
  metadata: ANY,
  status: ANY,
  spec: struct({
    group: ANY,
    scope: ANY,
    preserveUnknownFields: ANY,
    names: struct({ plural: ANY, singular: ANY, shortNames: ANY, kind: ANY, listKind: ANY, categories: ANY }),
    conversion: struct({
      strategy: ANY,
      webhook: struct({
        conversionReviewVersions: ANY,
        clientConfig: struct({ url: ANY, caBundle: ANY, service: struct({ namespace: ANY, name: ANY, path: ANY, port: ANY }) }),
      }),
    }),
    versions: list(
      struct({
        name: ANY,
        served: ANY,
        storage: ANY,
        deprecated: ANY,
        deprecationWarning: ANY,
        schema: struct({ openAPIV3Schema: SCHEMA_PROPS }),
        subresources: struct({ status: ANY, scale: struct({ specReplicasPath: ANY, statusReplicasPath: ANY, labelSelectorPath: ANY }) }),
        additionalPrinterColumns: list(struct({ name: ANY, type: ANY, format: ANY, description: ANY, priority: ANY, jsonPath: ANY })),
        selectableFields: list(struct({ jsonPath: ANY })),
      }),
    ),
  }),
});

function pruneUnknown(value: JsonValue, shape: Shape, path: string, unknown: string[]): void {
  const s = typeof shape === 'function' ? shape() : shape;
  if (s === ANY || value === null) return;
  if ('list' in s) {
    if (Array.isArray(value)) value.forEach((v, i) => pruneUnknown(v, s.list, `${path}[${i}]`, unknown));
    return;
  }
  if (!isJsonObject(value)) return;
  if ('map' in s) {
    for (const [k, v] of Object.entries(value)) pruneUnknown(v, s.map, `${path}.${k}`, unknown);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const field = s.fields[k];
    const at = path ? `${path}.${k}` : k;
    if (field === undefined) {
      unknown.push(at);
      delete value[k];
    } else pruneUnknown(v, field, at, unknown);
  }
}

/** Removes the fields apiextensions/v1 does not declare from a CRD; returns their paths. */
export function pruneUnknownCrdFields(crd: JsonObject): string[] {
  const unknown: string[] = [];
  pruneUnknown(crd, CRD_SHAPE, '', unknown);
  return unknown;
}

// ---------------------------------------------------------------------------------------------
// Schema rules

const LIST_TYPES = ['atomic', 'map', 'set'];
const MAP_TYPES = ['atomic', 'granular'];
const RULE_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

/** How Go prints an apiextensions.ValidationRule in the real server's messages. */
function goRule(r: JsonObject): string {
  const ptr = (v: JsonValue | undefined, type: string) => (v === undefined ? `(${type})(nil)` : `(${type})(${JSON.stringify(v)})`);
  return (
    `apiextensions.ValidationRule{Rule:${JSON.stringify(str(r.rule))}, Message:${JSON.stringify(str(r.message))}, ` +
    `MessageExpression:${JSON.stringify(str(r.messageExpression))}, Reason:${ptr(r.reason, '*apiextensions.FieldValueErrorReason')}, ` +
    `FieldPath:${JSON.stringify(str(r.fieldPath))}, OptionalOldSelf:${ptr(r.optionalOldSelf, '*bool')}}`
  );
}

function checkRules(s: JsonObject, path: string, causes: StatusCause[]): void {
  const rules = s['x-kubernetes-validations'];
  if (rules === undefined) return;
  if (!Array.isArray(rules)) return;
  rules.forEach((r, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (!isJsonObject(r)) return;
    if (str(r.rule).trim() === '') {
      causes.push(fieldRequired(`${at}.rule`, ''));
      return;
    }
    const compiled = compileRule(str(r.rule), s);
    if (!compiled.ok)
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goRule(r)}: compilation failed: ${compiled.error}`,
        field: `${at}.rule`,
      });
    else if (compiled.program.estimatedCost > PER_RULE_COST_LIMIT) {
      const factor = compiled.program.estimatedCost / PER_RULE_COST_LIMIT;
      const shownFactor = factor > 100 ? 'more than 100x' : `${factor.toFixed(1)}x`;
      causes.push(
        fieldForbidden(
          `${at}.rule`,
          `estimated rule cost exceeds budget by factor of ${shownFactor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
        ),
      );
    }
    if (r.messageExpression !== undefined) {
      const m = compileRule(str(r.messageExpression), s);
      if (!m.ok)
        causes.push(fieldInvalid(`${at}.messageExpression`, str(r.messageExpression), `messageExpression compilation failed: ${m.error}`));
    }
    if (r.message !== undefined && str(r.message).includes('\n'))
      causes.push(fieldInvalid(`${at}.message`, str(r.message), 'message must not contain line breaks'));
    if (r.reason !== undefined && !RULE_REASONS.includes(str(r.reason))) {
      causes.push({
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(r.reason)}: supported values: ${RULE_REASONS.map((x) => `"${x}"`).join(', ')}`,
        field: `${at}.reason`,
      });
    }
  });
}

function checkListAndMapTypes(s: JsonObject, path: string, causes: StatusCause[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (!LIST_TYPES.includes(str(listType))) {
      causes.push({
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(listType)}: supported values: "atomic", "map", "set"`,
        field: `${path}.x-kubernetes-list-type`,
      });
    } else if (s.type !== 'array') {
      causes.push(fieldInvalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
    }
  }
  const keys = s['x-kubernetes-list-map-keys'];
  const items = isJsonObject(s.items) ? s.items : undefined;
  if (listType === 'map') {
    if (!Array.isArray(keys) || keys.length === 0)
      causes.push(fieldRequired(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object')
      causes.push(fieldInvalid(`${path}.items.type`, items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    if (Array.isArray(keys) && items) {
      const props = isJsonObject(items.properties) ? items.properties : {};
      const required = Array.isArray(items.required) ? items.required : [];
      keys.forEach((k, i) => {
        const prop = ownValue(props, str(k));
        if (!isJsonObject(prop))
          causes.push(fieldInvalid(`${path}.x-kubernetes-list-map-keys[${i}]`, k, 'entries must all be names of item properties'));
        else if (!required.includes(str(k)) && prop.default === undefined) {
          causes.push(fieldRequired(`${path}.items.required`, `all map keys must be required or have a default value`));
        } else if (prop.type !== 'string' && prop.type !== 'integer' && prop.type !== 'boolean' && prop.type !== 'number') {
          causes.push(
            fieldInvalid(
              `${path}.items.properties[${str(k)}].type`,
              prop.type ?? '',
              "must be a scalar type if parent array's x-kubernetes-list-type is map",
            ),
          );
        }
      });
    }
  } else if (keys !== undefined) {
    causes.push(fieldInvalid(`${path}.x-kubernetes-list-type`, listType ?? '', 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'set' && items && items.type === 'object')
    causes.push(fieldInvalid(`${path}.items.type`, 'object', "must be a scalar type if parent array's x-kubernetes-list-type is set"));
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && !MAP_TYPES.includes(str(mapType))) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(mapType)}: supported values: "atomic", "granular"`,
      field: `${path}.x-kubernetes-map-type`,
    });
  }
}

function checkNode(s: JsonValue, path: string, causes: StatusCause[], root: boolean): void {
  if (!isJsonObject(s)) return;
  const typeless = s['x-kubernetes-int-or-string'] === true || s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s.type === undefined || s.type === '') {
    if (root) causes.push(fieldRequired(`${path}.type`, 'must not be empty at the root'));
    else if (!typeless) causes.push(fieldRequired(`${path}.type`, 'must not be empty for specified object fields'));
  } else if (!TYPES.includes(str(s.type))) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(s.type)}: supported values: ${TYPES.map((t) => `"${t}"`).join(', ')}`,
      field: `${path}.type`,
    });
  } else if (root && s.type !== 'object') {
    causes.push(fieldInvalid(`${path}.type`, s.type, 'must be object at the root'));
  }
  if (s.properties !== undefined && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    causes.push(fieldForbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (s.type === 'array' && s.items === undefined) causes.push(fieldRequired(`${path}.items`, 'must be specified'));
  if (Array.isArray(s.items)) causes.push(fieldForbidden(`${path}.items`, 'items must be a schema object and not an array'));
  if (typeof s.pattern === 'string') {
    const re = compilePattern(s.pattern);
    if (typeof re === 'string')
      causes.push(fieldInvalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${re}`));
  }
  checkListAndMapTypes(s, path, causes);
  checkRules(s, path, causes);
  if (isJsonObject(s.properties))
    for (const [name, child] of Object.entries(s.properties)) checkNode(child, `${path}.properties[${name}]`, causes, false);
  if (isJsonObject(s.items)) checkNode(s.items, `${path}.items`, causes, false);
  if (isJsonObject(s.additionalProperties)) checkNode(s.additionalProperties, `${path}.additionalProperties`, causes, false);
}

/** The real server's objections to a version's openAPIV3Schema (empty when it accepts it). */
export function schemaProblems(schema: JsonValue | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (schema === undefined) return [fieldRequired(path, 'schemas are required')];
  checkNode(schema, path, causes, true);
  return causes;
}
