/** CustomResourceDefinitions from the few facts that vary, their schemas as Kubernetes writes them, and their installation. */
import type {
  KubernetesObject,
  V1CustomResourceColumnDefinition,
  V1CustomResourceDefinition,
  V1JSONSchemaProps,
} from '@kubernetes/client-node';
import { ConfigurationError } from '../core/index.js';
import { builtinResources } from './builtins.js';
import type { KubeClient } from './client.js';
import { StatusConditions } from './conditions-schema.js';
import { resolveDescriptor, type ResourceDescriptor } from './descriptor.js';
import { classifyError } from './errors.js';
import { structuralSchema } from './structural.js';

export interface CustomResourceOptions {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  /** Default: the kind in lower case. */
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /** Default 'Namespaced'. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** The served and stored version (default 'v1'). */
  readonly version?: string;
  /** The schema of `spec` (default: any object). */
  readonly spec?: V1JSONSchemaProps;
  /**
   * The schema of `status` (default: any object); status is a subresource unless `statusSubresource`
   * is false. Declare `conditions: statusConditionsSchema` among its properties for `status.conditions`.
   */
  readonly status?: V1JSONSchemaProps;
  readonly statusSubresource?: boolean;
  readonly printerColumns?: readonly V1CustomResourceColumnDefinition[];
}

const ANY_OBJECT: V1JSONSchemaProps = { type: 'object', x_kubernetes_preserve_unknown_fields: true };

/** A CustomResourceDefinition from the few facts that vary; validated like a descriptor. */
export function customResourceDefinition(options: CustomResourceOptions): V1CustomResourceDefinition {
  const version = options.version ?? 'v1';
  resolveDescriptor({ apiVersion: `${options.group}/${version}`, kind: options.kind, plural: options.plural });
  if (!options.group.includes('.')) {
    throw new ConfigurationError(
      'group',
      `'${options.group}' must be a domain with a dot (e.g. 'example.com'), as Kubernetes requires of CRD groups`,
    );
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${options.group}` },
    spec: {
      group: options.group,
      scope: options.scope ?? 'Namespaced',
      names: {
        plural: options.plural,
        singular: options.singular ?? options.kind.toLowerCase(),
        kind: options.kind,
        listKind: `${options.kind}List`,
        ...(options.shortNames ? { shortNames: [...options.shortNames] } : {}),
        ...(options.categories ? { categories: [...options.categories] } : {}),
      },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          ...(options.statusSubresource === false ? {} : { subresources: { status: {} } }),
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: options.spec ?? ANY_OBJECT, status: options.status ?? ANY_OBJECT } },
          },
          ...(options.printerColumns ? { additionalPrinterColumns: [...options.printerColumns] } : {}),
        },
      ],
    },
  };
}

/** The descriptor of a CRD's storage version, for `register()`, informers and clients. */
export function descriptorOf(crd: V1CustomResourceDefinition): ResourceDescriptor {
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  if (!version) throw new ConfigurationError('crd.spec.versions', `${crd.metadata?.name ?? 'the CRD'} has no version`);
  return {
    apiVersion: `${crd.spec.group}/${version.name}`,
    kind: crd.spec.names.kind,
    plural: crd.spec.names.plural,
    namespaced: crd.spec.scope !== 'Cluster',
  };
}

/** client-node's model names for JSON schema keywords that are not valid identifiers. */
const SCHEMA_KEYWORDS: Readonly<Record<string, string>> = {
  ref: '$ref',
  schema: '$schema',
  _default: 'default',
  _enum: 'enum',
  x_kubernetes_embedded_resource: 'x-kubernetes-embedded-resource',
  x_kubernetes_int_or_string: 'x-kubernetes-int-or-string',
  x_kubernetes_list_map_keys: 'x-kubernetes-list-map-keys',
  x_kubernetes_list_type: 'x-kubernetes-list-type',
  x_kubernetes_map_type: 'x-kubernetes-map-type',
  x_kubernetes_preserve_unknown_fields: 'x-kubernetes-preserve-unknown-fields',
  x_kubernetes_validations: 'x-kubernetes-validations',
};
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);
const SCHEMA_VALUES = new Set(['items', 'not', 'additionalProperties', 'additionalItems', 'allOf', 'anyOf', 'oneOf']);

function renameKeywords(schema: unknown, names: Readonly<Record<string, string>>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => renameKeywords(s, names));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    const name = names[key] ?? key;
    if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') {
      out[name] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, renameKeywords(v, names)]));
    } else {
      out[name] = SCHEMA_VALUES.has(key) ? renameKeywords(value, names) : value;
    }
  }
  return out;
}

/**
 * A client-node typed schema (`x_kubernetes_preserve_unknown_fields`, `_enum`, ...) as the JSON
 * the API server reads (`x-kubernetes-preserve-unknown-fields`, `enum`, ...). client-node's own
 * API classes translate on the way out; a plain JSON request does not, so this does.
 * Property names (keys under `properties`) are the user's and stay as they are.
 */
export function schemaToJson(schema: unknown): unknown {
  return renameKeywords(schema, SCHEMA_KEYWORDS);
}

const JSON_KEYWORDS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SCHEMA_KEYWORDS).map(([typed, json]) => [json, typed]),
);

/** The inverse of `schemaToJson`: a schema as JSON in client-node's typed form, as `customResourceDefinition()` holds it. */
export function schemaFromJson(schema: unknown): V1JSONSchemaProps {
  // SCHEMA_MAPS and SCHEMA_VALUES name keywords spelled alike in both forms, so one walk serves both ways.
  return renameKeywords(schema, JSON_KEYWORDS) as V1JSONSchemaProps;
}

/** The CRD as the API server reads it (see `schemaToJson`). */
export function crdToJson(crd: V1CustomResourceDefinition): V1CustomResourceDefinition & KubernetesObject {
  return {
    ...crd,
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: {
      ...crd.spec,
      versions: crd.spec.versions.map((v) =>
        v.schema?.openAPIV3Schema
          ? { ...v, schema: { ...v.schema, openAPIV3Schema: schemaToJson(v.schema.openAPIV3Schema) as V1JSONSchemaProps } }
          : v,
      ),
    },
  };
}

/**
 * Creates the CRD (client-node's typed form, as `customResourceDefinition()` builds it) unless it exists, then waits until the server serves it (its Established
 * condition is True); rejects after `timeoutMs` naming the CRD.
 */
export async function installCustomResourceDefinition(
  client: KubeClient,
  crd: V1CustomResourceDefinition,
  options: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
): Promise<void> {
  const crds = client.resource<V1CustomResourceDefinition & KubernetesObject>(builtinResources.customResourceDefinition);
  const name = crd.metadata?.name ?? '';
  try {
    await crds.create(crdToJson(crd), { signal: options.signal });
  } catch (err) {
    if (classifyError(err) !== 'conflict') throw err;
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await crds.find({ name }, { signal: options.signal });
    if (current?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not Established within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The schema of `status.conditions` as Kubernetes declares metav1.Condition lists: a
 * `listType=map` keyed by `type`, so server-side apply merges each manager's conditions by type
 * (other managers' conditions stay) and rejects two entries of one type. The same schema as
 * `StatusConditions`, in client-node's typed form.
 */
export const statusConditionsSchema: V1JSONSchemaProps = schemaFromJson(structuralSchema(StatusConditions, 'status.conditions'));
