/**
 * The endpoints and endpointslice controllers: a Service with a selector gets an Endpoints object
 * of its name and an EndpointSlice (`kubernetes.io/service-name` label) listing the matching
 * Pods that have an IP — ready ones as addresses, the others as not ready.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, labelsOf, nameOf, namespaceOf, uidOf } from '../base/meta.js';
import type { Store, StoreEvent } from '../storage/store.js';
import { WorkQueue } from '../base/work-queue.js';
import { controllerRef, isPodReady, PODS_KEY, podPhase } from './workload.js';

const SERVICES_KEY = '/services';
const ENDPOINTS_KEY = '/endpoints';
const SLICES_KEY = 'discovery.k8s.io/endpointslices';
const SERVICE_NAME = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';

function selectsPod(selector: JsonValue | undefined, pod: JsonObject): boolean {
  if (!isJsonObject(selector) || Object.keys(selector).length === 0) return false;
  const labels = labelsOf(pod);
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The port a service port reaches on a pod: a number, or a container port looked up by name. */
function targetPort(port: JsonObject, pod: JsonObject): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  const containers = getPath(pod, ['spec', 'containers']);
  for (const c of Array.isArray(containers) ? containers : []) {
    const ports = isJsonObject(c) ? c.ports : undefined;
    for (const p of Array.isArray(ports) ? ports : [])
      if (isJsonObject(p) && p.name === target && typeof p.containerPort === 'number') return p.containerPort;
  }
  return undefined;
}

export class EndpointsController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
  ) {
    this.queue = new WorkQueue('endpoints controller', (key) => this.reconcile(key));
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  resumeAll(): void {
    for (const svc of this.store.list(SERVICES_KEY)) this.queue.add(`${namespaceOf(svc)}/${nameOf(svc)}`);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === SERVICES_KEY) {
      this.queue.add(`${namespaceOf(e.object)}/${nameOf(e.object)}`);
      return;
    }
    if (e.resource !== PODS_KEY) return;
    for (const svc of this.store.list(SERVICES_KEY, namespaceOf(e.object))) {
      const selector = getPath(svc, ['spec', 'selector']);
      if (selectsPod(selector, e.object) || (e.prev && selectsPod(selector, e.prev))) this.queue.add(`${namespaceOf(svc)}/${nameOf(svc)}`);
    }
  }

  private reconcile(key: string): void {
    const [ns = '', name = ''] = key.split('/');
    const svc = this.store.get(SERVICES_KEY, ns, name);
    const selector = svc && getPath(svc, ['spec', 'selector']);
    if (!svc || isBeingDeleted(svc) || !isJsonObject(selector) || Object.keys(selector).length === 0) return;
    const pods = this.store
      .list(PODS_KEY, ns)
      .filter(
        (p) =>
          selectsPod(selector, p) && !isBeingDeleted(p) && podPhase(p) === 'Running' && typeof getPath(p, ['status', 'podIP']) === 'string',
      );
    const ports = ((getPath(svc, ['spec', 'ports']) as JsonValue[] | undefined) ?? []).filter(isJsonObject);
    const address = (p: JsonObject): JsonObject => ({
      ip: String(getPath(p, ['status', 'podIP'])),
      nodeName: String(getPath(p, ['spec', 'nodeName'])),
      targetRef: { kind: 'Pod', namespace: ns, name: nameOf(p), uid: uidOf(p) },
    });
    const first = pods[0];
    const epPorts = ports.map((p) => {
      const out: JsonObject = {
        port: (first && targetPort(p, first)) ?? (typeof p.targetPort === 'number' ? p.targetPort : Number(p.port)),
        protocol: String(p.protocol ?? 'TCP'),
      };
      if (typeof p.name === 'string' && p.name) out.name = p.name;
      return out;
    });
    const ready = pods.filter(isPodReady).map(address);
    const notReady = pods.filter((p) => !isPodReady(p)).map(address);
    const subset: JsonObject = {};
    if (ready.length) subset.addresses = ready;
    if (notReady.length) subset.notReadyAddresses = notReady;
    subset.ports = epPorts;
    const subsets = pods.length ? [subset] : [];
    this.write(ENDPOINTS_KEY, ns, name, { metadata: { name, namespace: ns, labels: { ...labelsOf(svc) } }, subsets }, (o) => ({
      ...o,
      subsets,
    }));
    const endpoints = pods.map((p) => ({
      addresses: [String(getPath(p, ['status', 'podIP']))],
      conditions: { ready: isPodReady(p), serving: isPodReady(p), terminating: false },
      nodeName: String(getPath(p, ['spec', 'nodeName'])),
      targetRef: { kind: 'Pod', namespace: ns, name: nameOf(p), uid: uidOf(p) },
    }));
    const sliceName = `${name}-rxkube`;
    this.write(
      SLICES_KEY,
      ns,
      sliceName,
      {
        metadata: {
          name: sliceName,
          namespace: ns,
          labels: { ...labelsOf(svc), [SERVICE_NAME]: name, [MANAGED_BY]: 'endpointslice-controller.k8s.io' },
          ownerReferences: [controllerRef(svc)],
        },
        addressType: 'IPv4',
        endpoints,
        ports: epPorts,
      },
      (o) => ({ ...o, endpoints, ports: epPorts }),
    );
  }

  private write(key: string, ns: string, name: string, fresh: JsonObject, update: (o: JsonObject) => JsonObject): void {
    if (!this.store.get(key, ns, name)) {
      this.writes.createInternal(key, fresh, 'kube-controller-manager');
      return;
    }
    this.writes.mutate(key, ns, name, (o) => {
      const next = update(o);
      if (deepEqual(next, o)) return false;
      Object.assign(o, next);
    });
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}
