/**
 * Spec changes generated from a CRD's OpenAPI schema, as Acto makes them: for each field, values
 * the schema allows, its boundaries, and values it forbids. Each case is a three-step workload:
 * the base object, the change, and the base again (the revert must restore the state).
 */
import type { KubernetesObject, V1CustomResourceDefinition, V1JSONSchemaProps } from '@kubernetes/client-node';
import { ConfigurationError } from '../../core/index.js';
import { descriptorOf } from '../../kube/index.js';
import type { Action, InputCase, Workload, WorkloadObject } from './types.js';

export interface SchemaWorkloadOptions {
  readonly crd: V1CustomResourceDefinition;
  /** A valid object to start from (Acto's seed CR): the changes are made to it. */
  readonly base: WorkloadObject;
  /** Only these fields (`spec.replicas`); default every field under `spec`. */
  readonly fields?: readonly string[];
}

/** A generated case: what changes, before the revert is added. */
export type GeneratedCase = Omit<InputCase, 'revertOf'>;
type Case = GeneratedCase;

/** A workload whose seed picks one generated case (consecutive seeds, consecutive cases). */
export function schemaWorkload(options: SchemaWorkloadOptions): Workload & { readonly cases: readonly GeneratedCase[] } {
  const { crd, base } = options;
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  const spec = version?.schema?.openAPIV3Schema?.properties?.['spec'];
  if (!spec) throw new ConfigurationError('crd', `${crd.metadata?.name ?? 'the CRD'} has no schema for spec to generate changes from`);
  const cases = generateCases(spec, 'spec').filter((c) => !options.fields || options.fields.includes(c.field));
  if (cases.length === 0)
    throw new ConfigurationError(
      'fields',
      `no field of ${crd.metadata?.name ?? 'the CRD'} to change (fields: ${(options.fields ?? []).join(', ')})`,
    );
  const resource = descriptorOf(crd);
  return {
    cases,
    generate: (_random, seed): readonly Action[] => {
      const chosen = cases[((seed % cases.length) + cases.length) % cases.length];
      const changed = setPath(base, chosen.field.split('.'), chosen.value);
      return [
        { op: 'apply', resource, object: base },
        { op: 'apply', resource, object: changed, input: chosen },
        { op: 'apply', resource, object: base, input: { ...chosen, revertOf: 0 } },
      ];
    },
  };
}

/** The cases of every leaf under `schema`, in field order. */
function generateCases(schema: V1JSONSchemaProps, path: string): Case[] {
  if (schema.type === 'object' && schema.properties) {
    return Object.entries(schema.properties).flatMap(([name, child]) => generateCases(child, `${path}.${name}`));
  }
  const field = path;
  const out: Case[] = [];
  const add = (value: unknown, kind: Case['kind']): void => {
    if (!out.some((c) => JSON.stringify(c.value) === JSON.stringify(value))) out.push({ field, value, kind });
  };
  // A string the schema's pattern forbids is invalid whatever else it is (an empty one too).
  const pattern = patternOf(schema);
  const addString = (value: string, kind: Case['kind']): void => add(value, pattern && !pattern.test(value) ? 'invalid' : kind);
  if (schema._enum) {
    for (const v of schema._enum) add(v, 'valid');
    add('not-one-of-the-enum', 'invalid');
    return out;
  }
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const min = schema.minimum;
      const max = schema.maximum;
      if (min !== undefined) add(schema.exclusiveMinimum ? min + 1 : min, 'boundary');
      if (max !== undefined) add(schema.exclusiveMaximum ? max - 1 : max, 'boundary');
      add(0, min !== undefined && min > 0 ? 'invalid' : 'boundary');
      if (min !== undefined) add(min - 1, 'invalid');
      if (max !== undefined) add(max + 1, 'invalid');
      add(-1, min !== undefined && min > -1 ? 'invalid' : 'boundary');
      if (max === undefined) add(2 ** 31, 'boundary');
      break;
    }
    case 'string':
      addString('', schema.minLength ? 'invalid' : 'boundary');
      if (schema.maxLength !== undefined) {
        addString('a'.repeat(schema.maxLength), 'boundary');
        add('a'.repeat(schema.maxLength + 1), 'invalid');
      } else addString('a'.repeat(256), 'boundary');
      addString('not a valid value!', schema.pattern ? 'invalid' : 'valid');
      break;
    case 'object': {
      // A map (additionalProperties) or a free-form object: empty, one entry, and one of the wrong type.
      const values = typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as V1JSONSchemaProps) : undefined;
      add({}, schema.minProperties ? 'invalid' : 'boundary');
      add({ key: exampleOf(values) }, schema.maxProperties === 0 ? 'invalid' : 'valid');
      if (values?.type !== undefined) add({ key: wrongTypeFor(values) }, 'invalid');
      break;
    }
    case 'boolean':
      add(true, 'valid');
      add(false, 'valid');
      break;
    case 'array':
      add([], schema.minItems ? 'invalid' : 'boundary');
      if (schema.maxItems !== undefined)
        add(
          Array.from({ length: schema.maxItems + 1 }, () => exampleOf(schema.items as V1JSONSchemaProps | undefined)),
          'invalid',
        );
      break;
    default:
      break;
  }
  return out;
}

/** The schema's `pattern` as a RegExp, or undefined (none, or one JavaScript cannot read: then the old guess stands). */
function patternOf(schema: V1JSONSchemaProps): RegExp | undefined {
  if (!schema.pattern) return undefined;
  try {
    return new RegExp(schema.pattern, 'u');
  } catch {
    return undefined;
  }
}

function wrongTypeFor(schema: V1JSONSchemaProps): unknown {
  return schema.type === 'string' ? 1 : 'x';
}

function exampleOf(schema: V1JSONSchemaProps | undefined): unknown {
  switch (schema?.type) {
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'object':
      return {};
    default:
      return 'x';
  }
}

function setPath(object: KubernetesObject, path: string[], value: unknown): KubernetesObject {
  const copy = JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
  let target = copy;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) target[key] = value;
    else {
      if (!target[key] || typeof target[key] !== 'object') target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
  }
  return copy;
}
