/**
 * The ReplicaSet controller: keeps `spec.replicas` pods of the template (SuccessfulCreate,
 * SuccessfulDelete events; not-ready and newest pods go first) and reports replicas, ready and
 * available counts.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, readMeta } from '../base/meta.js';
import type { Store } from '../storage/store.js';
import type { SimulationClock } from './clock.js';
import type { ServerEventRecorder } from './recorder.js';
import {
  controlled,
  CONTROLLER_MANAGER,
  isActivePod,
  isPodReady,
  num,
  OwnerSyncLoop,
  POD_BURST,
  type PodBudget,
  podFromTemplate,
  PODS_KEY,
  setCounts,
  statusChanged,
} from './workload.js';

export const REPLICASETS_KEY = 'apps/replicasets';
const COMPONENT = 'replicaset-controller';

export class ReplicaSetController {
  private readonly loop: OwnerSyncLoop;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    clock: SimulationClock,
  ) {
    this.loop = new OwnerSyncLoop(
      store,
      'replicaset controller',
      REPLICASETS_KEY,
      PODS_KEY,
      (ns, name, budget) => this.reconcile(ns, name, budget),
      clock,
    );
  }

  resumeAll(): void {
    this.loop.resumeAll();
  }

  private reconcile(ns: string, name: string, budget: PodBudget): void {
    const rs = this.store.get(REPLICASETS_KEY, ns, name);
    if (!rs || isBeingDeleted(rs)) return;
    const pods = controlled(this.store, PODS_KEY, rs).filter(isActivePod);
    const want = num(getPath(rs, ['spec', 'replicas']), 1);
    if (pods.length < want) {
      for (let i = budget.take(want - pods.length); i > 0; i--) {
        const pod = podFromTemplate(getPath(rs, ['spec', 'template']), rs, { generateName: `${name}-`, namespace: ns });
        const created = this.writes.createInternal(PODS_KEY, pod, CONTROLLER_MANAGER);
        if (created) {
          pods.push(created);
          this.recorder.record(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${nameOf(created)}`, COMPONENT);
        }
      }
    } else if (pods.length > want) {
      // Not ready first, then the newest (controller.ActivePods ordering, roughly).
      const victims = [...pods]
        .sort(
          (a, b) =>
            Number(isPodReady(a)) - Number(isPodReady(b)) ||
            String(readMeta(b).creationTimestamp).localeCompare(String(readMeta(a).creationTimestamp)),
        )
        .slice(0, Math.min(pods.length - want, POD_BURST));
      for (const pod of victims) {
        this.writes.deleteInternal(PODS_KEY, ns, nameOf(pod));
        this.recorder.record(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${nameOf(pod)}`, COMPONENT);
      }
    }
    const live = controlled(this.store, PODS_KEY, rs).filter(isActivePod);
    const ready = live.filter(isPodReady).length;
    this.writes.mutate(
      REPLICASETS_KEY,
      ns,
      name,
      (obj) => {
        const status: JsonObject = { ...(isJsonObject(obj.status) ? obj.status : {}) };
        status.replicas = live.length;
        setCounts(status, { fullyLabeledReplicas: live.length, readyReplicas: ready, availableReplicas: ready });
        status.observedGeneration = num(readMeta(obj).generation, 1);
        return statusChanged(obj, status);
      },
      { subresource: 'status', manager: CONTROLLER_MANAGER },
    );
  }

  close(): void {
    this.loop.close();
  }
}
