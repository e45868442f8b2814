/**
 * The Deployment controller: a ReplicaSet per pod template (pod-template-hash label,
 * `deployment.kubernetes.io/revision` annotations, the old one reused by a rollback), a rolling
 * update within maxSurge/maxUnavailable or Recreate, old ReplicaSets kept up to
 * revisionHistoryLimit, ScalingReplicaSet events, and the status and conditions
 * (Available, Progressing) `kubectl rollout status` reads.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, namespaceOf, readMeta, timestamp, uidOf } from '../base/meta.js';
import type { Store } from '../storage/store.js';
import type { SimulationClock } from './clock.js';
import type { ServerEventRecorder } from './recorder.js';
import { REPLICASETS_KEY } from './replicasets.js';
import { condition, controlled, CONTROLLER_MANAGER, controllerRef, num, OwnerSyncLoop, setCounts, templateHash } from './workload.js';

export const DEPLOYMENTS_KEY = 'apps/deployments';
const COMPONENT = 'deployment-controller';
const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
/** Annotations of a Deployment that its ReplicaSets do not copy (skipCopyAnnotation). */
const NOT_COPIED = new Set([
  REVISION,
  'kubectl.kubernetes.io/last-applied-configuration',
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
]);

function intOrPercent(v: JsonValue | undefined, total: number, roundUp: boolean, fallback: string): number {
  const value = v ?? fallback;
  if (typeof value === 'number') return value;
  const pct = Number(String(value).replace('%', '')) || 0;
  return roundUp ? Math.ceil((total * pct) / 100) : Math.floor((total * pct) / 100);
}

function revisionOf(rs: JsonObject): number {
  return Number(getPath(rs, ['metadata', 'annotations', REVISION]) ?? 0) || 0;
}

/** A pod template as compared for equality (EqualIgnoreHash): no hash label, no empty creationTimestamp. */
function withoutHash(template: JsonValue | undefined): JsonValue | undefined {
  if (!isJsonObject(template)) return template;
  const copy = structuredClone(template);
  const meta = isJsonObject(copy.metadata) ? copy.metadata : (copy.metadata = {});
  if (meta.creationTimestamp === null) delete meta.creationTimestamp;
  const labels = meta.labels;
  if (isJsonObject(labels)) delete labels[HASH_LABEL];
  return copy;
}

export class DeploymentController {
  private readonly loop: OwnerSyncLoop;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    private readonly clock: SimulationClock,
  ) {
    this.loop = new OwnerSyncLoop(
      store,
      'deployment controller',
      DEPLOYMENTS_KEY,
      REPLICASETS_KEY,
      (ns, name) => this.reconcile(ns, name),
      clock,
    );
  }

  resumeAll(): void {
    this.loop.resumeAll();
  }

  private scale(d: JsonObject, rs: JsonObject, to: number): void {
    const from = num(getPath(rs, ['spec', 'replicas']));
    if (from === to) return;
    const updated = this.writes.mutate(
      REPLICASETS_KEY,
      namespaceOf(rs),
      nameOf(rs),
      (obj) => {
        (obj.spec as JsonObject).replicas = to;
        const annotations = isJsonObject(readMeta(obj).annotations) ? (readMeta(obj).annotations as JsonObject) : {};
        annotations['deployment.kubernetes.io/desired-replicas'] = String(num(getPath(d, ['spec', 'replicas']), 1));
        (obj.metadata as JsonObject).annotations = annotations;
      },
      { manager: CONTROLLER_MANAGER },
    );
    if (updated)
      this.recorder.record(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${to > from ? 'up' : 'down'} replica set ${nameOf(rs)} from ${from} to ${to}`,
        COMPONENT,
      );
  }

  private reconcile(ns: string, name: string): void {
    const d = this.store.get(DEPLOYMENTS_KEY, ns, name);
    if (!d || isBeingDeleted(d)) return;
    const replicas = num(getPath(d, ['spec', 'replicas']), 1);
    const template = getPath(d, ['spec', 'template']);
    const all = controlled(this.store, REPLICASETS_KEY, d).filter((rs) => !isBeingDeleted(rs));
    const maxRevision = Math.max(0, ...all.map(revisionOf));
    let newRS = all.find((rs) => deepEqual(withoutHash(getPath(rs, ['spec', 'template'])), withoutHash(template)));
    let created = false;
    const paused = getPath(d, ['spec', 'paused']) === true;
    if (!newRS && !paused) {
      newRS = this.createReplicaSet(d, maxRevision + 1);
      created = newRS !== undefined;
    } else if (newRS && revisionOf(newRS) < maxRevision && !paused) {
      // A rollback to this template: its ReplicaSet becomes the newest revision.
      newRS =
        this.writes.mutate(
          REPLICASETS_KEY,
          ns,
          nameOf(newRS),
          (rs) => void ((readMeta(rs).annotations as JsonObject)[REVISION] = String(maxRevision + 1)),
          { manager: CONTROLLER_MANAGER },
        ) ?? newRS;
    }
    const old = all.filter((rs) => rs !== newRS && uidOf(rs) !== (newRS && uidOf(newRS)));
    if (newRS && !paused) {
      if (getPath(d, ['spec', 'strategy', 'type']) === 'Recreate') this.recreate(d, newRS, old, replicas);
      else this.rollingUpdate(d, newRS, old, replicas);
      this.cleanup(d, old);
      const revision = String(revisionOf(this.store.get(REPLICASETS_KEY, ns, nameOf(newRS)) ?? newRS));
      if (getPath(d, ['metadata', 'annotations', REVISION]) !== revision) {
        this.writes.mutate(
          DEPLOYMENTS_KEY,
          ns,
          name,
          (obj) => {
            const meta = obj.metadata as JsonObject;
            meta.annotations = { ...(isJsonObject(meta.annotations) ? meta.annotations : {}), [REVISION]: revision };
          },
          { manager: CONTROLLER_MANAGER },
        );
      }
    }
    this.updateStatus(ns, name, newRS && nameOf(newRS), created);
  }

  private createReplicaSet(d: JsonObject, revision: number): JsonObject | undefined {
    const template = structuredClone(getPath(d, ['spec', 'template']) ?? {}) as JsonObject;
    const hash = templateHash(template);
    const tmeta = isJsonObject(template.metadata) ? template.metadata : (template.metadata = {});
    tmeta.labels = { ...(isJsonObject(tmeta.labels) ? tmeta.labels : {}), [HASH_LABEL]: hash };
    const selector = structuredClone(getPath(d, ['spec', 'selector']) ?? {}) as JsonObject;
    selector.matchLabels = { ...(isJsonObject(selector.matchLabels) ? selector.matchLabels : {}), [HASH_LABEL]: hash };
    const annotations: JsonObject = {};
    const dAnnotations = getPath(d, ['metadata', 'annotations']);
    if (isJsonObject(dAnnotations)) for (const [k, v] of Object.entries(dAnnotations)) if (!NOT_COPIED.has(k)) annotations[k] = v;
    const replicas = num(getPath(d, ['spec', 'replicas']), 1);
    annotations[REVISION] = String(revision);
    annotations['deployment.kubernetes.io/desired-replicas'] = String(replicas);
    annotations['deployment.kubernetes.io/max-replicas'] = String(
      replicas + intOrPercent(getPath(d, ['spec', 'strategy', 'rollingUpdate', 'maxSurge']), replicas, true, '25%'),
    );
    const rsName = `${nameOf(d)}-${hash}`;
    const rs = this.writes.createInternal(
      REPLICASETS_KEY,
      {
        metadata: { name: rsName, namespace: namespaceOf(d), labels: tmeta.labels, annotations, ownerReferences: [controllerRef(d)] },
        spec: { replicas: 0, minReadySeconds: num(getPath(d, ['spec', 'minReadySeconds'])), selector, template },
      },
      CONTROLLER_MANAGER,
    );
    return rs;
  }

  private recreate(d: JsonObject, newRS: JsonObject, old: JsonObject[], replicas: number): void {
    for (const rs of old) this.scale(d, rs, 0);
    const oldPods = old.reduce((n, rs) => n + num(getPath(rs, ['status', 'replicas'])), 0);
    if (oldPods === 0) this.scale(d, newRS, replicas);
  }

  private rollingUpdate(d: JsonObject, newRS: JsonObject, old: JsonObject[], replicas: number): void {
    const ru = getPath(d, ['spec', 'strategy', 'rollingUpdate']);
    const surge = intOrPercent(getPath(ru, ['maxSurge']), replicas, true, '25%');
    let unavailable = intOrPercent(getPath(ru, ['maxUnavailable']), replicas, false, '25%');
    if (surge === 0 && unavailable === 0) unavailable = 1;
    const specOf = (rs: JsonObject) => num(getPath(rs, ['spec', 'replicas']));
    const newCount = specOf(newRS);
    const oldCount = old.reduce((n, rs) => n + specOf(rs), 0);
    // Scale up the new ReplicaSet within replicas + maxSurge.
    if (newCount < replicas) {
      const room = replicas + surge - (newCount + oldCount);
      if (room > 0) this.scale(d, newRS, Math.min(replicas, newCount + room));
    } else if (newCount > replicas) this.scale(d, newRS, replicas);
    if (old.length === 0) return;
    // Scale down old ones while at least replicas - maxUnavailable stay available.
    const fresh = (rs: JsonObject) => this.store.get(REPLICASETS_KEY, namespaceOf(rs), nameOf(rs)) ?? rs;
    const available = [newRS, ...old].map(fresh).reduce((n, rs) => n + num(getPath(rs, ['status', 'availableReplicas'])), 0);
    const total = [newRS, ...old].map(fresh).reduce((n, rs) => n + specOf(rs), 0);
    const newUnavailable = specOf(fresh(newRS)) - num(getPath(fresh(newRS), ['status', 'availableReplicas']));
    let budget = Math.max(0, total - (replicas - unavailable) - Math.max(0, newUnavailable));
    // Old pods that are not available can go without lowering availability.
    for (const rs of old) {
      const idle = specOf(rs) - num(getPath(rs, ['status', 'availableReplicas']));
      if (idle > 0) {
        this.scale(d, rs, specOf(rs) - idle);
        budget = Math.max(0, budget - idle);
      }
    }
    void available;
    for (const rs of [...old].sort((a, b) => revisionOf(a) - revisionOf(b))) {
      if (budget <= 0) break;
      const current = specOf(fresh(rs));
      const down = Math.min(current, budget);
      if (down > 0) this.scale(d, rs, current - down);
      budget -= down;
    }
  }

  /** Old ReplicaSets scaled to zero beyond revisionHistoryLimit go, oldest revision first. */
  private cleanup(d: JsonObject, old: JsonObject[]): void {
    const limit = num(getPath(d, ['spec', 'revisionHistoryLimit']), 10);
    const idle = old
      .map((rs) => this.store.get(REPLICASETS_KEY, namespaceOf(rs), nameOf(rs)) ?? rs)
      .filter((rs) => num(getPath(rs, ['spec', 'replicas'])) === 0 && num(getPath(rs, ['status', 'replicas'])) === 0)
      .sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit)))
      this.writes.deleteInternal(REPLICASETS_KEY, namespaceOf(rs), nameOf(rs));
  }

  private updateStatus(ns: string, name: string, newRSName: string | undefined, created: boolean): void {
    this.writes.mutate(
      DEPLOYMENTS_KEY,
      ns,
      name,
      (d) => {
        const all = controlled(this.store, REPLICASETS_KEY, d);
        const sum = (path: string[]) => all.reduce((n, rs) => n + num(getPath(rs, path)), 0);
        const newRS = all.find((rs) => nameOf(rs) === newRSName);
        const replicas = num(getPath(d, ['spec', 'replicas']), 1);
        const available = sum(['status', 'availableReplicas']);
        const total = sum(['status', 'replicas']);
        const updated = newRS ? num(getPath(newRS, ['status', 'replicas'])) : 0;
        const prev = isJsonObject(d.status) ? d.status : {};
        const status: JsonObject = { ...prev, observedGeneration: num(readMeta(d).generation, 1) };
        setCounts(status, {
          replicas: total,
          updatedReplicas: updated,
          readyReplicas: sum(['status', 'readyReplicas']),
          availableReplicas: available,
          unavailableReplicas: Math.max(0, total - available, replicas - available),
        });
        const now = timestamp(new Date(this.clock.now()));
        const maxUnavailable = intOrPercent(
          getPath(d, ['spec', 'strategy', 'rollingUpdate', 'maxUnavailable']),
          replicas,
          false,
          getPath(d, ['spec', 'strategy', 'type']) === 'Recreate' ? '0' : '25%',
        );
        const complete =
          newRS !== undefined &&
          updated === replicas &&
          total === replicas &&
          available === replicas &&
          num(getPath(newRS, ['spec', 'replicas'])) === replicas;
        const rs = newRSName ?? name;
        const progressing =
          getPath(d, ['spec', 'paused']) === true
            ? condition(prev.conditions, 'Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused', now)
            : complete
              ? condition(
                  prev.conditions,
                  'Progressing',
                  'True',
                  'NewReplicaSetAvailable',
                  `ReplicaSet "${rs}" has successfully progressed.`,
                  now,
                )
              : created
                ? condition(prev.conditions, 'Progressing', 'True', 'NewReplicaSetCreated', `Created new replica set "${rs}"`, now)
                : condition(prev.conditions, 'Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rs}" is progressing.`, now);
        const availableCondition =
          available >= replicas - maxUnavailable
            ? condition(prev.conditions, 'Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now)
            : condition(
                prev.conditions,
                'Available',
                'False',
                'MinimumReplicasUnavailable',
                'Deployment does not have minimum availability.',
                now,
              );
        status.conditions = [availableCondition, progressing];
        if (deepEqual(withoutTimes(prev), withoutTimes(status))) return false;
        d.status = status;
      },
      { subresource: 'status', manager: CONTROLLER_MANAGER },
    );
  }

  close(): void {
    this.loop.close();
  }
}

/** A status without the condition times that would change on every write. */
function withoutTimes(status: JsonObject): JsonValue {
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.map((c) => (isJsonObject(c) ? { ...c, lastUpdateTime: null } : c))
    : status.conditions;
  return { ...status, conditions: conditions ?? null };
}
