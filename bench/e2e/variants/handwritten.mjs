// Hand-written variant of the end-to-end bench: client-node 2's informer and a work queue (one
// run per key at a time, 50 at once, events during a run coalesced into one follow-up), status
// written with a JSON patch of the status subresource.
import * as k8s from '@kubernetes/client-node';

globalThis.e2eMark?.('imports');
const group = 'bench.rxkube.io';
const version = 'v1';
const plural = 'counters';
const namespace = 'default';
const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const api = kc.makeApiClient(k8s.CustomObjectsApi);
const informer = k8s.makeInformer(kc, `/apis/${group}/${version}/namespaces/${namespace}/${plural}`, () =>
  api.listNamespacedCustomObject({ group, version, namespace, plural }),
);

const queue = new Set();
const running = new Set();
const dirty = new Set();
let active = 0;
const enqueue = (name) => {
  if (running.has(name)) dirty.add(name);
  else queue.add(name);
  pump();
};
const pump = () => {
  while (active < 50 && queue.size > 0) {
    const name = queue.values().next().value;
    queue.delete(name);
    running.add(name);
    active++;
    reconcile(name)
      .catch(() => setTimeout(() => enqueue(name), 100))
      .finally(() => {
        active--;
        running.delete(name);
        if (dirty.delete(name)) queue.add(name);
        pump();
      });
  }
};
async function reconcile(name) {
  globalThis.e2eRuns = (globalThis.e2eRuns ?? 0) + 1;
  const counter = informer.get(name, namespace);
  if (!counter) return;
  const status = { observedGeneration: counter.metadata.generation, value: counter.spec.value * 2 };
  if (counter.status?.observedGeneration === status.observedGeneration && counter.status?.value === status.value) return;
  await api.patchNamespacedCustomObjectStatus({
    group,
    version,
    namespace,
    plural,
    name,
    body: [{ op: 'add', path: '/status', value: status }],
  });
}
for (const event of ['add', 'update']) informer.on(event, (obj) => enqueue(obj.metadata.name));
informer.on('error', () => setTimeout(() => informer.start(), 1000));
await informer.start();
globalThis.e2eMark?.('started');
