import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { eventually, startWithClients, type Clients } from './helpers.js';
import { ManualClock } from './manual-clock.js';

function deployment(name: string, replicas: number, image = 'app:1'): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  };
}

const conditions = (d: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }) =>
  Object.fromEntries((d.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason ?? ''}`]));

describe('apiserver: simulated workload controllers', () => {
  describe('when on', () => {
    let c: Clients;
    let batch: k8s.BatchV1Api;
    let events: k8s.EventsV1Api;
    before(async () => {
      c = await startWithClients({ simulate: { pods: { readyAfterMs: 20 }, nodes: 2, jobs: { durationMs: 30, failures: 1 } } });
      batch = c.kc.makeApiClient(k8s.BatchV1Api);
      events = c.kc.makeApiClient(k8s.EventsV1Api);
    });
    after(async () => {
      await c.server.close();
    });

    it('registers Ready nodes', async () => {
      const nodes = await c.core.listNode();
      expect(nodes.items.map((n) => n.metadata?.name)).to.deep.equal(['rxkube-node-0', 'rxkube-node-1']);
      expect(nodes.items[0]?.status?.conditions?.find((x) => x.type === 'Ready')?.status).to.equal('True');
    });

    it('a Deployment owns a ReplicaSet (pod-template-hash, revision 1) that owns Pods bound to nodes and Ready', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('sim', 3) });
      const d = await eventually(async () => {
        const x = await c.apps.readNamespacedDeployment({ name: 'sim', namespace: 'default' });
        return x.status?.availableReplicas === 3 && conditions(x).Progressing === 'True/NewReplicaSetAvailable' ? x : undefined;
      }, 'three available');
      expect(d.status).to.deep.include({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
      expect(conditions(d)).to.deep.equal({ Available: 'True/MinimumReplicasAvailable', Progressing: 'True/NewReplicaSetAvailable' });
      expect(d.metadata?.annotations?.['deployment.kubernetes.io/revision']).to.equal('1');
      const rsList = await c.apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=sim' });
      expect(rsList.items).to.have.length(1);
      const rs = rsList.items[0];
      const hash = rs.metadata?.labels?.['pod-template-hash'];
      expect(rs.metadata?.name).to.equal(`sim-${hash}`);
      expect(rs.metadata?.annotations?.['deployment.kubernetes.io/revision']).to.equal('1');
      expect(rs.metadata?.ownerReferences?.[0]).to.deep.include({ kind: 'Deployment', name: 'sim', controller: true });
      expect(rs.spec?.selector?.matchLabels).to.deep.equal({ app: 'sim', 'pod-template-hash': hash });
      const pods = await c.core.listNamespacedPod({ namespace: 'default', labelSelector: `pod-template-hash=${hash}` });
      expect(pods.items).to.have.length(3);
      for (const p of pods.items) {
        expect(p.metadata?.ownerReferences?.[0]).to.deep.include({ kind: 'ReplicaSet', name: rs.metadata?.name, controller: true });
        expect(p.spec?.nodeName).to.match(/^rxkube-node-[01]$/);
        expect(p.status?.phase).to.equal('Running');
        expect(p.status?.podIP).to.match(/^10\.244\./);
        expect(p.status?.conditions?.find((x) => x.type === 'Ready')?.status).to.equal('True');
      }
    });

    it('records ScalingReplicaSet on the Deployment, SuccessfulCreate on the ReplicaSet, Scheduled on the Pods', async () => {
      const list = await events.listNamespacedEvent({ namespace: 'default' });
      const of = (kind: string, reason: string) => list.items.filter((e) => e.regarding?.kind === kind && e.reason === reason);
      expect(of('Deployment', 'ScalingReplicaSet').some((e) => /^Scaled up replica set sim-\w+ from 0 to 3$/.test(e.note ?? ''))).to.equal(
        true,
      );
      expect(of('ReplicaSet', 'SuccessfulCreate').filter((e) => /^Created pod: sim-/.test(e.note ?? ''))).to.have.length(3);
      const scheduled = of('Pod', 'Scheduled').find((e) => e.regarding?.name?.startsWith('sim-'));
      expect(scheduled?.note).to.match(/^Successfully assigned default\/sim-\w+-\w+ to rxkube-node-[01]$/);
      expect(scheduled?.reportingController).to.equal('default-scheduler');
    });

    it('a new template rolls out to a second ReplicaSet (revision 2) and the old one scales to 0', async () => {
      await c.apps.patchNamespacedDeployment(
        { name: 'sim', namespace: 'default', body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
      );
      const rolled = await eventually(async () => {
        const x = await c.apps.readNamespacedDeployment({ name: 'sim', namespace: 'default' });
        return x.status?.observedGeneration === 2 &&
          x.status.updatedReplicas === 3 &&
          x.status.replicas === 3 &&
          x.status.availableReplicas === 3
          ? x
          : undefined;
      }, 'rolled out');
      expect(rolled.metadata?.annotations?.['deployment.kubernetes.io/revision']).to.equal('2');
      const rs = (await c.apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=sim' })).items;
      const byRevision = Object.fromEntries(
        rs.map((r) => [r.metadata?.annotations?.['deployment.kubernetes.io/revision'], r.spec?.replicas]),
      );
      expect(byRevision).to.deep.equal({ '1': 0, '2': 3 });
    });

    it('scale through the scale subresource reaches the ReplicaSet and the Pods', async () => {
      await c.apps.patchNamespacedDeploymentScale(
        { name: 'sim', namespace: 'default', body: { spec: { replicas: 1 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await eventually(async () => {
        const pods = await c.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=sim' });
        return (
          pods.items.length === 1 &&
          (await c.apps.readNamespacedDeployment({ name: 'sim', namespace: 'default' })).status?.availableReplicas === 1
        );
      }, 'one pod left');
    });

    it('a Service gets Endpoints and an EndpointSlice listing its ready Pods', async () => {
      await c.core.createNamespacedService({
        namespace: 'default',
        body: { metadata: { name: 'sim' }, spec: { selector: { app: 'sim' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
      });
      const ep = await eventually(async () => {
        const e = await c.core.readNamespacedEndpoints({ name: 'sim', namespace: 'default' }).catch(() => undefined);
        return e?.subsets?.[0]?.addresses?.length === 1 ? e : undefined;
      }, 'endpoints');
      expect(ep.subsets?.[0]?.ports).to.deep.equal([{ name: 'http', port: 8080, protocol: 'TCP' }]);
      expect(ep.subsets?.[0]?.addresses?.[0]?.ip).to.match(/^10\.244\./);
      const discovery = c.kc.makeApiClient(k8s.DiscoveryV1Api);
      const slices = await discovery.listNamespacedEndpointSlice({ namespace: 'default', labelSelector: 'kubernetes.io/service-name=sim' });
      expect(slices.items).to.have.length(1);
      expect(slices.items[0]?.endpoints?.map((e) => e.conditions?.ready)).to.deep.equal([true]);
    });

    it('a Job runs its Pods to Complete, retrying a failure within backoffLimit, and records its Events', async () => {
      await batch.createNamespacedJob({
        namespace: 'default',
        body: {
          metadata: { name: 'once' },
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'a' }] } } },
        },
      });
      const job = await eventually(async () => {
        const j = await batch.readNamespacedJob({ name: 'once', namespace: 'default' });
        return conditions(j).Complete === 'True/CompletionsReached' ? j : undefined;
      }, 'complete');
      expect(job.status).to.deep.include({ succeeded: 1, failed: 1 });
      expect(job.status?.completionTime).to.be.a('date');
      expect(job.spec?.selector?.matchLabels?.['batch.kubernetes.io/controller-uid']).to.equal(job.metadata?.uid);
      const list = await events.listNamespacedEvent({ namespace: 'default', fieldSelector: 'regarding.name=once' });
      expect(list.items.map((e) => e.reason)).to.include.members(['SuccessfulCreate', 'Completed']);
    });

    it('a Job with backoffLimit 0 fails at its first failed Pod (Failed, BackoffLimitExceeded)', async () => {
      await batch.createNamespacedJob({
        namespace: 'default',
        body: {
          metadata: { name: 'fragile' },
          spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'a' }] } } },
        },
      });
      await eventually(
        async () =>
          conditions(await batch.readNamespacedJob({ name: 'fragile', namespace: 'default' })).Failed === 'True/BackoffLimitExceeded',
        'failed',
      );
    });
  });

  it('a bound Pod deleted with a grace period is Terminating until its containers stop; grace period 0 removes it at once', async () => {
    const c = await startWithClients({ simulate: { pods: { stopAfterMs: 60_000 } } });
    try {
      await c.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'graceful' }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'a', image: 'a' }] } },
      });
      await eventually(async () => (await c.core.readNamespacedPod({ name: 'graceful', namespace: 'default' })).spec?.nodeName, 'bound');
      await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default' });
      const marked = await c.core.readNamespacedPod({ name: 'graceful', namespace: 'default' });
      expect(marked.metadata?.deletionGracePeriodSeconds).to.equal(1);
      expect(marked.metadata?.deletionTimestamp).to.not.equal(undefined);
      await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 0 });
      await eventually(
        async () => (await c.core.listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name=graceful' })).items.length === 0,
        'gone',
      );
    } finally {
      await c.server.close();
    }
  });

  it('a ReplicaSet with the largest replicas an int32 holds creates Pods in paced batches, the server answering meanwhile, and scales back down', async () => {
    const c = await startWithClients({ simulate: { nodes: 0 } });
    try {
      const podsNow = async (): Promise<number> => (await c.core.listNamespacedPod({ namespace: 'huge' })).items.length;
      await c.core.createNamespace({ body: { metadata: { name: 'huge' } } });
      const labels = { app: 'huge' };
      await c.apps.createNamespacedReplicaSet({
        namespace: 'huge',
        body: {
          metadata: { name: 'huge' },
          spec: {
            replicas: 2 ** 31 - 1,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: 'a', image: 'a' }] } },
          },
        },
      });
      // One pass creating every Pod would hold the event loop for good: no request would be answered again.
      await eventually(async () => (await podsNow()) >= 1000, 'two batches of Pods');
      await c.apps.patchNamespacedReplicaSet(
        { name: 'huge', namespace: 'huge', body: { spec: { replicas: 3 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await eventually(async () => (await podsNow()) === 3, 'scaled down to 3', 60_000);
    } finally {
      await c.server.close();
    }
  });

  it('creates at most 500 Pods per owner per second of its clock, as the real controllers burst', async () => {
    const clock = new ManualClock();
    const c = await startWithClients({ simulate: { nodes: 0, clock } });
    try {
      const podsNow = async (): Promise<number> => (await c.core.listNamespacedPod({ namespace: 'default' })).items.length;
      const labels = { app: 'paced' };
      await c.apps.createNamespacedReplicaSet({
        namespace: 'default',
        body: {
          metadata: { name: 'paced' },
          spec: {
            replicas: 1200,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: 'a', image: 'a' }] } },
          },
        },
      });
      await eventually(async () => (await podsNow()) === 500, 'the first burst');
      await eventually(() => clock.pending() >= 1, 'the resync for the next second');
      expect(await podsNow()).to.equal(500);
      clock.advance(1000);
      await eventually(async () => (await podsNow()) === 1000, 'the second burst');
      clock.advance(1000);
      await eventually(async () => (await podsNow()) === 1200, 'the rest');
    } finally {
      await c.server.close();
    }
  });

  it('takes a clock: Pods become Ready when the test moves time past readyAfterMs, not before', async () => {
    const clock = new ManualClock();
    const c = await startWithClients({ simulate: { pods: { readyAfterMs: 60_000 }, clock } });
    try {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('slow', 2) });
      await eventually(
        async () =>
          (await c.core.listNamespacedPod({ namespace: 'default' })).items.filter((p) => p.status?.phase === 'Running').length === 2,
        'running',
      );
      await eventually(() => clock.pending() >= 2, 'readiness timers');
      expect((await c.apps.readNamespacedDeployment({ name: 'slow', namespace: 'default' })).status?.availableReplicas).to.equal(undefined);
      clock.advance(60_000);
      await eventually(
        async () => (await c.apps.readNamespacedDeployment({ name: 'slow', namespace: 'default' })).status?.availableReplicas === 2,
        'available',
      );
    } finally {
      await c.server.close();
    }
  });

  it('is off by default: no nodes, and a Deployment gets no status or ReplicaSets', async () => {
    const c = await startWithClients();
    try {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('nosim', 1) });
      // A write after the create, acknowledged by the server, happens after anything the create scheduled.
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'marker' } } });
      await new Promise((r) => setImmediate(r));
      const d = await c.apps.readNamespacedDeployment({ name: 'nosim', namespace: 'default' });
      expect(d.status?.observedGeneration).to.equal(undefined);
      expect((await c.apps.listNamespacedReplicaSet({ namespace: 'default' })).items).to.have.length(0);
      expect((await c.core.listNode()).items).to.have.length(0);
    } finally {
      await c.server.close();
    }
  });

  it('rejects a negative delay or node count', async () => {
    const { startApiServer } = await import('../src/index.js');
    for (const simulate of [{ pods: { readyAfterMs: -1 } }, { nodes: 1.5 }, { jobs: { durationMs: -5 } }]) {
      let error: unknown;
      try {
        await startApiServer({ simulate });
      } catch (err) {
        error = err;
      }
      expect(String(error)).to.match(/^TypeError: startApiServer: simulate\./);
    }
  });
});
