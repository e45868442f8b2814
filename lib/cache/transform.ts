/** Transforms applied to objects before they are cached: managedFields stripped or compacted. */
import type { KubernetesObject, V1ManagedFieldsEntry } from '@kubernetes/client-node';

/**
 * Rewrites each object before the informer caches and emits it (like controller-runtime's
 * TransformFunc): drop what the controller never reads to save memory. It must not change the
 * object's name, namespace or resourceVersion.
 */
export type ObjectTransform<T extends KubernetesObject = KubernetesObject> = (object: T) => T;

/**
 * The informers' default transform: `metadata.managedFields` keeps only the server-side-apply
 * entries of the main resource (the only ones rxkube reads: the dependent matcher, DR2); the
 * Update entries every write leaves, and entries of subresources such as status, are dropped.
 * They are often the larger part of a small object.
 */
export function compactManagedFields<T extends KubernetesObject>(object: T): T {
  const entries = object.metadata?.managedFields;
  if (entries === undefined) return object;
  const kept = entries.filter(isMainResourceApply);
  if (kept.length === entries.length) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata!;
  return { ...object, metadata: kept.length > 0 ? { ...metadata, managedFields: kept } : metadata };
}

/** Drops `metadata.managedFields` entirely (then the dependent matcher only compares desired ⊆ actual). */
export function stripManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

function isMainResourceApply(entry: V1ManagedFieldsEntry): boolean {
  return entry.operation === 'Apply' && (entry.subresource === undefined || entry.subresource === '');
}
