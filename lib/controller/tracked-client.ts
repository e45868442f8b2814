import type { KubernetesObject } from '@kubernetes/client-node';
import { refOf, type ApplyOptions, type ObjectRef, type ResourceClient } from '../kube/index.js';
import type { ReadYourWritesCache } from '../sources/index.js';

/** A resource client whose writes default to the controller's field manager (apply needs no options). */
export interface TrackedClient<T extends KubernetesObject> extends Omit<ResourceClient<T>, 'apply' | 'applyStatus'> {
  apply(obj: T, options?: Partial<ApplyOptions>): Promise<T>;
  applyStatus(obj: T, options?: Partial<ApplyOptions>): Promise<T>;
}

/**
 * A resource client whose writes go through a read-your-writes cache (UP3, ES4): the next run
 * reads what was written, and the watch event a write causes triggers no run. Writes default
 * to the controller's field manager.
 */
export function trackedClient<T extends KubernetesObject>(
  client: ResourceClient<T>,
  cache: ReadYourWritesCache<T>,
  fieldManager: string,
): TrackedClient<T> {
  const track = <R extends T | undefined>(ref: ObjectRef, write: () => Promise<R>): Promise<R> => cache.trackWrite(ref, write);
  return {
    ...client,
    create: (obj, options) => track(refOf(obj), () => client.create(obj, { fieldManager, ...options })),
    replace: (obj, options) => track(refOf(obj), () => client.replace(obj, { fieldManager, ...options })),
    replaceStatus: (obj, options) => track(refOf(obj), () => client.replaceStatus(obj, { fieldManager, ...options })),
    delete: (ref, options) => track(ref, () => client.delete(ref, options)),
    apply: (obj, options) => track(refOf(obj), () => client.apply(obj, { ...options, fieldManager: options?.fieldManager ?? fieldManager })),
    applyStatus: (obj, options) => track(refOf(obj), () => client.applyStatus(obj, { ...options, fieldManager: options?.fieldManager ?? fieldManager })),
    mergePatch: (ref, patch, options) => track(ref, () => client.mergePatch(ref, patch, { fieldManager, ...options })),
    mergePatchStatus: (ref, patch, options) => track(ref, () => client.mergePatchStatus(ref, patch, { fieldManager, ...options })),
    jsonPatch: (ref, ops, options) => track(ref, () => client.jsonPatch(ref, ops, { fieldManager, ...options })),
    jsonPatchStatus: (ref, ops, options) => track(ref, () => client.jsonPatchStatus(ref, ops, { fieldManager, ...options })),
    patch: (ref, body, options) => track(ref, () => client.patch(ref, body, { ...options, fieldManager: options.fieldManager ?? fieldManager })),
  };
}
