/**
 * The StatefulSet controller, after kube-controller-manager's: Pods `<set>-0..N-1` with a stable
 * identity (pod-name and pod-index labels, `hostname`, `subdomain` from `serviceName`) and their
 * PersistentVolumeClaims `<template>-<set>-<ordinal>` created first; with `OrderedReady` one Pod
 * at a time, the next once the one before is Running and Ready, and scale-down from the highest
 * ordinal; with `Parallel` all at once. Each pod template is a ControllerRevision
 * (`controller-revision-hash` on the Pods), so `kubectl rollout history/undo` work; a rolling
 * update replaces Pods from the highest ordinal down to `partition`, one at a time, each once the
 * one before is Ready; `OnDelete` leaves it to the user. The claims' ownerReferences follow
 * `persistentVolumeClaimRetentionPolicy`, so the garbage collector deletes them when asked.
 * `minReadySeconds` is not waited for (a Ready Pod counts as available at once).
 */
import type { InternalWrites } from '../api/internal-writes.js';
import { ApiError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, labelsOf, nameOf, namespaceOf, ownerRefsOf, readMeta, uidOf } from '../base/meta.js';
import type { Store } from '../storage/store.js';
import type { SimulationClock } from './clock.js';
import type { ServerEventRecorder } from './recorder.js';
import { PVCS_KEY } from './volumes.js';
import {
  controlled,
  CONTROLLER_MANAGER,
  controllerRef,
  isPodReady,
  num,
  OwnerSyncLoop,
  type PodBudget,
  podFromTemplate,
  podPhase,
  PODS_KEY,
  setCounts,
  statusChanged,
  templateHash,
} from './workload.js';

export const STATEFULSETS_KEY = 'apps/statefulsets';
export const CONTROLLER_REVISIONS_KEY = 'apps/controllerrevisions';
const COMPONENT = 'statefulset-controller';
const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
const REVISION_LABEL = 'controller-revision-hash';
const HASH_LABEL = 'controller.kubernetes.io/hash';

/** The largest ordinal: Go parses it as an int32, and a Pod whose number does not parse is ignored, not condemned. */
const MAX_ORDINAL = 2 ** 31 - 1;

/** The ordinal of a Pod of the set (`<set>-<n>`), or -1 for a Pod whose name is not one. */
function ordinalOf(setName: string, pod: JsonObject): number {
  const m = /^(.*)-(\d+)$/.exec(nameOf(pod));
  const ordinal = m && m[1] === setName ? Number(m[2]) : -1;
  return ordinal <= MAX_ORDINAL ? ordinal : -1;
}

const isRunningAndReady = (pod: JsonObject): boolean => podPhase(pod) === 'Running' && isPodReady(pod);
const isHealthy = (pod: JsonObject): boolean => isRunningAndReady(pod) && !isBeingDeleted(pod);
const revisionOfPod = (pod: JsonObject): string => labelsOf(pod)[REVISION_LABEL] ?? '';

/** What a ControllerRevision of a StatefulSet holds: a strategic merge patch that restores its pod template. */
function revisionData(set: JsonObject): JsonObject {
  const template = getPath(set, ['spec', 'template']);
  return { spec: { template: { ...(isJsonObject(template) ? structuredClone(template) : {}), $patch: 'replace' } } };
}

function templateOf(revision: JsonObject): JsonValue {
  const template = getPath(revision, ['data', 'spec', 'template']);
  if (!isJsonObject(template)) return {};
  const { $patch: _directive, ...rest } = template;
  return rest;
}

function claimTemplates(set: JsonObject): JsonObject[] {
  const templates = getPath(set, ['spec', 'volumeClaimTemplates']);
  return Array.isArray(templates) ? templates.filter(isJsonObject) : [];
}

function retentionOf(set: JsonObject): { whenDeleted: string; whenScaled: string } {
  const policy = getPath(set, ['spec', 'persistentVolumeClaimRetentionPolicy']);
  return {
    whenDeleted: String(getPath(policy, ['whenDeleted']) ?? 'Retain'),
    whenScaled: String(getPath(policy, ['whenScaled']) ?? 'Retain'),
  };
}

export class StatefulSetController {
  private readonly loop: OwnerSyncLoop;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    clock: SimulationClock,
  ) {
    this.loop = new OwnerSyncLoop(
      store,
      'statefulset controller',
      STATEFULSETS_KEY,
      PODS_KEY,
      (ns, name, budget) => this.reconcile(ns, name, budget),
      clock,
    );
  }

  resumeAll(): void {
    this.loop.resumeAll();
  }

  private reconcile(ns: string, name: string, budget: PodBudget): void {
    const set = this.store.get(STATEFULSETS_KEY, ns, name);
    if (!set) return;
    const found = this.updateRevision(set);
    if (!found) return;
    const { update, collisionCount } = found;
    const currentName = getPath(set, ['status', 'currentRevision']);
    const current = this.revisionsOf(set).find((r) => nameOf(r) === currentName) ?? update;
    if (!isBeingDeleted(set)) this.sync(set, current, update, budget);
    this.truncateHistory(set, current, update);
    this.updateStatus(set, current, update, collisionCount);
  }

  // ---- revisions -------------------------------------------------------------------------

  private revisionsOf(set: JsonObject): JsonObject[] {
    return controlled(this.store, CONTROLLER_REVISIONS_KEY, set).sort(
      (a, b) => num(a.revision) - num(b.revision) || nameOf(a).localeCompare(nameOf(b)),
    );
  }

  /**
   * The revision of the set's current template (getStatefulSetRevisions): the newest if it is
   * equal, an older equal one renumbered as the newest (a rollback), else a new one, its name
   * hashed with `collisionCount`, which grows while the name is taken by other content.
   */
  private updateRevision(set: JsonObject): { update: JsonObject; collisionCount: number } | undefined {
    const revisions = this.revisionsOf(set);
    const data = revisionData(set);
    let collisionCount = num(getPath(set, ['status', 'collisionCount']));
    const latest = revisions[revisions.length - 1];
    const next = (latest ? num(latest.revision) : 0) + 1;
    const equal = revisions.filter((r) => deepEqual(r.data, data));
    const newestEqual = equal[equal.length - 1];
    if (newestEqual && newestEqual === latest) return { update: latest, collisionCount };
    if (newestEqual) {
      const renumbered = this.writes.mutate(
        CONTROLLER_REVISIONS_KEY,
        namespaceOf(set),
        nameOf(newestEqual),
        (r) => void (r.revision = next),
        { manager: CONTROLLER_MANAGER },
      );
      return renumbered ? { update: renumbered, collisionCount } : undefined;
    }
    const template = getPath(set, ['spec', 'template']);
    for (;;) {
      const hash = templateHash(collisionCount === 0 ? template : [template ?? null, collisionCount]);
      const name = `${nameOf(set)}-${hash}`;
      const taken = this.store.get(CONTROLLER_REVISIONS_KEY, namespaceOf(set), name);
      if (taken && deepEqual(taken.data, data) && ownerRefsOf(taken).some((r) => r.uid === uidOf(set)))
        return { update: taken, collisionCount };
      if (taken) {
        collisionCount++;
        continue;
      }
      const annotations = getPath(set, ['metadata', 'annotations']);
      const created = this.writes.createInternal(
        CONTROLLER_REVISIONS_KEY,
        {
          metadata: {
            name,
            namespace: namespaceOf(set),
            labels: { ...labelsOf(isJsonObject(template) ? template : {}), [HASH_LABEL]: hash },
            ...(isJsonObject(annotations) ? { annotations: structuredClone(annotations) } : {}),
            ownerReferences: [controllerRef(set)],
          },
          data,
          revision: next,
        },
        CONTROLLER_MANAGER,
      );
      return created ? { update: created, collisionCount } : undefined;
    }
  }

  /** Revisions no Pod and neither status revision uses go beyond `revisionHistoryLimit`, oldest first. */
  private truncateHistory(set: JsonObject, current: JsonObject, update: JsonObject): void {
    const live = new Set([nameOf(current), nameOf(update), ...controlled(this.store, PODS_KEY, set).map(revisionOfPod)]);
    const history = this.revisionsOf(set).filter((r) => !live.has(nameOf(r)));
    const limit = num(getPath(set, ['spec', 'revisionHistoryLimit']), 10);
    for (const r of history.slice(0, Math.max(0, history.length - limit)))
      this.writes.deleteInternal(CONTROLLER_REVISIONS_KEY, namespaceOf(r), nameOf(r));
  }

  // ---- pods ------------------------------------------------------------------------------

  /** One pass of updateStatefulSet: replicas in ordinal order, then the condemned, then the rolling update. */
  private sync(set: JsonObject, current: JsonObject, update: JsonObject, budget: PodBudget): void {
    const setName = nameOf(set);
    const replicas = num(getPath(set, ['spec', 'replicas']), 1);
    // By ordinal; a Map, not an array of `replicas` slots: replicas may be up to 2^31-1.
    const slots = new Map<number, JsonObject>();
    const condemned: JsonObject[] = [];
    for (const pod of controlled(this.store, PODS_KEY, set)) {
      const ordinal = ordinalOf(setName, pod);
      if (ordinal < 0) continue;
      if (ordinal < replicas) slots.set(ordinal, pod);
      else condemned.push(pod);
    }
    condemned.sort((a, b) => ordinalOf(setName, b) - ordinalOf(setName, a));
    // In OrderedReady mode the condemned are reached only once every replica is Running and Ready,
    // so the first unhealthy Pod, the one that may go while unhealthy, is the lowest condemned one.
    const firstUnhealthy = [...condemned].reverse().find((p) => !isHealthy(p));
    const monotonic = getPath(set, ['spec', 'podManagementPolicy']) !== 'Parallel';

    for (let ordinal = 0; ordinal < replicas; ordinal++) {
      // OrderedReady creates one Pod per pass; Parallel creates as many as the budget allows.
      if (!monotonic && !slots.has(ordinal) && budget.take(1) === 0) return;
      const blocked = this.processReplica(set, current, update, slots.get(ordinal), ordinal, replicas, monotonic);
      if (blocked && monotonic) return;
    }
    // Claims of Pods about to go get the Pod as owner first (whenScaled: Delete), as fixPodClaim does.
    for (const pod of condemned) this.updateClaimOwners(set, pod, replicas);
    for (const pod of condemned) {
      if (isBeingDeleted(pod)) {
        if (monotonic) return;
        continue;
      }
      if (monotonic && !isRunningAndReady(pod) && pod !== firstUnhealthy) return;
      this.deletePod(set, pod);
      if (monotonic) return;
    }
    const strategy = getPath(set, ['spec', 'updateStrategy', 'type']);
    if (strategy === 'OnDelete') return;
    const partition = num(getPath(set, ['spec', 'updateStrategy', 'rollingUpdate', 'partition']));
    for (let target = replicas - 1; target >= partition; target--) {
      const pod = this.store.get(PODS_KEY, namespaceOf(set), `${setName}-${target}`);
      if (!pod) return;
      if (revisionOfPod(pod) !== nameOf(update) && !isBeingDeleted(pod)) {
        this.deletePod(set, pod);
        return;
      }
      if (!isHealthy(pod)) return;
    }
  }

  /** processReplica: returns whether the pass has to stop here (in OrderedReady mode). */
  private processReplica(
    set: JsonObject,
    current: JsonObject,
    update: JsonObject,
    pod: JsonObject | undefined,
    ordinal: number,
    replicas: number,
    monotonic: boolean,
  ): boolean {
    if (pod && (podPhase(pod) === 'Failed' || podPhase(pod) === 'Succeeded')) {
      // A finished Pod is replaced: deleted now, created again once it is gone.
      if (!isBeingDeleted(pod)) this.deletePod(set, pod);
      return true;
    }
    if (!pod) {
      const partition = num(getPath(set, ['spec', 'updateStrategy', 'rollingUpdate', 'partition']));
      const revision = getPath(set, ['spec', 'updateStrategy', 'type']) === 'RollingUpdate' && ordinal < partition ? current : update;
      const fresh = this.newPod(set, revision, ordinal);
      if (!this.createClaims(set, fresh, ordinal)) return true;
      const created = this.writes.createInternal(PODS_KEY, fresh, CONTROLLER_MANAGER);
      if (!created) return true;
      this.updateClaimOwners(set, created, replicas);
      this.recorder.record(
        set,
        'Normal',
        'SuccessfulCreate',
        `create Pod ${nameOf(created)} in StatefulSet ${nameOf(set)} successful`,
        COMPONENT,
      );
      return monotonic;
    }
    if (podPhase(pod) === 'Pending' && !this.createClaims(set, pod, ordinal)) return true;
    if (monotonic && (isBeingDeleted(pod) || !isRunningAndReady(pod))) return true;
    this.updateClaimOwners(set, pod, replicas);
    return false;
  }

  private newPod(set: JsonObject, revision: JsonObject, ordinal: number): JsonObject {
    const podName = `${nameOf(set)}-${ordinal}`;
    const pod = podFromTemplate(templateOf(revision), set, { name: podName, namespace: namespaceOf(set) });
    const meta = pod.metadata as JsonObject;
    meta.labels = { ...labelsOf(pod), [POD_NAME_LABEL]: podName, [POD_INDEX_LABEL]: String(ordinal), [REVISION_LABEL]: nameOf(revision) };
    const spec = pod.spec as JsonObject;
    spec.hostname = podName;
    const serviceName = getPath(set, ['spec', 'serviceName']);
    if (typeof serviceName === 'string' && serviceName !== '') spec.subdomain = serviceName;
    const templates = claimTemplates(set);
    if (templates.length > 0) {
      const claimed = new Set(templates.map(nameOf));
      const others = (Array.isArray(spec.volumes) ? spec.volumes : []).filter((v) => !(isJsonObject(v) && claimed.has(String(v.name))));
      spec.volumes = [
        ...templates.map((t) => ({ name: nameOf(t), persistentVolumeClaim: { claimName: `${nameOf(t)}-${nameOf(set)}-${ordinal}` } })),
        ...others,
      ];
    }
    return pod;
  }

  private deletePod(set: JsonObject, pod: JsonObject): void {
    this.writes.deleteInternal(PODS_KEY, namespaceOf(pod), nameOf(pod));
    this.recorder.record(
      set,
      'Normal',
      'SuccessfulDelete',
      `delete Pod ${nameOf(pod)} in StatefulSet ${nameOf(set)} successful`,
      COMPONENT,
    );
  }

  // ---- claims ----------------------------------------------------------------------------

  /** Creates the Pod's missing claims (labelled with the selector's matchLabels); false if one cannot be had. */
  private createClaims(set: JsonObject, pod: JsonObject, ordinal: number): boolean {
    const ns = namespaceOf(set);
    const matchLabels = getPath(set, ['spec', 'selector', 'matchLabels']);
    for (const template of claimTemplates(set)) {
      const claimName = `${nameOf(template)}-${nameOf(set)}-${ordinal}`;
      const existing = this.store.get(PVCS_KEY, ns, claimName);
      if (existing) {
        if (!isBeingDeleted(existing)) continue;
        this.recorder.record(
          set,
          'Warning',
          'FailedCreate',
          `create Pod ${nameOf(pod)} in StatefulSet ${nameOf(set)} failed error: pvc ${claimName} is being deleted`,
          COMPONENT,
        );
        return false;
      }
      const claim = structuredClone(template);
      claim.metadata = {
        ...readMeta(template),
        name: claimName,
        namespace: ns,
        labels: { ...labelsOf(template), ...(isJsonObject(matchLabels) ? matchLabels : {}) },
        ...(retentionOf(set).whenDeleted === 'Delete' ? { ownerReferences: [controllerRef(set)] } : {}),
      };
      delete claim.status;
      const created = this.writes.tryCreateInternal(PVCS_KEY, claim, CONTROLLER_MANAGER);
      if (created instanceof ApiError) {
        // As the real controller reports it (recordClaimEvent, then recordPodEvent), and tries again on the next pass.
        const why = `failed to create PVC ${claimName}: ${created.message}`;
        this.recorder.record(
          set,
          'Warning',
          'FailedCreate',
          `create Claim ${claimName} for Pod ${nameOf(pod)} in StatefulSet ${nameOf(set)} failed error: ${created.message}`,
          COMPONENT,
        );
        this.recorder.record(
          set,
          'Warning',
          'FailedCreate',
          `create Pod ${nameOf(pod)} in StatefulSet ${nameOf(set)} failed error: ${why}`,
          COMPONENT,
        );
        return false;
      }
      if (!created) return false;
      this.recorder.record(
        set,
        'Normal',
        'SuccessfulCreate',
        `create Claim ${claimName} Pod ${nameOf(pod)} in StatefulSet ${nameOf(set)} success`,
        COMPONENT,
      );
    }
    return true;
  }

  /**
   * The claims' owners as the retention policy asks (updateClaimOwnerRefForSetAndPod): the set
   * while whenDeleted is Delete and the Pod is in range; the Pod once it is scaled away and
   * whenScaled is Delete. A claim another controller owns is left alone.
   */
  private updateClaimOwners(set: JsonObject, pod: JsonObject, replicas: number): void {
    const { whenDeleted, whenScaled } = retentionOf(set);
    const scaledDown = ordinalOf(nameOf(set), pod) >= replicas;
    const owners = [
      ...(whenDeleted === 'Delete' && !(whenScaled === 'Delete' && scaledDown) ? [controllerRef(set)] : []),
      ...(whenScaled === 'Delete' && scaledDown
        ? [{ apiVersion: 'v1', kind: 'Pod', name: nameOf(pod), uid: uidOf(pod), controller: true, blockOwnerDeletion: true }]
        : []),
    ];
    const ours = new Set([uidOf(set), uidOf(pod)]);
    for (const template of claimTemplates(set)) {
      const claimName = `${nameOf(template)}-${nameOf(set)}-${ordinalOf(nameOf(set), pod)}`;
      this.writes.mutate(
        PVCS_KEY,
        namespaceOf(set),
        claimName,
        (claim) => {
          const refs = ownerRefsOf(claim);
          if (refs.some((r) => r.controller && !ours.has(r.uid))) return false;
          const kept = (Array.isArray(readMeta(claim).ownerReferences) ? (readMeta(claim).ownerReferences as JsonValue[]) : []).filter(
            (r) => !(isJsonObject(r) && ours.has(String(r.uid))),
          );
          const wanted = [...kept, ...owners];
          if (deepEqual(wanted, readMeta(claim).ownerReferences ?? [])) return false;
          const meta = claim.metadata as JsonObject;
          if (wanted.length > 0) meta.ownerReferences = wanted;
          else delete meta.ownerReferences;
        },
        { manager: CONTROLLER_MANAGER },
      );
    }
  }

  // ---- status ----------------------------------------------------------------------------

  private updateStatus(set: JsonObject, current: JsonObject, update: JsonObject, collisionCount: number): void {
    const setName = nameOf(set);
    const pods = controlled(this.store, PODS_KEY, set).filter((p) => ordinalOf(setName, p) >= 0);
    const counted = (revision: JsonObject) => pods.filter((p) => !isBeingDeleted(p) && revisionOfPod(p) === nameOf(revision)).length;
    const ready = pods.filter(isRunningAndReady).length;
    let currentReplicas = counted(current);
    let currentRevision = nameOf(current);
    const updatedReplicas = counted(update);
    // completeRollingUpdate: every Pod updated and ready makes the update revision current.
    if (getPath(set, ['spec', 'updateStrategy', 'type']) === 'RollingUpdate' && updatedReplicas === pods.length && ready === pods.length) {
      currentReplicas = updatedReplicas;
      currentRevision = nameOf(update);
    }
    this.writes.mutate(
      STATEFULSETS_KEY,
      namespaceOf(set),
      setName,
      (obj) => {
        const status: JsonObject = { ...(isJsonObject(obj.status) ? obj.status : {}) };
        status.observedGeneration = num(readMeta(obj).generation, 1);
        status.replicas = pods.length;
        setCounts(status, { readyReplicas: ready, currentReplicas, updatedReplicas });
        status.currentRevision = currentRevision;
        status.updateRevision = nameOf(update);
        status.collisionCount = collisionCount;
        status.availableReplicas = ready;
        return statusChanged(obj, status);
      },
      { subresource: 'status', manager: CONTROLLER_MANAGER },
    );
  }

  close(): void {
    this.loop.close();
  }
}
