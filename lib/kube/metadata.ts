/**
 * Metadata-only reads: what client-go's metadata client asks for (the Accept headers below), and
 * the shape it gets back. A cache of these holds names, labels, annotations, owner references,
 * finalizers and deletion marks, not the objects' data.
 */
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';

/** An object's metadata alone, as the server sends it for a metadata-only read (meta.k8s.io/v1). */
export interface PartialObjectMetadata extends KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** A LIST's Accept header for metadata only. The plain JSON after it is for a server that cannot. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** A GET's or WATCH's Accept header for metadata only. */
export const METADATA_OBJECT_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/**
 * The metadata of what the server sent: as it is when the server gave metadata only, and cut down
 * to it when the server sent the whole object (one that does not know the media type), so that
 * the cache never holds more than it asked for.
 */
export function toPartialObjectMetadata(object: KubernetesObject): PartialObjectMetadata {
  if (object.kind === 'PartialObjectMetadata') return object;
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', ...(object.metadata ? { metadata: object.metadata } : {}) };
}
