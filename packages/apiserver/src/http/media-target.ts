/**
 * The shape an answer is asked in: the Accept header's `as=Table`, `as=PartialObjectMetadata` or
 * `as=PartialObjectMetadataList` (group meta.k8s.io, v1 or v1beta1), as the real server negotiates
 * it: the first alternative it can serve wins; an alternative asking for a shape it does not know
 * is passed over.
 */
import { ApiError } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import { readMeta } from '../base/meta.js';

export type MediaTargetKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface MediaTarget {
  readonly kind: MediaTargetKind;
  /** meta.k8s.io/v1 unless the client asked for v1beta1. */
  readonly apiVersion: string;
}

const TARGETS: ReadonlySet<string> = new Set<MediaTargetKind>(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
const META_VERSIONS: ReadonlySet<string> = new Set(['v1', 'v1beta1']);

interface Alternative {
  readonly as: string | undefined;
  readonly group: string | undefined;
  readonly version: string | undefined;
}

function parseAlternative(text: string): Alternative {
  const params = new Map<string, string>();
  for (const part of text.split(';').slice(1)) {
    const eq = part.indexOf('=');
    if (eq > 0) params.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return { as: params.get('as'), group: params.get('g'), version: params.get('v') };
}

/**
 * The shape the Accept header asks for; undefined for the object itself. An Accept header whose
 * every alternative asks for a shape the server cannot give is 406, as apimachinery's negotiation
 * answers it.
 */
export function mediaTarget(accept: string | undefined): MediaTarget | undefined {
  if (!accept) return undefined;
  const alternatives = accept.split(',').map(parseAlternative);
  for (const alt of alternatives) {
    if (alt.as === undefined) return undefined;
    if (
      TARGETS.has(alt.as) &&
      (alt.group === undefined || alt.group === 'meta.k8s.io') &&
      (alt.version === undefined || META_VERSIONS.has(alt.version))
    ) {
      return { kind: alt.as as MediaTargetKind, apiVersion: `meta.k8s.io/${alt.version ?? 'v1'}` };
    }
  }
  throw new ApiError(
    406,
    'NotAcceptable',
    `only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    {},
  );
}

/** apimachinery's errNotAcceptable: the shape asked for does not fit what the request reads. */
function notThatShape(message: string): ApiError {
  return new ApiError(406, 'NotAcceptable', message, {});
}

/** An object's metadata alone (`meta.AsPartialObjectMetadata`): what a metadata informer caches. */
export function asPartialObjectMetadata(obj: JsonObject, apiVersion = 'meta.k8s.io/v1'): JsonObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: readMeta(obj) };
}

/** Go's name of the type a request reads, for the 406 messages (`*v1.ConfigMap`, `*unstructured.UnstructuredList`). */
export function goTypeName(kind: string, version: string, custom: boolean, list: boolean): string {
  if (custom) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  return `*${version}.${kind}${list ? 'List' : ''}`;
}

/** A GET in the shape asked for; a list shape for one object is 406. */
export function objectInShape(obj: JsonObject, target: MediaTarget, goType: string): JsonObject {
  if (target.kind === 'PartialObjectMetadataList')
    throw notThatShape(`you requested PartialObjectMetadataList, but the requested object is not a list (${goType})`);
  return asPartialObjectMetadata(obj, target.apiVersion);
}

/** A LIST in the shape asked for; the single-object shape for a list is 406. */
export function listInShape(list: JsonObject, items: readonly JsonObject[], target: MediaTarget, goType: string): JsonObject {
  if (target.kind === 'PartialObjectMetadata')
    throw notThatShape(`you requested PartialObjectMetadata, but the requested object is a list (${goType})`);
  const listMeta = readMeta(list);
  const metadata: JsonObject = {};
  for (const key of ['resourceVersion', 'continue', 'remainingItemCount'] as const) {
    const value = listMeta[key];
    if (value !== undefined && value !== '') metadata[key] = value;
  }
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: target.apiVersion,
    metadata,
    items: items.map((item) => asPartialObjectMetadata(item, target.apiVersion)),
  };
}
