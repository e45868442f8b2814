/** Identifies one Kubernetes object (or any keyed resource): its name, and namespace if namespaced. */
export interface ResourceID {
  readonly name: string;
  readonly namespace?: string;
}

/** The map key of a ResourceID: `namespace/name`, or `name` for cluster-scoped resources. */
export function resourceKey(id: ResourceID): string {
  return id.namespace ? `${id.namespace}/${id.name}` : id.name;
}

/** The ResourceID of an object from its `metadata.name` and `metadata.namespace`. */
export function resourceIdOf(object: unknown): ResourceID {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  const name = isRecord(metadata) ? metadata['name'] : undefined;
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`resourceIdOf: the object has no metadata.name (got ${describeShape(object)})`);
  }
  const namespace = isRecord(metadata) ? metadata['namespace'] : undefined;
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
    throw new TypeError(`resourceIdOf: metadata.namespace of ${name} must be a string`);
  }
  return typeof namespace === 'string' && namespace !== '' ? { name, namespace } : { name };
}

/** True when `metadata.deletionTimestamp` is set: the object is being deleted, held by finalizers. */
export function isMarkedForDeletion(object: unknown): boolean {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  const timestamp = isRecord(metadata) ? metadata['deletionTimestamp'] : undefined;
  return timestamp !== undefined && timestamp !== null && timestamp !== '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function describeShape(value: unknown): string {
  if (!isRecord(value)) return String(value);
  return `an object with keys ${Object.keys(value).join(', ') || '(none)'}`;
}
