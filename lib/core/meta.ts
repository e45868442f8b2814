/** Helpers over object metadata and plain JSON records: one home for each. */

/** A plain object (not null, not an array): what JSON objects and Kubernetes objects are. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * True when the object is marked for deletion: `metadata.deletionTimestamp` is set — an RFC 3339
 * string as the API server sends it, or a Date as client-node's typed models hold it. Absent,
 * null or '' (which the server never sends) is not marked.
 */
export function isMarkedForDeletion(object: unknown): boolean {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  const timestamp = isRecord(metadata) ? metadata['deletionTimestamp'] : undefined;
  return timestamp instanceof Date || (typeof timestamp === 'string' && timestamp !== '');
}

/**
 * EP6 for one update of an object: true if the change may need a run — the generation grew, the
 * old object had none, or the object was just marked for deletion. Objects that cannot be
 * compared (one missing) count as changed.
 */
export function generationGrew(oldObject: unknown, newObject: unknown): boolean {
  if (oldObject === undefined || newObject === undefined) return true;
  if (isMarkedForDeletion(newObject) && !isMarkedForDeletion(oldObject)) return true;
  const before = metadataOf(oldObject)?.['generation'];
  const after = metadataOf(newObject)?.['generation'];
  if (typeof before !== 'number' || typeof after !== 'number') return true;
  return after > before;
}

/**
 * EP6, the one generation rule, for one primary update: true if it needs a run — the generation
 * grew (or cannot be compared), the object was just marked for deletion, or `finalizerNeeded` says
 * it should carry the controller's finalizer and does not. `Primaries` and `generationChanged` apply it.
 */
export function updateNeedsRun<T>(oldObject: T | undefined, newObject: T | undefined, finalizerNeeded?: (object: T) => boolean): boolean {
  if (newObject !== undefined && finalizerNeeded?.(newObject) === true) return true;
  return generationGrew(oldObject, newObject);
}

function metadataOf(object: unknown): Record<string, unknown> | undefined {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  return isRecord(metadata) ? metadata : undefined;
}
