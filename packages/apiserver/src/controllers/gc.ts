/**
 * Garbage collection by ownerReferences, after kube-controller-manager's garbage collector:
 * - background: when an owner is gone, dependents without another live owner are deleted;
 * - foreground: an owner with the foregroundDeletion finalizer has its dependents deleted and
 *   loses the finalizer once no dependent with blockOwnerDeletion remains;
 * - orphan: an owner with the orphan finalizer has its references removed from its dependents,
 *   then loses the finalizer;
 * - a dependent whose owners do not exist (wrong uid, never created) is deleted.
 */
import type { DeleteAdmission } from '../api/admission-port.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type PropagationPolicy } from '../api/deletion.js';
import type { InternalWrites } from '../api/internal-writes.js';
import { isJsonObject, type JsonObject } from '../base/json.js';
import {
  finalizersOf,
  isBeingDeleted,
  metaOf,
  nameOf,
  namespaceOf,
  ownerRefsOf,
  resourceVersionOf,
  uidOf,
  type OwnerRef,
} from '../base/meta.js';
import { WorkQueue } from '../base/work-queue.js';
import type { Registry } from '../api/registry.js';
import type { ObjectRef, Store, StoreEvent } from '../storage/store.js';

const GC_MANAGER = 'generic-garbage-collector';
/** The kube-system ServiceAccount the real garbage collector deletes as. */
const GC_ACCOUNT = 'generic-garbage-collector';
/** Deletes the collector asks admission about at once (the real one runs 20 delete workers). */
const GC_WORKERS = 20;

function refKey(kind: string, r: ObjectRef): string {
  return `${kind}\u0000${r.resource}\u0000${r.namespace}\u0000${r.name}`;
}

function ownersChanged(e: StoreEvent): boolean {
  const before = e.prev ? ownerRefsOf(e.prev).map((r) => r.uid) : [];
  const after = ownerRefsOf(e.object).map((r) => r.uid);
  return before.length !== after.length || before.some((u, i) => u !== after[i]);
}

export class GarbageCollector {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;
  /** Uids of dependents whose DELETE admission is deciding on. */
  private readonly admitting = new Set<string>();
  /** Admissions under way, at most GC_WORKERS; the others wait their turn. */
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly admission?: DeleteAdmission,
  ) {
    this.queue = new WorkQueue('garbage collector', (key) => this.process(key));
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    const ref: ObjectRef = { resource: e.resource, namespace: namespaceOf(e.object), name: nameOf(e.object) };
    if (e.type === 'DELETED') {
      this.queue.add(`gone\u0000${uidOf(e.object)}`);
      // A dependent that went away may unblock a foreground owner.
      for (const owner of ownerRefsOf(e.object)) this.queueOwnerByUid(owner.uid);
      return;
    }
    const finalizers = finalizersOf(e.object);
    if (isBeingDeleted(e.object) && (finalizers.includes(FOREGROUND_FINALIZER) || finalizers.includes(ORPHAN_FINALIZER))) {
      this.queue.add(refKey('owner', ref));
    }
    if (ownerRefsOf(e.object).length > 0 && (e.type === 'ADDED' || ownersChanged(e))) this.queue.add(refKey('dangling', ref));
  }

  private queueOwnerByUid(uid: string): void {
    const owner = this.store.resolveUid(uid);
    if (owner) this.queue.add(refKey('owner', owner));
  }

  private process(key: string): void {
    const [kind = '', a = '', b = '', c = ''] = key.split('\u0000');
    if (kind === 'gone') this.ownerGone(a);
    else if (kind === 'owner') this.processDeletingOwner({ resource: a, namespace: b, name: c });
    else if (kind === 'dangling') this.processDependent({ resource: a, namespace: b, name: c });
  }

  /** The live object an owner reference points to, if it exists (uid, kind and name all match). */
  private ownerOf(ref: OwnerRef, dependent: JsonObject): JsonObject | undefined {
    const where = this.store.resolveUid(ref.uid);
    if (!where) return undefined;
    const type = this.registry.get(where.resource);
    if (!type || type.kind !== ref.kind) return undefined;
    if (type.namespaced && where.namespace !== namespaceOf(dependent)) return undefined;
    const owner = this.store.get(where.resource, where.namespace, where.name);
    return owner && nameOf(owner) === ref.name ? owner : undefined;
  }

  private ownerGone(uid: string): void {
    for (const dep of this.store.dependentsOf(uid)) this.processDependent(dep);
  }

  /** Deletes a dependent without live owners, or removes references to owners that are gone. */
  private processDependent(ref: ObjectRef): void {
    const obj = this.store.get(ref.resource, ref.namespace, ref.name);
    if (!obj) return;
    const refs = ownerRefsOf(obj);
    if (refs.length === 0) return;
    const live = refs.filter((r) => this.ownerOf(r, obj) !== undefined);
    if (live.length === refs.length) return;
    if (live.length === 0) {
      if (isBeingDeleted(obj)) return;
      const finalizers = finalizersOf(obj);
      const policy: PropagationPolicy = finalizers.includes(ORPHAN_FINALIZER)
        ? 'Orphan'
        : finalizers.includes(FOREGROUND_FINALIZER)
          ? 'Foreground'
          : 'Background';
      this.deleteDependent(ref, obj, policy, refKey('dangling', ref));
      return;
    }
    const liveUids = new Set(live.map((r) => r.uid));
    this.removeOwnerRefs(ref, (uid) => !liveUids.has(uid));
  }

  private removeOwnerRefs(ref: ObjectRef, drop: (uid: string) => boolean): void {
    this.writes.mutate(
      ref.resource,
      ref.namespace,
      ref.name,
      (obj) => {
        const meta = metaOf(obj);
        const refs = Array.isArray(meta.ownerReferences) ? meta.ownerReferences : [];
        const kept = refs.filter((r) => !(isJsonObject(r) && typeof r.uid === 'string' && drop(r.uid)));
        if (kept.length === refs.length) return false;
        if (kept.length) meta.ownerReferences = kept;
        else delete meta.ownerReferences;
        return true;
      },
      { manager: GC_MANAGER },
    );
  }

  private removeFinalizer(ref: ObjectRef, finalizer: string): void {
    this.writes.mutate(
      ref.resource,
      ref.namespace,
      ref.name,
      (obj) => {
        const finalizers = finalizersOf(obj);
        if (!finalizers.includes(finalizer)) return false;
        const rest = finalizers.filter((f) => f !== finalizer);
        const meta = metaOf(obj);
        if (rest.length) meta.finalizers = rest;
        else delete meta.finalizers;
        return true;
      },
      { manager: GC_MANAGER },
    );
  }

  private processDeletingOwner(ref: ObjectRef): void {
    const owner = this.store.get(ref.resource, ref.namespace, ref.name);
    if (!owner || !isBeingDeleted(owner)) return;
    const uid = uidOf(owner);
    const finalizers = finalizersOf(owner);
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dep of this.store.dependentsOf(uid)) this.removeOwnerRefs(dep, (u) => u === uid);
      this.removeFinalizer(ref, ORPHAN_FINALIZER);
      return;
    }
    if (!finalizers.includes(FOREGROUND_FINALIZER)) return;
    for (const depRef of this.store.dependentsOf(uid)) {
      const dep = this.store.get(depRef.resource, depRef.namespace, depRef.name);
      if (!dep || isBeingDeleted(dep)) continue;
      const otherLiveOwners = ownerRefsOf(dep).filter((r) => r.uid !== uid && this.ownerOf(r, dep) && !this.isForegroundDeleting(r, dep));
      if (otherLiveOwners.length > 0) {
        this.removeOwnerRefs(depRef, (u) => u === uid);
        continue;
      }
      const hasDependents = this.store.dependentsOf(uidOf(dep)).length > 0;
      this.deleteDependent(depRef, dep, hasDependents ? 'Foreground' : 'Background', refKey('owner', ref));
    }
    const blocking = this.store.dependentsOf(uid).filter((depRef) => {
      const dep = this.store.get(depRef.resource, depRef.namespace, depRef.name);
      return dep !== undefined && ownerRefsOf(dep).some((r) => r.uid === uid && r.blockOwnerDeletion === true);
    });
    if (blocking.length === 0) this.removeFinalizer(ref, FOREGROUND_FINALIZER);
  }

  /**
   * Deletes a dependent through admission, as the real collector deletes through the API: refused,
   * it stays, and `retryKey` is processed again later (with a growing delay, as the real one retries).
   */
  private deleteDependent(ref: ObjectRef, dep: JsonObject, policy: PropagationPolicy, retryKey: string): void {
    const uid = uidOf(dep);
    const r = this.writes.resolveKey(ref.resource);
    if (!r || !this.admission?.covers(r, dep)) {
      this.writes.deleteInternal(ref.resource, ref.namespace, ref.name, policy, uid);
      return;
    }
    if (this.admitting.has(uid)) return;
    this.admitting.add(uid);
    const admission = this.admission;
    const decided = (refusal: unknown): void => {
      this.admitting.delete(uid);
      this.running--;
      this.waiting.shift()?.();
      if (this.closed) return;
      if (refusal) {
        this.queue.retryLater(retryKey);
        return;
      }
      this.queue.forget(retryKey);
      // Admission answered for the object as it was: one changed meanwhile (an owner added) is looked at again.
      const now = this.store.get(ref.resource, ref.namespace, ref.name);
      if (now && resourceVersionOf(now) !== resourceVersionOf(dep)) this.queue.add(retryKey);
      else this.writes.deleteInternal(ref.resource, ref.namespace, ref.name, policy, uid);
    };
    const start = (): void => {
      this.running++;
      admission.admit(r, dep, GC_ACCOUNT).then(decided, (err: unknown) => {
        console.error(
          `rxkube apiserver: garbage collector failed to admit the delete of ${ref.resource} ${ref.namespace}/${ref.name}`,
          err,
        );
        decided(err ?? true);
      });
    };
    if (this.running < GC_WORKERS) start();
    else this.waiting.push(start);
  }

  private isForegroundDeleting(r: OwnerRef, dep: JsonObject): boolean {
    const owner = this.ownerOf(r, dep);
    return owner !== undefined && isBeingDeleted(owner) && finalizersOf(owner).includes(FOREGROUND_FINALIZER);
  }

  close(): void {
    this.closed = true;
    this.waiting.splice(0);
    this.unsubscribe();
    this.queue.close();
  }
}
