/**
 * A minimal OpenAPI v3 (openapi-v2.ts serves v2 from the same definitions): the index and one document per group/version, declaring for each kind a
 * PATCH operation with the query parameters kubectl looks for (fieldValidation, so `kubectl apply`
 * and `create -f` validate on the server) and the patch types it accepts. Strategic merge is not
 * declared, so kubectl computes its strategic patches from its compiled-in types. Built-in kinds
 * carry their Kubernetes definitions (builtin-schema.ts), enough for `kubectl explain`.
 */
import { builtinDefinitionName, builtinDefinitionsOf } from '../api/builtin-schema.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import type { Registry, ResourceType, VersionInfo } from '../api/registry.js';
import { apiVersionOf } from '../api/registry.js';

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * apiVersion, kind and metadata as the real server adds them to a CRD's published schema (taken
 * from a built-in kind), so `kubectl explain widget.metadata` works; in v3 form (`allOf` refs).
 */
export function typeMetaProperties(): JsonObject {
  const namespace = builtinDefinitionsOf('io.k8s.api.core.v1.Namespace')['io.k8s.api.core.v1.Namespace'];
  const props = isJsonObject(namespace?.properties) ? namespace.properties : {};
  return {
    apiVersion: props.apiVersion ?? { type: 'string' },
    kind: props.kind ?? { type: 'string' },
    metadata: {
      description:
        "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      allOf: [{ $ref: `#/components/schemas/${OBJECT_META}` }],
    },
  };
}

/** A CRD version's schema as published: with type meta, unless it is a free object. */
export function withTypeMeta(schema: JsonObject): JsonObject {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return schema;
  return {
    ...schema,
    type: 'object',
    properties: { ...typeMetaProperties(), ...(isJsonObject(schema.properties) ? schema.properties : {}) },
  };
}

export function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openApiIndex(registry: Registry, hashPrefix: string): JsonObject {
  const paths: JsonObject = {};
  for (const { group, versions } of registry.groupVersions()) {
    for (const version of versions) {
      const p = gvPath(group, version);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hashPrefix}${registry.revision}` };
    }
  }
  return { paths };
}

/** The query parameters of a PATCH that kubectl looks for (fieldValidation: validation on the server). */
export const PATCH_QUERY_PARAMETERS: readonly { name: string; description: string; type: string }[] = [
  { name: 'dryRun', description: 'When present, indicates that modifications should not be persisted.', type: 'string' },
  {
    name: 'fieldManager',
    description: 'fieldManager is a name associated with the actor or entity that is making these changes.',
    type: 'string',
  },
  {
    name: 'fieldValidation',
    description: 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
    type: 'string',
  },
  { name: 'force', description: 'Force is going to "force" Apply requests.', type: 'boolean' },
];

export const PATCH_DEFINITION: JsonObject = {
  type: 'object',
  description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
};

/** The patch types the server takes for a kind; strategic merge is left out (see above). */
export const PATCH_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

/**
 * A built-in kind's definition name (`io.k8s.api.apps.v1.Deployment`), or a custom kind's as the
 * real server names it: the group reversed (`com.example.v1.Widget`).
 */
export function schemaName(type: ResourceType, version: string): string {
  const builtin = type.custom ? undefined : builtinDefinitionName(type.group, version, type.kind);
  return builtin ?? `${(type.group || 'core').split('.').reverse().join('.')}.${version}.${type.kind}`;
}

function patchOperation(type: ResourceType, version: string): JsonObject {
  const ref = { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } };
  const content: JsonObject = Object.fromEntries(PATCH_TYPES.map((t) => [t, ref]));
  return {
    operationId: `patch${type.kind}`,
    parameters: PATCH_QUERY_PARAMETERS.map((p) => ({
      name: p.name,
      in: 'query',
      description: p.description,
      schema: { type: p.type, uniqueItems: true },
    })),
    requestBody: { content, required: true },
    responses: {
      '200': {
        description: 'OK',
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(type, version)}` } } },
      },
    },
    'x-kubernetes-action': 'patch',
    'x-kubernetes-group-version-kind': { group: type.group, version, kind: type.kind },
  };
}

export function openApiDocument(
  registry: Registry,
  group: string,
  version: string,
  schemaOf: (type: ResourceType, v: VersionInfo) => JsonValue | undefined,
): JsonObject | undefined {
  const types = registry.typesIn(group, version);
  if (types.length === 0) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': PATCH_DEFINITION,
  };
  const base = `/${gvPath(group, version)}`;
  for (const { type, version: v } of types) {
    const item = type.namespaced ? `${base}/namespaces/{namespace}/${type.plural}/{name}` : `${base}/${type.plural}/{name}`;
    paths[item] = { patch: patchOperation(type, version) };
    if (v.statusSubresource)
      paths[`${item}/status`] = { patch: { ...patchOperation(type, version), operationId: `patch${type.kind}Status` } };
    const builtin = type.custom ? undefined : builtinDefinitionName(type.group, version, type.kind);
    if (builtin) {
      Object.assign(schemas, builtinDefinitionsOf(builtin));
      continue;
    }
    const declared = schemaOf(type, v);
    const published = isJsonObject(declared) ? withTypeMeta(declared) : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    if (published.properties) Object.assign(schemas, builtinDefinitionsOf(OBJECT_META));
    schemas[schemaName(type, version)] = {
      ...published,
      'x-kubernetes-group-version-kind': [{ group: type.group, version, kind: type.kind }],
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: apiVersionOf(group, version) },
    paths,
    components: { schemas },
  };
}
