/**
 * Nodes and what runs on them, kwok-style: a number of Ready Nodes; the scheduler binds each new
 * Pod to one (spec.nodeName, PodScheduled, the Scheduled event) once the claims its volumes name
 * are Bound (until then Unschedulable, FailedScheduling); the kubelet starts it (Running,
 * a pod IP) and makes it Ready after a delay; a Job's pods finish after their duration (the first
 * `failures` of each Job fail); a bound Pod deleted gracefully goes once its grace period is over.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import { ApiError } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, namespaceOf, ownerRefsOf, readMeta, resourceVersionOf, timestamp, uidOf } from '../base/meta.js';
import type { Store, StoreEvent } from '../storage/store.js';
import { Timers, type SimulationClock } from './clock.js';
import { WorkQueue } from '../base/work-queue.js';
import type { ServerEventRecorder } from './recorder.js';
import { PVCS_KEY } from './volumes.js';
import { condition, PODS_KEY, podPhase } from './workload.js';

export const NODES_KEY = '/nodes';
const KUBELET_VERSION = 'v1.32.0-rxkube';

export interface KubeletOptions {
  nodes: number;
  readyAfterMs: number;
  jobDurationMs: number;
  jobFailures: number;
  /** How long a deleted Pod's containers take to stop; the grace period caps it. */
  stopAfterMs: number;
}

export function nodeName(i: number): string {
  return `rxkube-node-${i}`;
}

function nodeObject(i: number, now: string): JsonObject {
  const capacity = { cpu: '32', memory: '256Gi', pods: '110', 'ephemeral-storage': '1Ti' };
  return {
    metadata: {
      name: nodeName(i),
      labels: { 'kubernetes.io/hostname': nodeName(i), 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'rxkube' },
    },
    spec: {},
    status: {
      capacity,
      allocatable: capacity,
      addresses: [
        { type: 'InternalIP', address: `10.0.${i >> 8}.${(i & 255) + 1}` },
        { type: 'Hostname', address: nodeName(i) },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
        },
        ...['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
          type,
          status: 'False',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          reason: `KubeletHas${type === 'MemoryPressure' ? 'SufficientMemory' : type === 'DiskPressure' ? 'NoDiskPressure' : 'SufficientPID'}`,
          message: 'kubelet is ready',
        })),
      ],
      nodeInfo: {
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: KUBELET_VERSION,
        operatingSystem: 'linux',
        architecture: 'amd64',
        containerRuntimeVersion: 'rxkube://1.0',
        osImage: 'rxkube',
        kernelVersion: '',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}

export class KubeletSimulator {
  private readonly timers: Timers;
  private readonly unsubscribe: () => void;
  private nextNode = 0;
  private nextIp = 0;
  /**
   * Pods to bind and Pods to start, each once however many events come, on a later turn; a queue
   * stops with close() and a failure is logged, never thrown out of a timer.
   */
  private readonly binds = new WorkQueue('scheduler', (key) => {
    const [ns = '', name = ''] = key.split('/');
    this.bind(ns, name);
  });
  private readonly starts = new WorkQueue('kubelet', (key) => {
    const [ns = '', name = ''] = key.split('/');
    this.run(ns, name);
  });

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    private readonly clock: SimulationClock,
    private readonly options: KubeletOptions,
  ) {
    this.timers = new Timers(clock);
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  private now(): string {
    return timestamp(new Date(this.clock.now()));
  }

  /** Registers the nodes (status included, as a kubelet posts it) and picks up existing pods. */
  start(): void {
    for (let i = 0; i < this.options.nodes; i++) {
      if (this.store.get(NODES_KEY, '', nodeName(i))) continue;
      const created = this.writes.createInternal(NODES_KEY, nodeObject(i, this.now()), 'kubelet');
      if (created)
        this.writes.mutate(NODES_KEY, '', nodeName(i), (n) => void (n.status = nodeObject(i, this.now()).status), {
          subresource: 'status',
          manager: 'kubelet',
        });
    }
    for (const pod of this.store.list(PODS_KEY)) this.consider(pod);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === PVCS_KEY && e.type !== 'DELETED' && getPath(e.object, ['status', 'phase']) === 'Bound') {
      // A Pod waiting for this claim may be scheduled now.
      const claim = nameOf(e.object);
      for (const pod of this.store.list(PODS_KEY, namespaceOf(e.object))) if (claimsOf(pod).includes(claim)) this.consider(pod);
      return;
    }
    if (e.resource !== PODS_KEY) return;
    if (e.type === 'DELETED') {
      this.timers.clear(`${namespaceOf(e.object)}/${nameOf(e.object)}`);
      return;
    }
    this.consider(e.object);
  }

  private consider(pod: JsonObject): void {
    const ns = namespaceOf(pod);
    const name = nameOf(pod);
    const key = `${ns}/${name}`;
    const nodeOf = getPath(pod, ['spec', 'nodeName']);
    if (isBeingDeleted(pod)) {
      if (this.timers.has(`${key}/delete`)) return;
      const grace = readMeta(pod).deletionGracePeriodSeconds;
      this.timers.clear(key);
      const uid = uidOf(pod);
      const graceMs = typeof grace === 'number' ? grace * 1000 : 0;
      this.timers.set(`${key}/delete`, Math.min(graceMs, this.options.stopAfterMs), () =>
        this.writes.forceDeleteInternal(PODS_KEY, ns, name, uid),
      );
      return;
    }
    if (this.options.nodes === 0) return;
    if (typeof nodeOf !== 'string' || nodeOf === '') {
      this.binds.add(key);
      return;
    }
    if (podPhase(pod) === 'Pending') this.starts.add(key);
  }

  private bind(ns: string, name: string): void {
    const pod = this.store.get(PODS_KEY, ns, name);
    if (!pod || isBeingDeleted(pod) || getPath(pod, ['spec', 'nodeName'])) return;
    const waiting = this.unschedulable(pod);
    if (waiting) {
      this.markUnschedulable(pod, waiting);
      return;
    }
    const node = nodeName(this.nextNode++ % this.options.nodes);
    let bound: JsonObject;
    try {
      bound = this.writes.bind(ns, name, { target: { kind: 'Node', name: node } }, { fieldManager: 'default-scheduler', now: this.now() });
    } catch (err) {
      // Gone, being deleted or bound meanwhile (by another event, or a client's pods/binding).
      if (err instanceof ApiError) return;
      throw err;
    }
    this.recorder.record(bound, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${node}`, 'default-scheduler');
  }

  /** Why the scheduler's volume binding keeps the Pod off every Node: a claim missing, going or not Bound. */
  private unschedulable(pod: JsonObject): string | undefined {
    for (const claimName of claimsOf(pod)) {
      const claim = this.store.get(PVCS_KEY, namespaceOf(pod), claimName);
      if (!claim) return `persistentvolumeclaim "${claimName}" not found`;
      if (isBeingDeleted(claim)) return `persistentvolumeclaim "${claimName}" is being deleted`;
      if (getPath(claim, ['status', 'phase']) !== 'Bound') return 'pod has unbound immediate PersistentVolumeClaims';
    }
    return undefined;
  }

  /** PodScheduled False (Unschedulable) and a FailedScheduling Event, as the scheduler reports it; once per reason. */
  private markUnschedulable(pod: JsonObject, why: string): void {
    const n = this.options.nodes;
    const message = `0/${n} nodes are available: ${why}. preemption: 0/${n} nodes are available: ${n} Preemption is not helpful for scheduling.`;
    const updated = this.writes.mutate(
      PODS_KEY,
      namespaceOf(pod),
      nameOf(pod),
      (p) => {
        const status = isJsonObject(p.status) ? p.status : (p.status = {});
        const others = (Array.isArray(status.conditions) ? status.conditions : []).filter(
          (c) => !(isJsonObject(c) && c.type === 'PodScheduled'),
        );
        status.conditions = [...others, condition(status.conditions, 'PodScheduled', 'False', 'Unschedulable', message, this.now(), false)];
      },
      { subresource: 'status', manager: 'default-scheduler' },
    );
    if (updated && resourceVersionOf(updated) !== resourceVersionOf(pod))
      this.recorder.record(updated, 'Warning', 'FailedScheduling', message, 'default-scheduler');
  }

  private containerStatuses(pod: JsonObject, ready: boolean, terminated?: { exitCode: number; reason: string }): JsonObject[] {
    const containers = getPath(pod, ['spec', 'containers']);
    const started = getPath(pod, ['status', 'startTime']) ?? this.now();
    return (Array.isArray(containers) ? containers : []).filter(isJsonObject).map((c) => ({
      name: String(c.name),
      image: String(c.image),
      imageID: `${String(c.image)}@sha256:0`,
      containerID: `rxkube://${uidOf(pod).slice(0, 8)}-${String(c.name)}`,
      ready,
      started: !terminated,
      restartCount: 0,
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it: the union of the two literals is not a JsonObject (its absent keys are `undefined`)
      state: (terminated
        ? { terminated: { exitCode: terminated.exitCode, reason: terminated.reason, startedAt: started, finishedAt: this.now() } }
        : { running: { startedAt: started } }) as JsonObject,
    }));
  }

  private podConditions(pod: JsonObject, ready: boolean, reason = ''): JsonObject[] {
    const prev = getPath(pod, ['status', 'conditions']);
    const now = this.now();
    const notReady = ready ? '' : reason || 'ContainersNotReady';
    return [
      condition(prev, 'PodReadyToStartContainers', 'True', '', '', now, false),
      condition(prev, 'Initialized', 'True', '', '', now, false),
      condition(prev, 'Ready', ready ? 'True' : 'False', notReady, '', now, false),
      condition(prev, 'ContainersReady', ready ? 'True' : 'False', notReady, '', now, false),
      condition(prev, 'PodScheduled', 'True', '', '', now, false),
    ].map(withoutEmptyReason);
  }

  private run(ns: string, name: string): void {
    let started = false;
    const pod = this.writes.mutate(
      PODS_KEY,
      ns,
      name,
      (p) => {
        if (isBeingDeleted(p) || podPhase(p) !== 'Pending') return false;
        started = true;
        const node = String(getPath(p, ['spec', 'nodeName']));
        const nodeIndex = Number(node.slice(node.lastIndexOf('-') + 1)) || 0;
        const ip = this.nextIp++;
        p.status = {
          ...(isJsonObject(p.status) ? p.status : {}),
          phase: 'Running',
          hostIP: `10.0.${nodeIndex >> 8}.${(nodeIndex & 255) + 1}`,
          podIP: `10.244.${(ip >> 8) & 255}.${(ip & 255) + 1}`,
          podIPs: [{ ip: `10.244.${(ip >> 8) & 255}.${(ip & 255) + 1}` }],
          startTime: this.now(),
        };
        p.status.conditions = this.podConditions(p, false);
        p.status.containerStatuses = this.containerStatuses(p, false);
      },
      { subresource: 'status', manager: 'kubelet' },
    );
    if (!pod || !started) return;
    const containers = getPath(pod, ['spec', 'containers']);
    for (const c of Array.isArray(containers) ? containers.filter(isJsonObject) : []) {
      this.recorder.record(pod, 'Normal', 'Pulled', `Container image "${String(c.image)}" already present on machine`, 'kubelet');
      this.recorder.record(pod, 'Normal', 'Created', `Created container: ${String(c.name)}`, 'kubelet');
      this.recorder.record(pod, 'Normal', 'Started', `Started container ${String(c.name)}`, 'kubelet');
    }
    const key = `${ns}/${name}`;
    const job = ownerRefsOf(pod).find((r) => r.controller && r.kind === 'Job');
    this.timers.set(key, this.options.readyAfterMs, () => {
      this.ready(ns, name);
      if (job)
        this.timers.set(key, Math.max(0, this.options.jobDurationMs - this.options.readyAfterMs), () => this.finish(ns, name, job.uid));
    });
  }

  private ready(ns: string, name: string): void {
    this.writes.mutate(
      PODS_KEY,
      ns,
      name,
      (p) => {
        if (isBeingDeleted(p) || podPhase(p) !== 'Running') return false;
        const status = p.status as JsonObject;
        status.conditions = this.podConditions(p, true);
        status.containerStatuses = this.containerStatuses(p, true);
      },
      { subresource: 'status', manager: 'kubelet' },
    );
  }

  /** A Job's pod ends: Failed while its Job has fewer failed pods than `jobFailures`, else Succeeded. */
  private finish(ns: string, name: string, jobUid: string): void {
    const failedSoFar = this.store
      .list(PODS_KEY, ns)
      .filter((p) => podPhase(p) === 'Failed' && ownerRefsOf(p).some((r) => r.uid === jobUid)).length;
    const fail = failedSoFar < this.options.jobFailures;
    this.writes.mutate(
      PODS_KEY,
      ns,
      name,
      (p) => {
        if (isBeingDeleted(p) || podPhase(p) !== 'Running') return false;
        const status = p.status as JsonObject;
        status.phase = fail ? 'Failed' : 'Succeeded';
        status.conditions = this.podConditions(p, false, 'PodCompleted');
        status.containerStatuses = this.containerStatuses(
          p,
          false,
          fail ? { exitCode: 1, reason: 'Error' } : { exitCode: 0, reason: 'Completed' },
        );
      },
      { subresource: 'status', manager: 'kubelet' },
    );
  }

  close(): void {
    this.unsubscribe();
    this.timers.close();
    this.binds.close();
    this.starts.close();
  }
}

/** The claims a Pod's volumes name. */
function claimsOf(pod: JsonObject): string[] {
  const volumes = getPath(pod, ['spec', 'volumes']);
  return (Array.isArray(volumes) ? volumes : [])
    .map((v) => getPath(v, ['persistentVolumeClaim', 'claimName']))
    .filter((c): c is string => typeof c === 'string');
}

function withoutEmptyReason(c: JsonObject): JsonObject {
  const out = { ...c };
  delete out.lastUpdateTime;
  if (out.reason === '') delete out.reason;
  if (out.message === '') delete out.message;
  return out;
}
