/**
 * `/openapi/v2`: one Swagger 2.0 document for everything served, as JSON or as gnostic protobuf
 * (what client-go asks for, Accept `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`),
 * 406 for anything else (as a Status, where kube-openapi's handler sends no body: every error here is one). Built-in kinds carry their Kubernetes
 * definitions (the same data as /openapi/v3, `$ref`s moved to `#/definitions/`); a CRD's kind its
 * schema without value validations, as the real server publishes CRDs in v2 so that kubectl's
 * client-side checks stay lenient. Every resource has its paths, and a PATCH declaring the patch
 * types and query parameters kubectl looks for. The document is built on first request and again
 * only after the registry changed (a CRD added, changed or removed).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { builtinDefinitionName, builtinDefinitionsOf } from '../api/builtin-schema.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { notAcceptable } from '../base/errors.js';
import type { Registry, ResourceType, VersionInfo } from '../api/registry.js';
import { ALL_VERBS } from '../api/builtins/index.js';
import { versionInfo } from './discovery.js';
import { encodeOpenApiV2 } from './openapi-proto.js';
import { gvPath, OBJECT_META, PATCH_DEFINITION, PATCH_QUERY_PARAMETERS, PATCH_TYPES, schemaName, typeMetaProperties } from './openapi.js';

const V3_REF = '#/components/schemas/';
const V2_REF = '#/definitions/';
const PATCH = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
/** Schema keys Swagger 2.0 has no place for. */
const NOT_IN_V2 = new Set(['nullable', 'anyOf', 'oneOf', 'not', 'x-kubernetes-validations']);
/** What the real server strips from CRD schemas in v2 (StripValueValidations, StripNullable). */
const VALUE_VALIDATIONS = new Set([
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
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
  'allOf',
]);

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const OPENAPI_V2_MEDIA_TYPES = ['application/json', OPENAPI_V2_PROTOBUF];
/** The Content-Type kube-openapi answers the protobuf form with (its spelling differs from the Accept's). */
const PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** A v3 schema (built-in definition or CRD schema) in v2 form; `stripValidations` for CRDs. */
function toV2(s: JsonValue, stripValidations: boolean): JsonValue {
  if (Array.isArray(s)) return s.map((x) => toV2(x, stripValidations));
  if (!isJsonObject(s)) return s;
  const out: JsonObject = {};
  // `allOf: [{$ref}]` is how v3 gives a reference a description; v2 puts them side by side.
  const single = Array.isArray(s.allOf) && s.allOf.length === 1 && isJsonObject(s.allOf[0]) ? s.allOf[0] : undefined;
  for (const [key, value] of Object.entries(s)) {
    if (NOT_IN_V2.has(key) || (stripValidations && VALUE_VALIDATIONS.has(key))) continue;
    if (key === 'allOf' && typeof single?.$ref === 'string') out.$ref = String(single.$ref).replace(V3_REF, V2_REF);
    else if (key === '$ref' && typeof value === 'string') out.$ref = value.replace(V3_REF, V2_REF);
    else if (key === 'properties' && isJsonObject(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toV2(v, stripValidations)]));
    else if (key === 'items' || key === 'additionalProperties') out[key] = toV2(value, stripValidations);
    else out[key] = value;
  }
  return out;
}

/** A CRD version's kind: its schema (value validations stripped) with type meta, or a free object. */
function customDefinition(type: ResourceType, version: string, schema: JsonValue | undefined): JsonObject {
  const gvk = [{ group: type.group, version, kind: type.kind }];
  if (!isJsonObject(schema) || schema['x-kubernetes-preserve-unknown-fields'] === true)
    return { type: 'object', 'x-kubernetes-group-version-kind': gvk };
  const converted = toV2(schema, true) as JsonObject;
  const properties = isJsonObject(converted.properties) ? converted.properties : {};
  const typeMeta = (toV2({ properties: typeMetaProperties() }, false) as JsonObject).properties as JsonObject;
  return { ...converted, type: 'object', properties: { ...typeMeta, ...properties }, 'x-kubernetes-group-version-kind': gvk };
}

/** `apps` → `Apps`, `networking.k8s.io` → `Networking`, `example.com` → `ExampleCom`: as operation ids name groups. */
function groupWord(group: string): string {
  const parts = (group || 'core').replace(/\.k8s\.io$/, '').split('.');
  return parts.map((p) => p.replace(/(^|-)(\w)/g, (_m, _d: string, c: string) => c.toUpperCase())).join('');
}

const PRODUCES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

function pathParameter(name: string, description: string): JsonObject {
  return { name, in: 'path', required: true, type: 'string', uniqueItems: true, description };
}

/** The paths of one resource: the collection, the object, and its status, for the verbs it serves. */
function resourcePaths(type: ResourceType, v: VersionInfo, definition: string | undefined): JsonObject {
  const version = v.name;
  const gvk = { group: type.group, version, kind: type.kind };
  const verbs = new Set(type.verbs ?? ALL_VERBS);
  const base = `/${gvPath(type.group, version)}`;
  const collection = type.namespaced ? `${base}/namespaces/{namespace}/${type.plural}` : `${base}/${type.plural}`;
  const name = `${groupWord(type.group)}${version.charAt(0).toUpperCase()}${version.slice(1)}${type.namespaced ? 'Namespaced' : ''}${type.kind}`;
  const ok: JsonObject = definition ? { description: 'OK', schema: { $ref: `${V2_REF}${definition}` } } : { description: 'OK' };
  const op = (verb: string, action: string, id: string, extra: JsonObject = {}): JsonObject => ({
    description: `${verb} ${type.kind}`,
    consumes: ['*/*'],
    produces: PRODUCES,
    schemes: ['https'],
    operationId: id,
    responses: { '200': ok, '401': { description: 'Unauthorized' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    ...extra,
  });
  const patch = (id: string): JsonObject =>
    op('partially update the specified', 'patch', id, {
      consumes: [...PATCH_TYPES],
      parameters: [
        { name: 'body', in: 'body', required: true, schema: { $ref: `${V2_REF}${PATCH}` } },
        ...PATCH_QUERY_PARAMETERS.map((p) => ({ name: p.name, in: 'query', description: p.description, type: p.type, uniqueItems: true })),
      ],
    });
  const scope = type.namespaced ? [pathParameter('namespace', 'object name and auth scope, such as for teams and projects')] : [];
  const named = [pathParameter('name', `name of the ${type.kind}`), ...scope];
  const paths: JsonObject = {};
  const item: JsonObject = { parameters: named };
  if (verbs.has('get')) item.get = op('read the specified', 'get', `read${name}`);
  if (verbs.has('update')) item.put = op('replace the specified', 'put', `replace${name}`);
  if (verbs.has('delete')) item.delete = op('delete a', 'delete', `delete${name}`);
  if (verbs.has('patch')) item.patch = patch(`patch${name}`);
  const list: JsonObject = { parameters: scope };
  if (verbs.has('list'))
    list.get = op('list or watch objects of kind', 'list', `list${name}`, { responses: { '200': { description: 'OK' } } });
  if (verbs.has('create')) list.post = op('create a', 'post', `create${name}`);
  if (verbs.has('deletecollection')) list.delete = op('delete collection of', 'deletecollection', `deleteCollection${name}`);
  if (Object.keys(list).length > 1) paths[collection] = list;
  if (Object.keys(item).length > 1) paths[`${collection}/{name}`] = item;
  if (v.statusSubresource) {
    paths[`${collection}/{name}/status`] = {
      parameters: named,
      get: op('read status of the specified', 'get', `read${name}Status`),
      put: op('replace status of the specified', 'put', `replace${name}Status`),
      patch: patch(`patch${name}Status`),
    };
  }
  return paths;
}

/** The Swagger 2.0 document of every served group/version. */
export function openApiV2Document(registry: Registry): JsonObject {
  const paths: JsonObject = {};
  const definitions: JsonObject = { [PATCH]: PATCH_DEFINITION };
  const addDefinitions = (root: string): void => {
    for (const [n, d] of Object.entries(builtinDefinitionsOf(root))) definitions[n] ??= toV2(d, false);
  };
  addDefinitions(OBJECT_META);
  for (const { group, versions } of registry.groupVersions()) {
    for (const version of versions) {
      for (const { type, version: v } of registry.typesIn(group, version)) {
        const builtin = type.custom ? undefined : builtinDefinitionName(type.group, version, type.kind);
        let definition: string | undefined;
        if (builtin) {
          addDefinitions(builtin);
          definition = builtin;
        } else if (type.custom) {
          definition = schemaName(type, version);
          definitions[definition] = customDefinition(type, version, v.schema);
        }
        Object.assign(paths, resourcePaths(type, v, definition));
      }
    }
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: String(versionInfo().gitVersion) },
    paths,
    definitions,
    securityDefinitions: {
      BearerToken: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' },
    },
    security: [{ BearerToken: [] }],
  };
}

/** An encoding of the document and its ETag (a SHA-512 of megabytes: taken once, not per request). */
interface Encoded {
  readonly body: Buffer;
  readonly etag: string;
}

interface Built {
  revision: number;
  json?: Encoded;
  protobuf?: Encoded;
  doc: JsonObject;
}

function encoded(body: Buffer): Encoded {
  return { body, etag: `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"` };
}

/** The built document and its two encodings, kept until the registry changes. */
export class OpenApiV2 {
  private built: Built | undefined;

  constructor(private readonly registry: Registry) {}

  private current(): Built {
    if (this.built?.revision !== this.registry.revision)
      this.built = { revision: this.registry.revision, doc: openApiV2Document(this.registry) };
    return this.built;
  }

  private jsonEncoded(): Encoded {
    const b = this.current();
    return (b.json ??= encoded(Buffer.from(JSON.stringify(b.doc))));
  }

  private async protobufEncoded(): Promise<Encoded> {
    const b = this.current();
    return (b.protobuf ??= encoded(await encodeOpenApiV2(b.doc)));
  }

  /** Answers GET/HEAD /openapi/v2 by the Accept header, with an ETag for conditional requests. */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('Vary', 'Accept');
    const format = negotiate(req.headers.accept);
    if (!format) throw notAcceptable(OPENAPI_V2_MEDIA_TYPES);
    const { body, etag } = format === 'json' ? this.jsonEncoded() : await this.protobufEncoded();
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ETag: etag });
      res.end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': format === 'json' ? 'application/json' : PROTOBUF_CONTENT_TYPE,
      'Content-Length': body.length,
      ETag: etag,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

/** The first acceptable form in the client's order of preference (q, then as listed), as goautoneg sorts. */
function negotiate(accept: string | undefined): 'json' | 'protobuf' | undefined {
  const clauses = (accept || '*/*')
    .split(',')
    .map((clause, index) => {
      const [range = '', ...params] = clause.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find((m) => m)?.[1];
      return { range: range.trim().toLowerCase(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { range } of clauses) {
    const [type = '', subtype = ''] = range.split('/');
    if (type !== 'application' && type !== '*') continue;
    if (subtype === 'json' || subtype === '*') return 'json';
    if (subtype === OPENAPI_V2_PROTOBUF.slice('application/'.length)) return 'protobuf';
  }
  return undefined;
}
