/**
 * Deletion: preconditions, the garbage collector's finalizers by propagation policy (orphan,
 * foreground), graceful deletion (a deletionTimestamp in the future, shortened by a later delete),
 * a deletion that waits for its finalizers, and deletecollection one item after another.
 */
import { ApiError, conflict, deletePreconditionFailed, forbidden, MODIFIED_CONFLICT, notFound } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import { deepClone, deepEqual } from '../base/json.js';
import { finalizersOf, isBeingDeleted, metaOf, nameOf, namespaceOf, resourceVersionOf, timestamp, uidOf } from '../base/meta.js';
import { compileRequestFilter, type SelectorQuery } from './filter.js';
import { present, versionSchema } from './present.js';
import type { Resolved } from './registry.js';
import { groupResource, type WritePath, type WriteResult } from './write-path.js';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: PropagationPolicy;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Seconds until a graceful deletion (a bound Pod) completes; 0 deletes at once. */
  gracePeriodSeconds?: number;
}

export class Deletion {
  constructor(private readonly writes: WritePath) {}

  delete(r: Resolved, namespace: string, name: string, opts: DeleteOptions): WriteResult {
    const type = r.type;
    const gr = groupResource(type);
    const ns = type.namespaced ? namespace : '';
    const old = this.writes.store.get(type.key, ns, name);
    if (!old) throw notFound(gr, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== uidOf(old)) throw deletePreconditionFailed(type.group, type.kind, name, 'UID', pre.uid, uidOf(old));
    if (pre?.resourceVersion && pre.resourceVersion !== resourceVersionOf(old)) {
      throw deletePreconditionFailed(type.group, type.kind, name, 'ResourceVersion', pre.resourceVersion, resourceVersionOf(old));
    }
    if (type.key === '/namespaces' && ['default', 'kube-system', 'kube-public'].includes(name)) {
      throw forbidden(gr, name, 'this namespace may not be deleted');
    }
    const dryRun = opts.dryRun ?? false;
    const obj = deepClone(old);
    const meta = metaOf(obj);
    const firstMark = !isBeingDeleted(old);
    if (firstMark) type.strategy.prepareForDelete?.(obj, this.writes.strategyContext());
    // The garbage collector's finalizers follow the policy of the latest delete (deletionFinalizersForGarbageCollection).
    const current = finalizersOf(obj);
    const policy = opts.propagationPolicy;
    const orphan = policy ? policy === 'Orphan' : current.includes(ORPHAN_FINALIZER);
    const foreground = policy ? policy === 'Foreground' : current.includes(FOREGROUND_FINALIZER);
    const objFinalizers = [
      ...current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
      ...(orphan ? [ORPHAN_FINALIZER] : []),
      ...(foreground ? [FOREGROUND_FINALIZER] : []),
    ];
    const grace = type.strategy.gracePeriod?.(old, opts.gracePeriodSeconds) ?? 0;
    const pending = objFinalizers.length > 0 || grace > 0 || (type.strategy.blocksDeletion?.(obj) ?? false);
    if (!pending) {
      if (dryRun) return { status: 200, body: this.deletedBody(r, old) };
      const last = this.writes.store.remove(type.key, ns, name) ?? old;
      return { status: 200, body: this.deletedBody(r, last) };
    }
    if (objFinalizers.length) meta.finalizers = objFinalizers;
    else delete meta.finalizers;
    if (firstMark) {
      meta.deletionTimestamp = timestamp(new Date(this.writes.now().getTime() + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
      if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
    } else if (grace < Number(meta.deletionGracePeriodSeconds ?? 0)) {
      // A shorter grace period shortens a graceful deletion under way.
      meta.deletionTimestamp = timestamp(new Date(this.writes.now().getTime() + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
    }
    if (deepEqual(obj, old) || dryRun) return { status: 200, body: present(dryRun ? obj : old, r.apiVersion, versionSchema(r)) };
    const stored = this.writes.store.replace(type.key, this.writes.toStorage(type, obj));
    return { status: 200, body: present(stored, r.apiVersion, versionSchema(r)) };
  }

  private deletedBody(r: Resolved, last: JsonObject): JsonObject {
    if (r.type.returnDeletedObject) return present(last, r.apiVersion, versionSchema(r));
    const details: JsonObject = { name: nameOf(last), kind: r.type.plural, uid: uidOf(last) };
    if (r.type.group) details.group = r.type.group;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
  }

  /**
   * Deletes the matching objects one after another, as the real store's DeleteCollection; `admit`
   * (admission of each item's DELETE) refuses by throwing, which ends the collection there: the
   * items before it are deleted, the refused one and the rest stay, and the refusal is the answer.
   */
  async deleteCollection(
    r: Resolved,
    namespace: string | undefined,
    query: SelectorQuery,
    opts: DeleteOptions,
    admit?: (item: JsonObject) => Promise<void>,
  ): Promise<JsonObject> {
    const filter = compileRequestFilter(r, query);
    const items = this.writes.store.list(r.type.key, r.type.namespaced ? namespace : undefined).filter((o) => filter.matches(o));
    const deleted: JsonObject[] = [];
    for (const listed of items) {
      const item = admit ? await this.admittedItem(r, listed, admit) : listed;
      if (!item) continue;
      try {
        const res = this.delete(r, namespaceOf(item), nameOf(item), { dryRun: opts.dryRun, propagationPolicy: opts.propagationPolicy });
        deleted.push(res.body.kind === 'Status' ? present(item, r.apiVersion, versionSchema(r)) : res.body);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return {
      kind: r.type.listKind,
      apiVersion: r.apiVersion,
      metadata: { resourceVersion: String(this.writes.store.resourceVersion) },
      items: deleted,
    };
  }

  /**
   * The item of a collection as admission allowed it, undefined when gone. Admission answers over
   * the network: an item changed or replaced meanwhile is admitted again, as the real store runs a
   * delete's validation again when the object changed under it, so only what admission saw goes.
   */
  private async admittedItem(r: Resolved, listed: JsonObject, admit: (item: JsonObject) => Promise<void>): Promise<JsonObject | undefined> {
    const read = (): JsonObject | undefined => this.writes.store.get(r.type.key, namespaceOf(listed), nameOf(listed));
    for (let attempt = 1, item = read(); item; attempt++) {
      await admit(present(item, r.apiVersion, versionSchema(r)));
      const now = read();
      if (!now || resourceVersionOf(now) === resourceVersionOf(item)) return now;
      if (attempt >= 3) throw conflict(groupResource(r.type), nameOf(item), MODIFIED_CONFLICT);
      item = now;
    }
    return undefined;
  }
}
