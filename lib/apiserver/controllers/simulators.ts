/**
 * Simulated built-in controllers, like kwok: without nodes or pods, a Deployment's status moves
 * the way the real deployment controller moves it — observedGeneration and Progressing at once,
 * then replicas ready and available (Available=True, NewReplicaSetAvailable) after a delay.
 */
import type { ApiCore } from '../api/core.js';
import type { JsonObject, JsonValue } from '../api/json.js';
import { isJsonObject } from '../api/json.js';
import { getPath, isBeingDeleted, nameOf, namespaceOf, readMeta, timestamp } from '../api/meta.js';
import type { Store, StoreEvent } from '../api/store.js';

export interface SimulateOptions {
  deployments?: {
    /** Milliseconds from a deployment's new generation until its replicas are ready (default 0). */
    readyAfterMs?: number;
  };
}

const DEPLOYMENTS_KEY = 'apps/deployments';
const CONTROLLER = 'kube-controller-manager';
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A short stable hash of the pod template, like pod-template-hash. */
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

function num(v: JsonValue | undefined, fallback = 0): number {
  return typeof v === 'number' ? v : fallback;
}

function maxUnavailable(obj: JsonObject, replicas: number): number {
  const v = getPath(obj, ['spec', 'strategy', 'rollingUpdate', 'maxUnavailable']);
  if (typeof v === 'number') return v;
  const pct = typeof v === 'string' && v.endsWith('%') ? Number(v.slice(0, -1)) : 25;
  return Math.floor((replicas * pct) / 100);
}

function condition(prev: JsonValue | undefined, type: string, status: string, reason: string, message: string, now: string): JsonObject {
  const old = Array.isArray(prev) ? prev.find((c) => isJsonObject(c) && c.type === type) : undefined;
  const transition = isJsonObject(old) && old.status === status ? (old.lastTransitionTime ?? now) : now;
  const unchanged = isJsonObject(old) && old.status === status && old.reason === reason && old.message === message;
  return {
    type,
    status,
    lastUpdateTime: unchanged && isJsonObject(old) ? (old.lastUpdateTime ?? now) : now,
    lastTransitionTime: transition,
    reason,
    message,
  };
}

function setCounts(status: JsonObject, counts: Record<string, number>): void {
  for (const [k, v] of Object.entries(counts)) {
    // The real status omits zero counts (omitempty).
    if (v > 0) status[k] = v;
    else delete status[k];
  }
}

export class DeploymentSimulator {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly readyAfterMs: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly core: ApiCore,
    private readonly store: Store,
    options: NonNullable<SimulateOptions['deployments']>,
  ) {
    this.readyAfterMs = options.readyAfterMs ?? 0;
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  /** Picks up deployments that exist already (loaded state). */
  resumeAll(): void {
    for (const d of this.store.list(DEPLOYMENTS_KEY)) this.consider(d);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource !== DEPLOYMENTS_KEY) return;
    const key = `${namespaceOf(e.object)}/${nameOf(e.object)}`;
    if (e.type === 'DELETED') {
      this.clearTimer(key);
      return;
    }
    this.consider(e.object);
  }

  private consider(obj: JsonObject): void {
    if (isBeingDeleted(obj)) return;
    const generation = num(readMeta(obj).generation, 1);
    if (num(getPath(obj, ['status', 'observedGeneration']), 0) === generation) return;
    const ns = namespaceOf(obj);
    const name = nameOf(obj);
    setImmediate(() => this.progress(ns, name, generation));
  }

  private clearTimer(key: string): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
  }

  private progress(ns: string, name: string, generation: number): void {
    const key = `${ns}/${name}`;
    const updated = this.core.mutate(
      DEPLOYMENTS_KEY,
      ns,
      name,
      (obj) => {
        if (num(readMeta(obj).generation, 1) !== generation || isBeingDeleted(obj)) return false;
        const now = timestamp();
        const replicas = num(getPath(obj, ['spec', 'replicas']), 1);
        const prev = isJsonObject(obj.status) ? obj.status : {};
        const available = Math.min(num(prev.availableReplicas), replicas);
        const status: JsonObject = { ...prev, observedGeneration: generation };
        setCounts(status, {
          replicas,
          updatedReplicas: replicas,
          readyReplicas: available,
          availableReplicas: available,
          unavailableReplicas: replicas - available,
        });
        const rs = `${name}-${templateHash(getPath(obj, ['spec', 'template']))}`;
        const minAvailable = available >= replicas - maxUnavailable(obj, replicas);
        status.conditions = [
          minAvailable
            ? condition(prev.conditions, 'Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now)
            : condition(prev.conditions, 'Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', now),
          condition(prev.conditions, 'Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rs}" is progressing.`, now),
        ];
        obj.status = status;
        return true;
      },
      { subresource: 'status', manager: CONTROLLER },
    );
    if (!updated || getPath(updated, ['spec', 'paused']) === true) return;
    this.clearTimer(key);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.ready(ns, name, generation);
    }, this.readyAfterMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  private ready(ns: string, name: string, generation: number): void {
    this.core.mutate(
      DEPLOYMENTS_KEY,
      ns,
      name,
      (obj) => {
        if (num(readMeta(obj).generation, 1) !== generation || isBeingDeleted(obj)) return false;
        const now = timestamp();
        const replicas = num(getPath(obj, ['spec', 'replicas']), 1);
        const prev = isJsonObject(obj.status) ? obj.status : {};
        const status: JsonObject = { ...prev, observedGeneration: generation };
        setCounts(status, { replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas, unavailableReplicas: 0 });
        const rs = `${name}-${templateHash(getPath(obj, ['spec', 'template']))}`;
        status.conditions = [
          condition(prev.conditions, 'Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now),
          condition(prev.conditions, 'Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rs}" has successfully progressed.`, now),
        ];
        obj.status = status;
        return true;
      },
      { subresource: 'status', manager: CONTROLLER },
    );
  }

  close(): void {
    this.unsubscribe();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
