import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import type { SimulateOptions } from '../src/index.js';
import { eventually, failure, isGone, raw, RecordingWatch, startWithClients, type Clients } from './helpers.js';
import { ManualClock } from './manual-clock.js';

type SetSpec = Partial<k8s.V1StatefulSetSpec>;

function statefulSet(name: string, replicas: number, spec: SetSpec = {}): k8s.V1StatefulSet {
  return {
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
      ...spec,
    },
  };
}

const withClaims: SetSpec = {
  volumeClaimTemplates: [
    { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  ],
};

const isReadyObject = (obj: object): boolean =>
  ((obj as k8s.V1Pod).status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True');

const image2 = { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } };
const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

describe('apiserver: simulated StatefulSets and volumes', function () {
  this.timeout(30_000);
  let c: Clients;
  let clock: ManualClock | undefined;
  const ns = 'default';

  /** A server simulating in real time, or (`manualClock`) on a clock the test moves. */
  async function start(simulate: SimulateOptions, manualClock = false): Promise<ManualClock> {
    const own = new ManualClock();
    clock = manualClock ? own : undefined;
    c = await startWithClients({ simulate: { ...simulate, ...(clock ? { clock } : {}) } });
    return own;
  }
  afterEach(async () => {
    await c?.server.close();
  });

  const podNames = async (app: string) =>
    (await c.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.map((p) => p.metadata?.name ?? '').sort();
  const pod = (name: string) => c.core.readNamespacedPod({ name, namespace: ns });
  const readSet = (name: string) => c.apps.readNamespacedStatefulSet({ name, namespace: ns });
  const isRunning = async (name: string) => (await pod(name).catch(() => undefined))?.status?.phase === 'Running';
  /** Waits until the kubelet has started `name` and its readiness timer waits on the clock. */
  const startedAndWaiting = async (name: string) => {
    await eventually(() => isRunning(name), `${name} running`);
    await eventually(() => (clock?.pending() ?? 0) > 0, 'a readiness timer');
  };
  const allReady = async (name: string, replicas: number) =>
    eventually(async () => {
      clock?.advance(0); // on a manual clock, timers due now (readiness after 0 ms) fire when the test moves it
      const s = await readSet(name);
      return s.status?.readyReplicas === replicas && s.status.replicas === replicas && s.status.currentRevision === s.status.updateRevision
        ? s
        : undefined;
    }, `${name}: ${replicas} ready`);

  it('OrderedReady: Pod 1 is not created before Pod 0 is Running and Ready, names, labels, identity and owner as the real controller sets them', async () => {
    const clock = await start({ pods: { readyAfterMs: 60_000 } }, true);
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('web', 3) });
    await startedAndWaiting('web-0');
    // The controller has seen web-0 Running (not Ready) and must wait.
    await eventually(async () => (await readSet('web')).status?.replicas === 1, 'status counts web-0');
    expect(await podNames('web')).to.deep.equal(['web-0']);
    clock.advance(60_000);
    await startedAndWaiting('web-1');
    expect(await podNames('web')).to.deep.equal(['web-0', 'web-1']);
    clock.advance(60_000);
    await startedAndWaiting('web-2');
    clock.advance(60_000);
    const set = await allReady('web', 3);
    expect(set.status).to.deep.include({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      collisionCount: 0,
    });
    expect(set.status?.currentRevision).to.match(/^web-\w+$/);

    const web1 = await pod('web-1');
    expect(web1.metadata?.labels).to.deep.equal({
      app: 'web',
      'statefulset.kubernetes.io/pod-name': 'web-1',
      'apps.kubernetes.io/pod-index': '1',
      'controller-revision-hash': set.status?.currentRevision,
    });
    expect(web1.spec?.hostname).to.equal('web-1');
    expect(web1.spec?.subdomain).to.equal('web');
    expect(web1.metadata?.ownerReferences).to.deep.equal([
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata?.uid, controller: true, blockOwnerDeletion: true },
    ]);

    const events = (
      await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=web,involvedObject.kind=StatefulSet' })
    ).items;
    expect(events.map((e) => `${e.reason} ${e.message}`)).to.include.members([
      'SuccessfulCreate create Pod web-0 in StatefulSet web successful',
      'SuccessfulCreate create Pod web-1 in StatefulSet web successful',
      'SuccessfulCreate create Pod web-2 in StatefulSet web successful',
    ]);
    expect(events[0]?.source?.component).to.equal('statefulset-controller');
  });

  it('OrderedReady scale-down goes from the highest ordinal, the next only once the one before is gone', async () => {
    // Pods take 30 s to stop (their grace period), on the test's clock.
    const clock = await start({ pods: { stopAfterMs: 30_000 } }, true);
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('down', 3) });
    await allReady('down', 3);
    await c.apps.patchNamespacedStatefulSetScale({ name: 'down', namespace: ns, body: { spec: { replicas: 1 } } }, merge);
    await eventually(async () => (await pod('down-2')).metadata?.deletionTimestamp !== undefined, 'down-2 terminating');
    expect((await pod('down-1')).metadata?.deletionTimestamp).to.equal(undefined);
    clock.advance(30_000);
    await eventually(() => isGone(() => pod('down-2')), 'down-2 gone');
    await eventually(async () => (await pod('down-1')).metadata?.deletionTimestamp !== undefined, 'down-1 terminating');
    clock.advance(30_000);
    await eventually(async () => (await podNames('down')).join() === 'down-0', 'one pod left');
    await eventually(async () => (await readSet('down')).status?.replicas === 1, 'status replicas 1');
    const events = (await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=down,reason=SuccessfulDelete' }))
      .items;
    expect(events.map((e) => e.message)).to.deep.equal([
      'delete Pod down-2 in StatefulSet down successful',
      'delete Pod down-1 in StatefulSet down successful',
    ]);
  });

  it('OrderedReady with the largest replicas an int32 holds creates Pod 0 and waits, the server answering meanwhile (no slot per replica)', async () => {
    await start({ pods: { readyAfterMs: 60_000 } }, true);
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('most', 2 ** 31 - 1) });
    await startedAndWaiting('most-0');
    expect(await podNames('most')).to.deep.equal(['most-0']);
    expect((await readSet('most')).spec?.replicas).to.equal(2 ** 31 - 1);
  });

  it('Parallel creates every Pod at once, without waiting for readiness', async () => {
    await start({ pods: { readyAfterMs: 60_000 } }, true);
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('par', 3, { podManagementPolicy: 'Parallel' }) });
    await eventually(async () => (await podNames('par')).length === 3, 'three pods');
    expect((await readSet('par')).status?.readyReplicas).to.equal(undefined);
  });

  it('a Pod of the set whose ordinal does not fit an int32 is ignored, not deleted as condemned (getParentNameAndOrdinal)', async () => {
    await start({ pods: { readyAfterMs: 60_000 } }, true);
    const set = await c.apps.createNamespacedStatefulSet({
      namespace: ns,
      body: statefulSet('big', 1, { podManagementPolicy: 'Parallel' }),
    });
    await eventually(async () => (await podNames('big')).length === 1, 'big-0');
    const stray = 'big-4294967296';
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: stray,
          labels: { app: 'big' },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'big', uid: set.metadata?.uid as string, controller: true },
          ],
        },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    });
    // The scale-up is synced after the stray Pod was seen: in that pass a condemned Pod would go.
    await c.apps.patchNamespacedStatefulSet({ name: 'big', namespace: ns, body: { spec: { replicas: 2 } } }, merge);
    await eventually(async () => (await podNames('big')).includes('big-1'), 'big-1');
    const kept = await pod(stray);
    expect(kept.metadata?.deletionTimestamp).to.equal(undefined);
  });

  it("creates each ordinal's claims before its Pod (selector labels, the Pod's volume), they become Bound to provisioned PersistentVolumes", async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('db', 2, withClaims) });
    await allReady('db', 2);
    const claims = await eventually(async () => {
      const list = (await c.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: 'app=db' })).items;
      return list.length === 2 && list.every((x) => x.status?.phase === 'Bound') ? list : undefined;
    }, 'two bound claims');
    expect(claims.map((x) => x.metadata?.name).sort()).to.deep.equal(['data-db-0', 'data-db-1']);
    const claim = claims.find((x) => x.metadata?.name === 'data-db-0') as k8s.V1PersistentVolumeClaim;
    expect(claim.metadata?.ownerReferences).to.equal(undefined);
    expect(claim.spec?.storageClassName).to.equal('standard');
    expect(claim.spec?.volumeName).to.equal(`pvc-${claim.metadata?.uid}`);
    expect(claim.status?.capacity).to.deep.equal({ storage: '1Gi' });
    expect(claim.status?.accessModes).to.deep.equal(['ReadWriteOnce']);
    expect(claim.metadata?.annotations).to.deep.include({
      'pv.kubernetes.io/bind-completed': 'yes',
      'volume.kubernetes.io/storage-provisioner': 'rxkube.dev/simulated',
    });
    expect((await pod('db-0')).spec?.volumes?.[0]).to.deep.equal({ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } });

    const pv = await c.core.readPersistentVolume({ name: claim.spec?.volumeName as string });
    expect(pv.status?.phase).to.equal('Bound');
    expect(pv.spec?.capacity).to.deep.equal({ storage: '1Gi' });
    expect(pv.spec?.accessModes).to.deep.equal(['ReadWriteOnce']);
    expect(pv.spec?.storageClassName).to.equal('standard');
    expect(pv.spec?.persistentVolumeReclaimPolicy).to.equal('Delete');
    expect(pv.spec?.claimRef).to.deep.include({
      kind: 'PersistentVolumeClaim',
      namespace: ns,
      name: 'data-db-0',
      uid: claim.metadata?.uid,
    });

    const storage = c.kc.makeApiClient(k8s.StorageV1Api);
    const standard = await storage.readStorageClass({ name: 'standard' });
    expect(standard.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class']).to.equal('true');
    const events = (await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=db' })).items.map(
      (e) => e.message,
    );
    // The claim before its Pod, as CreateStatefulPod does.
    expect(events.indexOf('create Claim data-db-0 Pod db-0 in StatefulSet db success')).to.be.within(
      0,
      events.indexOf('create Pod db-0 in StatefulSet db successful'),
    );
  });

  it('retention policy Retain (default): claims outlive a scale-down and the StatefulSet', async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('keep', 2, withClaims) });
    await allReady('keep', 2);
    await c.apps.patchNamespacedStatefulSetScale({ name: 'keep', namespace: ns, body: { spec: { replicas: 1 } } }, merge);
    await eventually(async () => (await podNames('keep')).length === 1, 'scaled down');
    await c.apps.deleteNamespacedStatefulSet({ name: 'keep', namespace: ns });
    await eventually(async () => (await podNames('keep')).length === 0, 'pods collected');
    const claims = (await c.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: 'app=keep' })).items;
    expect(claims.map((x) => `${x.metadata?.name} ${x.status?.phase}`).sort()).to.deep.equal(['data-keep-0 Bound', 'data-keep-1 Bound']);
  });

  it('retention policy Delete: the claim is owned by the StatefulSet, by its Pod once scaled away, both go with their owner, and their volumes with them', async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({
      namespace: ns,
      body: statefulSet('tmp', 2, { ...withClaims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' } }),
    });
    const set = await allReady('tmp', 2);
    const claim1 = await c.core.readNamespacedPersistentVolumeClaim({ name: 'data-tmp-1', namespace: ns });
    expect(claim1.metadata?.ownerReferences).to.deep.equal([
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'tmp', uid: set.metadata?.uid, controller: true, blockOwnerDeletion: true },
    ]);
    const volume1 = await eventually(
      async () => (await c.core.readNamespacedPersistentVolumeClaim({ name: 'data-tmp-1', namespace: ns })).spec?.volumeName,
      'bound',
    );

    await c.apps.patchNamespacedStatefulSetScale({ name: 'tmp', namespace: ns, body: { spec: { replicas: 1 } } }, merge);
    await eventually(
      () => isGone(() => c.core.readNamespacedPersistentVolumeClaim({ name: 'data-tmp-1', namespace: ns })),
      'claim of the scaled-away pod deleted',
    );
    await eventually(() => isGone(() => c.core.readPersistentVolume({ name: volume1 })), 'its volume deleted (reclaim policy Delete)');
    expect((await c.core.readNamespacedPersistentVolumeClaim({ name: 'data-tmp-0', namespace: ns })).status?.phase).to.equal('Bound');

    await c.apps.deleteNamespacedStatefulSet({ name: 'tmp', namespace: ns });
    await eventually(
      () => isGone(() => c.core.readNamespacedPersistentVolumeClaim({ name: 'data-tmp-0', namespace: ns })),
      'claim deleted with the set',
    );
  });

  it('a template change rolls Pods from the highest ordinal down, one at a time, ControllerRevisions give rollout history and a rollback', async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('roll', 3) });
    const before = await allReady('roll', 3);
    const watch = await RecordingWatch.start(c.kc, `/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=roll' });
    try {
      await c.apps.patchNamespacedStatefulSet({ name: 'roll', namespace: ns, body: image2 }, strategic);
      const after = await eventually(async () => {
        const s = await readSet('roll');
        return s.status?.observedGeneration === 2 && s.status.currentRevision === s.status.updateRevision && s.status.readyReplicas === 3
          ? s
          : undefined;
      }, 'rolled');
      expect(after.status?.updateRevision).to.not.equal(before.status?.updateRevision);
      expect(after.status).to.deep.include({ currentReplicas: 3, updatedReplicas: 3 });
      const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata?.name);
      expect(deleted).to.deep.equal(['roll-2', 'roll-1', 'roll-0']);
      // One at a time: roll-1 goes only once the new roll-2 is Ready.
      const readyAgain = watch.events.findIndex(
        (e) =>
          e.object.metadata?.name === 'roll-2' &&
          e.type === 'MODIFIED' &&
          JSON.stringify(e.object).includes('app:2') &&
          isReadyObject(e.object),
      );
      const secondDelete = watch.events.findIndex((e) => e.type === 'DELETED' && e.object.metadata?.name === 'roll-1');
      expect(readyAgain).to.be.within(0, secondDelete);
      for (const name of ['roll-0', 'roll-1', 'roll-2']) {
        const p = await pod(name);
        expect(p.spec?.containers[0]?.image).to.equal('app:2');
        expect(p.metadata?.labels?.['controller-revision-hash']).to.equal(after.status?.updateRevision);
      }
    } finally {
      watch.stop();
    }
    const revisions = (await c.apps.listNamespacedControllerRevision({ namespace: ns, labelSelector: 'app=roll' })).items.sort(
      (a, b) => a.revision - b.revision,
    );
    expect(revisions.map((r) => [r.metadata?.name, r.revision])).to.deep.equal([
      [before.status?.updateRevision, 1],
      [(await readSet('roll')).status?.updateRevision, 2],
    ]);
    expect(revisions[0]?.metadata?.ownerReferences?.[0]).to.deep.include({ kind: 'StatefulSet', name: 'roll', controller: true });
    expect(revisions[0]?.metadata?.labels?.['controller.kubernetes.io/hash']).to.be.a('string');
    // What `kubectl rollout undo` sends: the old revision's data, a strategic merge patch.
    await c.apps.patchNamespacedStatefulSet({ name: 'roll', namespace: ns, body: revisions[0]?.data as object }, strategic);
    const undone = await eventually(async () => {
      const s = await readSet('roll');
      return s.status?.observedGeneration === 3 &&
        s.status.currentRevision === s.status.updateRevision &&
        s.status.updatedReplicas === 3 &&
        s.status.readyReplicas === 3
        ? s
        : undefined;
    }, 'rolled back');
    expect(undone.status?.updateRevision).to.equal(before.status?.updateRevision);
    const renumbered = await c.apps.readNamespacedControllerRevision({ name: before.status?.updateRevision as string, namespace: ns });
    expect(renumbered.revision).to.equal(3);
    expect((await pod('roll-0')).spec?.containers[0]?.image).to.equal('app:1');
  });

  it('partition: only ordinals at or above it are updated, the status keeps the old revision current', async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({
      namespace: ns,
      body: statefulSet('part', 3, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }),
    });
    const before = await allReady('part', 3);
    await c.apps.patchNamespacedStatefulSet({ name: 'part', namespace: ns, body: image2 }, strategic);
    const after = await eventually(async () => {
      const s = await readSet('part');
      return s.status?.observedGeneration === 2 && s.status.updatedReplicas === 1 && s.status.readyReplicas === 3 ? s : undefined;
    }, 'partitioned update');
    expect(after.status?.currentRevision).to.equal(before.status?.currentRevision);
    expect(after.status?.currentReplicas).to.equal(2);
    expect((await pod('part-2')).spec?.containers[0]?.image).to.equal('app:2');
    expect((await pod('part-1')).spec?.containers[0]?.image).to.equal('app:1');
    expect((await pod('part-0')).metadata?.labels?.['controller-revision-hash']).to.equal(before.status?.currentRevision);
  });

  it('OnDelete: a template change replaces no Pod, a Pod deleted by the user comes back at the new revision', async () => {
    await start({});
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('manual', 2, { updateStrategy: { type: 'OnDelete' } }) });
    await allReady('manual', 2);
    const uid = (await pod('manual-1')).metadata?.uid;
    await c.apps.patchNamespacedStatefulSet({ name: 'manual', namespace: ns, body: image2 }, strategic);
    await eventually(async () => (await readSet('manual')).status?.observedGeneration === 2, 'observed');
    expect((await pod('manual-1')).metadata?.uid).to.equal(uid);
    await c.core.deleteNamespacedPod({ name: 'manual-1', namespace: ns, gracePeriodSeconds: 0 });
    await eventually(async () => {
      const p = await pod('manual-1').catch(() => undefined);
      return p && p.metadata?.uid !== uid && p.spec?.containers[0]?.image === 'app:2';
    }, 'recreated at the new revision');
    expect((await pod('manual-0')).spec?.containers[0]?.image).to.equal('app:1');
  });

  it('a claim of its own binds: to a fitting Available volume, else to one provisioned, an unknown class is a ProvisioningFailed Event, Retain leaves the volume Released', async () => {
    await start({});
    await c.core.createPersistentVolume({
      body: {
        metadata: { name: 'manual-pv' },
        spec: {
          storageClassName: 'manual',
          capacity: { storage: '5Gi' },
          accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
          hostPath: { path: '/tmp/x' },
        },
      },
    });
    await eventually(async () => (await c.core.readPersistentVolume({ name: 'manual-pv' })).status?.phase === 'Available', 'available');
    const claim = (name: string, storageClassName: string | undefined, storage = '2Gi'): k8s.V1PersistentVolumeClaim => ({
      metadata: { name },
      spec: {
        ...(storageClassName === undefined ? {} : { storageClassName }),
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage } },
      },
    });
    await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('too-big', 'manual', '10Gi') });
    await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('static', 'manual') });
    await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('dynamic', undefined) });
    await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('nowhere', 'missing') });
    const bound = (name: string) =>
      eventually(async () => {
        const x = await c.core.readNamespacedPersistentVolumeClaim({ name, namespace: ns });
        return x.status?.phase === 'Bound' ? x : undefined;
      }, `${name} bound`);
    const statics = await bound('static');
    expect(statics.spec?.volumeName).to.equal('manual-pv');
    expect(statics.status?.capacity).to.deep.equal({ storage: '5Gi' });
    expect(statics.status?.accessModes).to.deep.equal(['ReadWriteOnce', 'ReadOnlyMany']);
    const dynamic = await bound('dynamic');
    expect(dynamic.spec?.storageClassName).to.equal('standard');
    expect((await c.core.readNamespacedPersistentVolumeClaim({ name: 'too-big', namespace: ns })).status?.phase).to.equal('Pending');
    const failed = await eventually(
      async () => (await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=nowhere' })).items[0],
      'event',
    );
    expect([failed.type, failed.reason, failed.message]).to.deep.equal([
      'Warning',
      'ProvisioningFailed',
      'storageclass.storage.k8s.io "missing" not found',
    ]);

    await c.core.deleteNamespacedPersistentVolumeClaim({ name: 'static', namespace: ns });
    await eventually(
      async () => (await c.core.readPersistentVolume({ name: 'manual-pv' })).status?.phase === 'Released',
      'released (Retain)',
    );
    await c.core.deleteNamespacedPersistentVolumeClaim({ name: 'dynamic', namespace: ns });
    await eventually(
      () => isGone(() => c.core.readPersistentVolume({ name: dynamic.spec?.volumeName as string })),
      'provisioned volume deleted',
    );
  });

  it('the scheduler keeps a Pod whose claim is missing or not Bound Pending (Unschedulable, FailedScheduling) and binds it once the claim is Bound', async () => {
    await start({});
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'needs' },
        spec: { containers: [{ name: 'a', image: 'a' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'later' } }] },
      },
    });
    const waiting = await eventually(
      async () => (await pod('needs')).status?.conditions?.find((x) => x.type === 'PodScheduled'),
      'PodScheduled condition',
    );
    const message =
      '0/3 nodes are available: persistentvolumeclaim "later" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.';
    expect(waiting).to.deep.include({ status: 'False', reason: 'Unschedulable', message });
    expect((await pod('needs')).spec?.nodeName).to.equal(undefined);
    const events = (await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=needs,reason=FailedScheduling' }))
      .items;
    expect(events.map((e) => [e.type, e.message, e.count])).to.deep.equal([['Warning', message, 1]]);
    await c.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'later' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    await eventually(() => isRunning('needs'), 'scheduled and running once the claim is Bound');
    expect((await pod('needs')).status?.conditions?.find((x) => x.type === 'PodScheduled')?.status).to.equal('True');
  });

  it('validates claims as the real server does (access modes and a storage request are required)', async () => {
    await start({ volumes: false });
    const bad = await failure(
      c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: { metadata: { name: 'bad' }, spec: {} } }),
    );
    expect(bad.code).to.equal(422);
    expect(bad.status.message).to.equal(
      'PersistentVolumeClaim "bad" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]',
    );
  });

  it('a claim size that is not a quantity is 400 as Go decodes it, a size of zero or less 422; a restartPolicy other than Always or an unknown podManagementPolicy is 422', async () => {
    await start({ volumes: false });
    const claim = (name: string, storage: string): k8s.V1PersistentVolumeClaim => ({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    const lots = await failure(c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('lots', 'lots') }));
    expect(lots.code).to.equal(400);
    expect(lots.status.message).to.equal(
      'PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
    );
    const negative = await failure(c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('negative', '-1Gi') }));
    expect(negative.code).to.equal(422);
    expect(negative.status.message).to.equal(
      'PersistentVolumeClaim "negative" is invalid: spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero',
    );
    const never = statefulSet('never', 1);
    never.spec!.template.spec!.restartPolicy = 'Never';
    const refused = await failure(c.apps.createNamespacedStatefulSet({ namespace: ns, body: never }));
    expect(refused.code).to.equal(422);
    expect(refused.status.message).to.equal(
      'StatefulSet.apps "never" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    );
    const policy = await failure(
      c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('sometimes', 1, { podManagementPolicy: 'Sometimes' }) }),
    );
    expect(policy.status.message).to.equal(
      `StatefulSet.apps "sometimes" is invalid: spec.podManagementPolicy: Invalid value: "Sometimes": must be 'OrderedReady' or 'Parallel'`,
    );
  });

  it('a claim template the server refuses (no storage request) stops the set at its first Pod with FailedCreate Events naming the error, as the real controller records them', async () => {
    await start({});
    // The real server does not validate volumeClaimTemplates: the StatefulSet is accepted, its claims are not.
    await c.apps.createNamespacedStatefulSet({
      namespace: ns,
      body: statefulSet('nosize', 2, { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] }),
    });
    const messages = await eventually(async () => {
      const events = (await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=nosize,reason=FailedCreate' }))
        .items;
      return events.length === 2 ? events.map((e) => `${e.type} ${e.message}`) : undefined;
    }, 'two FailedCreate Events');
    const invalid = 'PersistentVolumeClaim "data-nosize-0" is invalid: spec.resources[storage]: Required value';
    expect(messages).to.have.members([
      `Warning create Claim data-nosize-0 for Pod nosize-0 in StatefulSet nosize failed error: ${invalid}`,
      `Warning create Pod nosize-0 in StatefulSet nosize failed error: failed to create PVC data-nosize-0: ${invalid}`,
    ]);
    expect(await podNames('nosize')).to.deep.equal([]);
  });

  it('statefulSets: false and volumes: false switch those controllers off', async () => {
    await start({ statefulSets: false, volumes: false });
    await c.apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSet('off', 1) });
    await c.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'off' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'marker' } } });
    // Other controllers are running (nodes registered), yet these two objects are left alone.
    await eventually(async () => (await c.core.listNode()).items.length === 3, 'nodes');
    expect(await podNames('off')).to.deep.equal([]);
    expect((await c.core.readNamespacedPersistentVolumeClaim({ name: 'off', namespace: ns })).status?.phase).to.equal('Pending');
    expect((await c.kc.makeApiClient(k8s.StorageV1Api).listStorageClass()).items).to.deep.equal([]);
    // Without a provisioner a Pod that needs the claim is never scheduled, as on a cluster without one.
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'off' },
        spec: { containers: [{ name: 'a', image: 'a' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'off' } }] },
      },
    });
    const scheduled = await eventually(
      async () => (await pod('off')).status?.conditions?.find((x) => x.type === 'PodScheduled'),
      'PodScheduled condition',
    );
    expect(scheduled.message).to.match(/^0\/3 nodes are available: pod has unbound immediate PersistentVolumeClaims\. /);
  });
});

describe('apiserver: pods/binding', function () {
  this.timeout(30_000);
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(() => c?.server.close());

  const body = (node: string): k8s.V1Binding => ({ metadata: { name: 'solo' }, target: { apiVersion: 'v1', kind: 'Node', name: node } });

  it("a v1 Binding assigns the Pod to the Node (spec.nodeName, PodScheduled) once, a second one is 409 in the real server's words", async () => {
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'solo' }, spec: { containers: [{ name: 'a', image: 'a' }] } },
    });
    await c.core.createNamespacedPodBinding({ name: 'solo', namespace: 'default', body: body('node-a') });
    const bound = await c.core.readNamespacedPod({ name: 'solo', namespace: 'default' });
    expect(bound.spec?.nodeName).to.equal('node-a');
    expect(bound.status?.conditions?.find((x) => x.type === 'PodScheduled')?.status).to.equal('True');
    const again = await failure(c.core.createNamespacedPodBinding({ name: 'solo', namespace: 'default', body: body('node-b') }));
    expect(again.code).to.equal(409);
    expect(again.status.message).to.equal(
      'Operation cannot be fulfilled on pods/binding "solo": pod solo is already assigned to node "node-a"',
    );
  });

  it('answers 201 with a Success Status over raw HTTP, a Binding without a target is 422, one of another namespace 400, discovery lists pods/binding', async () => {
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'raw' }, spec: { containers: [{ name: 'a', image: 'a' }] } },
    });
    const noTarget = await raw(
      c.server,
      'POST',
      '/api/v1/namespaces/default/pods/raw/binding',
      JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'raw' } }),
    );
    expect(noTarget.status).to.equal(422);
    expect((noTarget.json as { message: string }).message).to.equal('Binding "raw" is invalid: target.name: Required value');
    const elsewhere = await raw(
      c.server,
      'POST',
      '/api/v1/namespaces/default/pods/raw/binding',
      JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'raw', namespace: 'other' }, target: { name: 'node-a' } }),
    );
    expect([elsewhere.status, (elsewhere.json as { message: string }).message]).to.deep.equal([
      400,
      'the namespace of the provided object does not match the namespace sent on the request',
    ]);
    const ok = await raw(
      c.server,
      'POST',
      '/api/v1/namespaces/default/pods/raw/binding',
      JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'raw' }, target: { name: 'node-a' } }),
    );
    expect([ok.status, ok.json]).to.deep.equal([201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }]);
    const resources = (await raw(c.server, 'GET', '/api/v1')).json as { resources: { name: string; kind: string; verbs: string[] }[] };
    expect(resources.resources.find((r) => r.name === 'pods/binding')).to.deep.include({ kind: 'Binding', verbs: ['create'] });
  });

  it('RBAC sees the subresource: creating pods does not allow pods/binding', async () => {
    await c.core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'binder' } } });
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: { metadata: { name: 'pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'get'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' },
        subjects: [{ kind: 'ServiceAccount', name: 'binder', namespace: 'default' }],
      },
    });
    const token = (
      await c.core.createNamespacedServiceAccountToken({ name: 'binder', namespace: 'default', body: { spec: { audiences: [] } } })
    ).status?.token as string;
    const asBinder = c.server.kubeConfig({ token }).makeApiClient(k8s.CoreV1Api);
    await asBinder.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'unbound' }, spec: { containers: [{ name: 'a', image: 'a' }] } },
    });
    const denied = await failure(
      asBinder.createNamespacedPodBinding({
        name: 'unbound',
        namespace: 'default',
        body: { metadata: { name: 'unbound' }, target: { name: 'node-a' } },
      }),
    );
    expect(denied.code).to.equal(403);
    expect(denied.status.message).to.equal(
      'pods "unbound" is forbidden: User "system:serviceaccount:default:binder" cannot create resource "pods/binding" in API group "" in the namespace "default"',
    );
  });
});
