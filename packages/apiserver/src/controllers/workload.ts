/**
 * What the simulated workload controllers share: owner references, the pods an object
 * controls, pod readiness, status conditions and counts as the real controllers write them.
 */
import type { Store, StoreEvent } from '../storage/store.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, labelsOf, nameOf, namespaceOf, ownerRefsOf, readMeta, uidOf } from '../base/meta.js';
import { labelSelectorFromObject, matchesLabelSelector } from '../grammar/label-selector.js';
import { Timers, type SimulationClock } from './clock.js';
import { WorkQueue } from '../base/work-queue.js';

export const PODS_KEY = '/pods';
export const CONTROLLER_MANAGER = 'kube-controller-manager';

export function num(v: JsonValue | undefined, fallback = 0): number {
  return typeof v === 'number' ? v : fallback;
}

/** The uid of the object's controller (the owner reference with controller: true). */
export function controllerUid(obj: JsonObject): string | undefined {
  return ownerRefsOf(obj).find((r) => r.controller)?.uid;
}

export function controllerRef(owner: JsonObject): JsonObject {
  return {
    apiVersion: String(owner.apiVersion),
    kind: String(owner.kind),
    name: nameOf(owner),
    uid: uidOf(owner),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * The `namespace/name` of the `ownerKey` object a store event asks to sync: the object itself
 * (unless it was deleted), or the controller of a `childKey` object, found by uid in the store's
 * index rather than by listing every owner on every child event.
 */
export function ownerToSync(store: Store, e: StoreEvent, ownerKey: string, childKey: string): string | undefined {
  if (e.resource === ownerKey) return e.type === 'DELETED' ? undefined : `${namespaceOf(e.object)}/${nameOf(e.object)}`;
  if (e.resource !== childKey) return undefined;
  const uid = controllerUid(e.object);
  const ref = uid === undefined ? undefined : store.resolveUid(uid);
  return ref?.resource === ownerKey ? `${ref.namespace}/${ref.name}` : undefined;
}

/**
 * Pods one owner may create per second of the simulation's clock, as the real ReplicaSet and Job
 * controllers create at most 500 per sync, paced by their client's rate limit: a huge `replicas`
 * (up to 2^31-1) fills the store over many seconds, and the server answers meanwhile.
 */
export const POD_BURST = 500;
const BURST_WINDOW_MS = 1000;

/** How many of the Pods a sync wants it may create now; the rest come with a resync in the next window. */
export interface PodBudget {
  take(wanted: number): number;
}

/**
 * The loop of a workload controller: `reconcile(namespace, name, budget)` for each `ownerKey`
 * object that changed, or whose controlled `childKey` object did, once per batch of events
 * (WorkQueue); each sync gets a Pod budget. `resumeAll` queues every stored owner.
 */
export class OwnerSyncLoop {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;
  private readonly windows = new Map<string, { readonly start: number; used: number }>();
  private readonly resyncs: Timers;

  constructor(
    private readonly store: Store,
    name: string,
    private readonly ownerKey: string,
    childKey: string,
    reconcile: (namespace: string, name: string, budget: PodBudget) => void,
    private readonly clock: SimulationClock,
  ) {
    this.resyncs = new Timers(clock);
    this.queue = new WorkQueue(name, (key) => {
      const [ns = '', objectName = ''] = key.split('/');
      reconcile(ns, objectName, { take: (wanted) => this.take(key, wanted) });
    });
    this.unsubscribe = store.onEvent((e) => {
      const key = ownerToSync(store, e, ownerKey, childKey);
      if (key) this.queue.add(key);
    });
  }

  resumeAll(): void {
    for (const owner of this.store.list(this.ownerKey)) this.queue.add(`${namespaceOf(owner)}/${nameOf(owner)}`);
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
    this.resyncs.close();
  }

  private take(key: string, wanted: number): number {
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (!window || now - window.start >= BURST_WINDOW_MS) {
      if (this.windows.size > 1000) this.forgetPastWindows(now);
      window = { start: now, used: 0 };
      this.windows.set(key, window);
    }
    const granted = Math.max(0, Math.min(wanted, POD_BURST - window.used));
    window.used += granted;
    if (granted < wanted && !this.resyncs.has(key)) {
      this.resyncs.set(key, window.start + BURST_WINDOW_MS - now, () => {
        this.windows.delete(key);
        this.queue.add(key);
      });
    }
    return granted;
  }

  private forgetPastWindows(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= BURST_WINDOW_MS && !this.resyncs.has(key)) this.windows.delete(key);
  }
}

/** The objects of `key` in the owner's namespace that the owner controls. */
export function controlled(store: Store, key: string, owner: JsonObject): JsonObject[] {
  const uid = uidOf(owner);
  return store.list(key, String(readMeta(owner).namespace ?? '')).filter((o) => controllerUid(o) === uid);
}

/** Whether the object's labels match a LabelSelector object (an invalid or missing selector matches nothing). */
export function selects(selector: JsonValue | undefined, obj: JsonObject): boolean {
  if (!isJsonObject(selector)) return false;
  try {
    const parsed = labelSelectorFromObject(selector);
    return parsed.requirements.length > 0 && matchesLabelSelector(parsed, labelsOf(obj));
  } catch {
    return false;
  }
}

export function isPodReady(pod: JsonObject): boolean {
  const conditions = getPath(pod, ['status', 'conditions']);
  return Array.isArray(conditions) && conditions.some((c) => isJsonObject(c) && c.type === 'Ready' && c.status === 'True');
}

export function podPhase(pod: JsonObject): string {
  const phase = getPath(pod, ['status', 'phase']);
  return typeof phase === 'string' ? phase : 'Pending';
}

/** A pod that counts as a replica: not finished and not being deleted. */
export function isActivePod(pod: JsonObject): boolean {
  const phase = podPhase(pod);
  return phase !== 'Succeeded' && phase !== 'Failed' && !isBeingDeleted(pod);
}

/** A condition as the workload controllers write it; times kept while status and reason stay. */
export function condition(
  prev: JsonValue | undefined,
  type: string,
  status: string,
  reason: string,
  message: string,
  now: string,
  withUpdateTime = true,
): JsonObject {
  const old = Array.isArray(prev) ? prev.find((c) => isJsonObject(c) && c.type === type) : undefined;
  const same = isJsonObject(old) && old.status === status;
  const unchanged = same && old.reason === reason && old.message === message;
  const out: JsonObject = { type, status };
  if (withUpdateTime) out.lastUpdateTime = unchanged && isJsonObject(old) ? (old.lastUpdateTime ?? now) : now;
  else out.lastProbeTime = null;
  out.lastTransitionTime = same && isJsonObject(old) ? (old.lastTransitionTime ?? now) : now;
  out.reason = reason;
  out.message = message;
  return out;
}

/** Sets counts the way the real status structs serialize them: zero counts omitted (omitempty). */
export function setCounts(status: JsonObject, counts: Record<string, number>): void {
  for (const [k, v] of Object.entries(counts)) {
    if (v > 0) status[k] = v;
    else delete status[k];
  }
}

/** Applies `status` if it differs; returns whether the object changed. */
export function statusChanged(obj: JsonObject, status: JsonObject): boolean {
  if (deepEqual(obj.status ?? {}, status)) return false;
  obj.status = status;
  return true;
}

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A short stable hash of a pod template, like pod-template-hash (FNV-1a, safe alphabet). */
export function templateHash(template: JsonValue | undefined): string {
  let h = 0x811c9dc5;
  const text = JSON.stringify(template ?? null);
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let out = '';
  for (let i = 0; i < 10; i++) {
    out += SAFE[h % SAFE.length];
    h = Math.floor(h / SAFE.length) ^ (i * 7919);
    h >>>= 0;
  }
  return out;
}

/** A pod from a template: labels and annotations of the template, the owner as controller. */
export function podFromTemplate(template: JsonValue | undefined, owner: JsonObject, meta: JsonObject): JsonObject {
  const t = isJsonObject(template) ? template : {};
  const tmeta = isJsonObject(t.metadata) ? t.metadata : {};
  const labels = isJsonObject(tmeta.labels) ? { ...tmeta.labels } : {};
  const metadata: JsonObject = { labels, ...meta, ownerReferences: [controllerRef(owner)] };
  if (isJsonObject(tmeta.annotations)) metadata.annotations = { ...tmeta.annotations };
  return { metadata, spec: structuredClone(isJsonObject(t.spec) ? t.spec : {}) };
}
