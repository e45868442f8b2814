/** Identities of Kubernetes objects: a name and, when namespaced, a namespace, and the key they are stored under. */
import { isRecord } from './meta.js';

/** Identifies one Kubernetes object (or any keyed resource): its name, and namespace if namespaced. */
export interface ResourceID {
  readonly name: string;
  /** Absent or undefined for a cluster-scoped resource (so `metadata.namespace` can be passed as it is). */
  readonly namespace?: string | undefined;
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

function describeShape(value: unknown): string {
  if (!isRecord(value)) return String(value);
  return `an object with keys ${Object.keys(value).join(', ') || '(none)'}`;
}
