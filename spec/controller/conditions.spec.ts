/** status.conditions written by a controller with server-side apply, next to other managers' conditions. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { findStatusCondition, statusCondition, type StatusCondition } from '../../lib/core/index.js';
import { classifyError, customResourceDefinition, descriptorOf, statusConditionsSchema } from '../../lib/kube/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

interface Gadget extends KubernetesObject {
  spec: { healthy: boolean; note?: string };
  status?: { conditions?: StatusCondition[] };
}

const gadgetCrd = customResourceDefinition({
  group: 'sample.rxkube.dev',
  kind: 'Gadget',
  plural: 'gadgets',
  spec: { type: 'object', properties: { healthy: { type: 'boolean' }, note: { type: 'string' } } },
  status: { type: 'object', properties: { conditions: statusConditionsSchema } },
});
const GADGET = descriptorOf(gadgetCrd);

const gadget = (name: string, healthy: boolean): Gadget => ({
  apiVersion: GADGET.apiVersion,
  kind: GADGET.kind,
  metadata: { name, namespace: 'default' },
  spec: { healthy },
});

/** Ready from spec.healthy, at a clock that moves a minute per run (lastTransitionTime has seconds). */
function readyReconciler(): Reconciler<Gadget> {
  let runs = 0;
  return {
    reconcile(g) {
      const now = new Date(Date.UTC(2026, 10, 24, 1, runs++));
      const ready = statusCondition(
        g,
        { type: 'Ready', status: g.spec.healthy, reason: g.spec.healthy ? 'Healthy' : 'Unhealthy', message: `run ${runs}` },
        now,
      );
      return UpdateControl.patchStatus({ ...g, status: { conditions: [ready] } });
    },
  };
}

describe('controller: status conditions with server-side apply', () => {
  let cluster: TestCluster;
  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [gadgetCrd] });
  });
  afterEach(() => cluster.close());

  const gadgets = () => cluster.client.resource<Gadget>(GADGET);
  const readyOf = async (name: string) => findStatusCondition(await gadgets().find({ name, namespace: 'default' }), 'Ready');

  it('Ready keeps its lastTransitionTime while its status holds and moves when it flips; observedGeneration follows the spec', async () => {
    const op = cluster.operator();
    op.register(readyReconciler(), { resource: GADGET });
    await op.start();
    await cluster.apply(GADGET, gadget('g', true));
    const first = await eventually('Ready True', async () => ((await readyOf('g'))?.status === 'True' ? readyOf('g') : undefined));
    expect(first).to.include({ reason: 'Healthy', observedGeneration: 1, lastTransitionTime: '2026-11-24T01:00:00Z' });

    await cluster.apply(GADGET, { ...gadget('g', true), spec: { healthy: true, note: 'still healthy' } });
    const same = await eventually('the run of generation 2', async () =>
      (await readyOf('g'))?.observedGeneration === 2 ? readyOf('g') : undefined,
    );
    expect(same).to.include({ status: 'True', message: 'run 2', lastTransitionTime: '2026-11-24T01:00:00Z' });

    await cluster.apply(GADGET, gadget('g', false));
    const flipped = await eventually('Ready False', async () => ((await readyOf('g'))?.status === 'False' ? readyOf('g') : undefined));
    expect(flipped).to.include({ reason: 'Unhealthy', observedGeneration: 3, lastTransitionTime: '2026-11-24T01:02:00Z' });
  });

  it("listType=map: another field manager's condition survives the controller's applies, and the controller's survives theirs", async function () {
    if (!(await serverMergesMapLists(cluster))) {
      // The embedded server does not merge `x-kubernetes-list-type: map` lists in server-side apply yet
      // (issue 14): a second manager's condition is a 409 there. Kept as is, and pending, until it does.
      this.skip();
    }
    const op = cluster.operator();
    op.register(readyReconciler(), { resource: GADGET, fieldManager: 'gadget-controller' });
    await op.start();
    await cluster.apply(GADGET, gadget('g', true));
    await eventually('Ready True', async () => (await readyOf('g'))?.status === 'True');

    // Another controller reports its own condition on the same object, without force.
    const synced = statusCondition(undefined, { type: 'Synced', status: true, reason: 'InSync', message: 'mirrored' });
    await gadgets().applyStatus(
      { ...gadget('g', true), status: { conditions: [synced] } },
      {
        fieldManager: 'mirror-controller',
      },
    );
    const both = await gadgets().get({ name: 'g', namespace: 'default' });
    expect(both.status?.conditions?.map((c) => `${c.type}=${c.status}`)).to.have.members(['Ready=True', 'Synced=True']);

    // The controller's next apply (a spec change) keeps the other manager's condition.
    await cluster.apply(GADGET, gadget('g', false));
    await eventually('Ready False', async () => (await readyOf('g'))?.status === 'False');
    const after = await gadgets().get({ name: 'g', namespace: 'default' });
    expect(after.status?.conditions?.map((c) => `${c.type}=${c.status}`)).to.have.members(['Ready=False', 'Synced=True']);
    const owners = (after.metadata?.managedFields ?? []).filter((m) => m.subresource === 'status').map((m) => m.manager);
    expect(owners).to.have.members(['gadget-controller', 'mirror-controller']);
  });
});

/** Whether two managers' items of a `listType=map` list merge under server-side apply (rather than conflict). */
async function serverMergesMapLists(cluster: TestCluster): Promise<boolean> {
  const probe = cluster.client.resource<Gadget>(GADGET);
  const condition = (type: string) => statusCondition(undefined, { type, status: true, reason: 'Probe' });
  await cluster.apply(GADGET, gadget('probe', true));
  try {
    await probe.applyStatus({ ...gadget('probe', true), status: { conditions: [condition('A')] } }, { fieldManager: 'probe-a' });
    await probe.applyStatus({ ...gadget('probe', true), status: { conditions: [condition('B')] } }, { fieldManager: 'probe-b' });
    return true;
  } catch (err) {
    if (classifyError(err) === 'conflict') return false;
    throw err;
  } finally {
    await probe.delete({ name: 'probe', namespace: 'default' });
  }
}
