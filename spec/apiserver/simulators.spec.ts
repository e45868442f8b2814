import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { eventually, RecordingWatch, startWithClients, type Clients } from './helpers.js';

function deployment(name: string, replicas: number): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
    },
  };
}

const conditions = (d: k8s.V1Deployment) => Object.fromEntries((d.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

describe('apiserver: simulated deployment controller', () => {
  describe('when on', () => {
    let c: Clients;
    before(async () => {
      c = await startWithClients({ simulate: { deployments: { readyAfterMs: 30 } } });
    });
    after(async () => {
      await c.server.close();
    });

    it('observes the generation at once (Progressing), then reports replicas ready and available', async () => {
      const w = await RecordingWatch.start(c.kc, '/apis/apps/v1/namespaces/default/deployments', { resourceVersion: String(c.server.stats().resourceVersion) });
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('sim', 3) });
      const events = await w.waitFor((e) => e.length >= 3, 'create, progress and ready');
      w.stop();
      const [created, progressing, ready] = events.map((e) => e.object as k8s.V1Deployment);
      expect(created?.status?.observedGeneration).to.equal(undefined);
      expect(progressing?.status).to.deep.include({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, unavailableReplicas: 3 });
      expect(conditions(progressing as k8s.V1Deployment)).to.deep.equal({
        Available: 'False/MinimumReplicasUnavailable',
        Progressing: 'True/ReplicaSetUpdated',
      });
      expect(ready?.status).to.deep.include({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
      expect(ready?.status?.unavailableReplicas).to.equal(undefined);
      expect(conditions(ready as k8s.V1Deployment)).to.deep.equal({
        Available: 'True/MinimumReplicasAvailable',
        Progressing: 'True/NewReplicaSetAvailable',
      });
      expect(ready?.status?.conditions?.find((x) => x.type === 'Progressing')?.message).to.match(/^ReplicaSet "sim-[a-z0-9]{10}" has successfully progressed\.$/);
    });

    it('follows a new generation (scale up) to the new replica count', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('scale', 1) });
      await eventually(async () => (await c.apps.readNamespacedDeployment({ name: 'scale', namespace: 'default' })).status?.availableReplicas === 1, 'one ready');
      await c.apps.patchNamespacedDeployment(
        { name: 'scale', namespace: 'default', body: { spec: { replicas: 4 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const d = await eventually(async () => {
        const x = await c.apps.readNamespacedDeployment({ name: 'scale', namespace: 'default' });
        return x.status?.availableReplicas === 4 ? x : undefined;
      }, 'four ready');
      expect(d.status?.observedGeneration).to.equal(2);
    });
  });

  it('is off by default: status stays empty', async () => {
    const c = await startWithClients();
    try {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('nosim', 1) });
      // A write after the create, acknowledged by the server, happens after anything the create scheduled.
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'marker' } } });
      await new Promise((r) => setImmediate(r));
      const d = await c.apps.readNamespacedDeployment({ name: 'nosim', namespace: 'default' });
      expect(d.status?.observedGeneration).to.equal(undefined);
    } finally {
      await c.server.close();
    }
  });
});
