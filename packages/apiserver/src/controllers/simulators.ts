/**
 * Simulated built-in controllers, like kwok: Deployments own ReplicaSets that own Pods, Jobs run
 * Pods to completion, CronJobs start Jobs on schedule, a number of Nodes run the Pods (bound, started, Ready after a delay), and
 * the controllers record the Events their real counterparts record. Off unless asked for; each
 * part can be switched off; delays go down to 0 and a test can pass its own clock.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { Store } from '../storage/store.js';
import { realClock, type SimulationClock } from './clock.js';
import { CronJobController } from './cronjobs.js';
import { DeploymentController } from './deployments.js';
import { EndpointsController } from './endpoints.js';
import { JobController } from './jobs.js';
import { KubeletSimulator } from './kubelet.js';
import { ServerEventRecorder } from './recorder.js';
import { ReplicaSetController } from './replicasets.js';
import { StatefulSetController } from './statefulsets.js';
import { VolumeController } from './volumes.js';

export type { SimulationClock } from './clock.js';

export interface SimulateOptions {
  /** Deployments and their ReplicaSets (on unless false); `readyAfterMs`: until their Pods are Ready (default 0). */
  deployments?: { readyAfterMs?: number } | false;
  /**
   * Pods: milliseconds from start to Ready (default: `deployments.readyAfterMs`, else 0), and from
   * a graceful delete until the containers have stopped and the Pod goes (default 0; at most its
   * grace period).
   */
  pods?: { readyAfterMs?: number; stopAfterMs?: number };
  /** Nodes registered and running the Pods (default 3); 0 leaves Pods unscheduled and Pending. */
  nodes?: number;
  /** Jobs (on unless false): a Pod runs `durationMs` (default 0); the first `failures` Pods of each Job fail (default 0). */
  jobs?: { durationMs?: number; failures?: number } | false;
  /** CronJobs start Jobs on their schedule, on `clock` (on unless false). */
  cronJobs?: boolean;
  /** Endpoints and EndpointSlices of Services from their ready Pods (on unless false). */
  endpoints?: boolean;
  /** StatefulSets: ordered Pods, their claims, ControllerRevisions (on unless false). */
  statefulSets?: boolean;
  /** Claims bound to PersistentVolumes provisioned for them, a default StorageClass `standard` (on unless false). */
  volumes?: boolean;
  /**
   * The time the simulation runs in (default real time), and the server's timestamps with it; a
   * test passes its own to move time without sleeping.
   */
  clock?: SimulationClock;
}

interface Part {
  resumeAll?(): void;
  start?(): void;
  close(): void;
}

/** Starts the simulated controllers `options` asks for; `resume` picks up stored objects. */
export function startSimulation(writes: InternalWrites, store: Store, options: SimulateOptions): { resume(): void; close(): void } {
  const clock = options.clock ?? realClock;
  const recorder = new ServerEventRecorder(writes, clock);
  const deployments = options.deployments === false ? undefined : (options.deployments ?? {});
  const jobs = options.jobs === false ? undefined : (options.jobs ?? {});
  const parts: Part[] = [];
  if (deployments)
    parts.push(new DeploymentController(writes, store, recorder, clock), new ReplicaSetController(writes, store, recorder, clock));
  if (jobs) parts.push(new JobController(writes, store, recorder, clock));
  if (options.cronJobs !== false) parts.push(new CronJobController(writes, store, recorder, clock));
  if (options.endpoints !== false) parts.push(new EndpointsController(writes, store));
  if (options.statefulSets !== false) parts.push(new StatefulSetController(writes, store, recorder, clock));
  if (options.volumes !== false) parts.push(new VolumeController(writes, store, recorder));
  const kubelet = new KubeletSimulator(writes, store, recorder, clock, {
    nodes: options.nodes ?? 3,
    readyAfterMs: options.pods?.readyAfterMs ?? deployments?.readyAfterMs ?? 0,
    jobDurationMs: jobs?.durationMs ?? 0,
    jobFailures: jobs?.failures ?? 0,
    stopAfterMs: options.pods?.stopAfterMs ?? 0,
  });
  parts.push(kubelet);
  return {
    resume() {
      kubelet.start();
      for (const p of parts) p.resumeAll?.();
    },
    close() {
      for (const p of parts) p.close();
    },
  };
}
