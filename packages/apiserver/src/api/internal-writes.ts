/**
 * The writes of the controllers that run inside the server (garbage collection, namespaces, CRDs,
 * the simulated workloads): through the same object rules as a client's, as the server's own
 * field manager, with a refusal returned rather than thrown, since a controller retries on events.
 */
import { ApiError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone } from '../base/json.js';
import type { Deletion, PropagationPolicy } from './deletion.js';
import type { Resolved } from './registry.js';
import type { Subresources } from './subresources.js';
import type { WriteOptions, WritePath } from './write-path.js';

const SYSTEM_MANAGER = 'kube-controller-manager';

export class InternalWrites {
  constructor(
    private readonly writes: WritePath,
    private readonly deletion: Deletion,
    private readonly subresources: Subresources,
  ) {}

  /** Resolves the storage version of a type by key. */
  resolveKey(key: string): Resolved | undefined {
    return this.writes.resolveKey(key);
  }

  /**
   * Changes a stored object as a controller would: `change` edits a copy (return false to skip).
   * Errors (the object is gone, validation) are returned, not thrown: controllers retry on events.
   */
  mutate(
    key: string,
    namespace: string,
    name: string,
    change: (obj: JsonObject) => boolean | void,
    opts: { subresource?: string; manager?: string } = {},
  ): JsonObject | undefined {
    const r = this.writes.resolveKey(key);
    const old = this.writes.store.get(key, namespace, name);
    if (!r || !old) return undefined;
    const copy = deepClone(old);
    if (change(copy) === false) return old;
    try {
      return this.writes.commitUpdate(r, old, copy, {
        manager: opts.manager ?? SYSTEM_MANAGER,
        dryRun: false,
        subresource: opts.subresource,
      });
    } catch (err) {
      if (err instanceof ApiError) return undefined;
      throw err;
    }
  }

  /** Deletes as a controller would; a missing object is not an error. */
  deleteInternal(key: string, namespace: string, name: string, policy: PropagationPolicy = 'Background', uid?: string): void {
    const r = this.writes.resolveKey(key);
    if (!r) return;
    try {
      this.deletion.delete(r, namespace, name, { propagationPolicy: policy, preconditions: uid ? { uid } : undefined });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  /** Ends a graceful deletion (the kubelet's delete with grace period 0 once the pod has stopped). */
  forceDeleteInternal(key: string, namespace: string, name: string, uid: string): void {
    const r = this.writes.resolveKey(key);
    if (!r) return;
    try {
      this.deletion.delete(r, namespace, name, { preconditions: { uid }, gracePeriodSeconds: 0 });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  /**
   * Creates an object as the server itself (default namespaces, the simulated controllers);
   * errors (a terminating namespace, a name taken) are returned as undefined, like mutate's.
   */
  createInternal(key: string, obj: JsonObject, manager = SYSTEM_MANAGER): JsonObject | undefined {
    const created = this.tryCreateInternal(key, obj, manager);
    return created instanceof ApiError ? undefined : created;
  }

  /** createInternal that hands back the refusal, for a controller that reports it (a FailedCreate Event). */
  tryCreateInternal(key: string, obj: JsonObject, manager = SYSTEM_MANAGER): JsonObject | ApiError | undefined {
    const r = this.writes.resolveKey(key);
    if (!r) return undefined;
    try {
      return this.writes.createObject(r, this.writes.normalizeBody(r, obj), manager, false, undefined);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
  }

  /** Binds a Pod to a Node as the scheduler does, through pods/binding. */
  bind(namespace: string, name: string, binding: JsonValue, opts: WriteOptions & { now?: string }): JsonObject {
    return this.subresources.bind(namespace, name, binding, opts);
  }
}
