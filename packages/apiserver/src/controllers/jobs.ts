/**
 * The Job controller: runs pods up to `parallelism` until `completions` succeed (Complete, the
 * Completed event) or more than `backoffLimit` fail (Failed, BackoffLimitExceeded); status
 * active/ready/succeeded/failed, startTime and completionTime as the real controller writes them.
 * Retries are not delayed (the real controller backs off exponentially).
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, timestamp } from '../base/meta.js';
import type { Store } from '../storage/store.js';
import type { SimulationClock } from './clock.js';
import type { ServerEventRecorder } from './recorder.js';
import {
  condition,
  controlled,
  CONTROLLER_MANAGER,
  isPodReady,
  num,
  OwnerSyncLoop,
  type PodBudget,
  podFromTemplate,
  podPhase,
  PODS_KEY,
  setCounts,
} from './workload.js';

export const JOBS_KEY = 'batch/jobs';
const COMPONENT = 'job-controller';

export function jobFinished(job: JsonObject): 'Complete' | 'Failed' | undefined {
  const conditions = getPath(job, ['status', 'conditions']);
  if (!Array.isArray(conditions)) return undefined;
  for (const c of conditions) if (isJsonObject(c) && c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed')) return c.type;
  return undefined;
}

export class JobController {
  private readonly loop: OwnerSyncLoop;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    private readonly clock: SimulationClock,
  ) {
    this.loop = new OwnerSyncLoop(
      store,
      'job controller',
      JOBS_KEY,
      PODS_KEY,
      (ns, name, budget) => this.reconcile(ns, name, budget),
      clock,
    );
  }

  resumeAll(): void {
    this.loop.resumeAll();
  }

  private reconcile(ns: string, name: string, budget: PodBudget): void {
    const job = this.store.get(JOBS_KEY, ns, name);
    if (!job || isBeingDeleted(job) || jobFinished(job)) return;
    const pods = controlled(this.store, PODS_KEY, job);
    const active = pods.filter((p) => !isBeingDeleted(p) && podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed');
    const succeeded = pods.filter((p) => podPhase(p) === 'Succeeded').length;
    const failed = pods.filter((p) => podPhase(p) === 'Failed').length;
    const completions = num(getPath(job, ['spec', 'completions']), 1);
    const parallelism = num(getPath(job, ['spec', 'parallelism']), 1);
    const backoffLimit = num(getPath(job, ['spec', 'backoffLimit']), 6);
    const suspended = getPath(job, ['spec', 'suspend']) === true;
    const now = timestamp(new Date(this.clock.now()));
    let outcome: 'Complete' | 'Failed' | undefined;
    if (succeeded >= completions) outcome = 'Complete';
    else if (failed > backoffLimit) outcome = 'Failed';
    if (outcome === 'Failed') {
      for (const p of active) this.writes.deleteInternal(PODS_KEY, ns, nameOf(p));
    } else if (!outcome && !suspended) {
      const want = Math.min(parallelism, completions - succeeded) - active.length;
      for (let i = budget.take(want); i > 0; i--) {
        const pod = this.writes.createInternal(
          PODS_KEY,
          podFromTemplate(getPath(job, ['spec', 'template']), job, { generateName: `${name}-`, namespace: ns }),
          CONTROLLER_MANAGER,
        );
        if (pod) {
          active.push(pod);
          this.recorder.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${nameOf(pod)}`, COMPONENT);
        }
      }
    }
    const updated = this.writes.mutate(
      JOBS_KEY,
      ns,
      name,
      (obj) => {
        const prev = isJsonObject(obj.status) ? obj.status : {};
        const status: JsonObject = { ...prev };
        status.startTime ??= now;
        setCounts(status, { active: outcome ? 0 : active.length, succeeded, failed });
        status.ready = outcome ? 0 : active.filter(isPodReady).length;
        status.terminating = 0;
        status.uncountedTerminatedPods = {};
        if (outcome === 'Complete') {
          status.completionTime = now;
          status.conditions = [
            condition(
              prev.conditions,
              'SuccessCriteriaMet',
              'True',
              'CompletionsReached',
              'Reached expected number of succeeded pods',
              now,
              false,
            ),
            condition(prev.conditions, 'Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', now, false),
          ].map(probeTimes(now));
        } else if (outcome === 'Failed') {
          status.conditions = [
            condition(
              prev.conditions,
              'FailureTarget',
              'True',
              'BackoffLimitExceeded',
              'Job has reached the specified backoff limit',
              now,
              false,
            ),
            condition(prev.conditions, 'Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now, false),
          ].map(probeTimes(now));
        }
        if (deepEqual(prev, status)) return false;
        obj.status = status;
      },
      { subresource: 'status', manager: CONTROLLER_MANAGER },
    );
    if (updated && outcome === 'Complete') this.recorder.record(updated, 'Normal', 'Completed', 'Job completed', COMPONENT);
    if (updated && outcome === 'Failed')
      this.recorder.record(updated, 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', COMPONENT);
  }

  close(): void {
    this.loop.close();
  }
}

function probeTimes(now: string): (c: JsonObject) => JsonObject {
  return (c) => ({ ...c, lastProbeTime: now });
}
