import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { eventually, failure, isGone, raw, startWithClients, type Clients } from './helpers.js';

const as = (strategy: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', strategy);

function deployment(name: string, replicas = 1): k8s.V1Deployment {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
    },
  };
}

describe('apiserver: object rules', () => {
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c.server.close();
  });

  describe('resourceVersion', () => {
    it('is one global counter across resources, as strings of integers', async () => {
      const a = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rv-a' } } });
      const s = await c.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'rv-b' } } });
      const b = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rv-c' } } });
      const rvs = [a, s, b].map((o) => Number(o.metadata?.resourceVersion));
      expect(rvs[1]).to.equal(rvs[0] + 1);
      expect(rvs[2]).to.equal(rvs[1] + 1);
    });
  });

  describe('generation', () => {
    it('bumps a Deployment generation on spec changes only', async () => {
      const d = await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('gen') });
      expect(d.metadata?.generation).to.equal(1);
      const labelled = await c.apps.patchNamespacedDeployment(
        { name: 'gen', namespace: 'default', body: { metadata: { annotations: { a: 'b' } } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      expect(labelled.metadata?.generation).to.equal(1);
      const scaled = await c.apps.patchNamespacedDeployment(
        { name: 'gen', namespace: 'default', body: { spec: { replicas: 3 } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      expect(scaled.metadata?.generation).to.equal(2);
      const status = await c.apps.patchNamespacedDeploymentStatus(
        { name: 'gen', namespace: 'default', body: { status: { observedGeneration: 2, replicas: 3 } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      expect(status.metadata?.generation).to.equal(2);
    });

    it('does not give ConfigMaps a generation', async () => {
      const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'nogen' }, data: { a: '1' } } });
      expect(cm.metadata?.generation).to.equal(undefined);
    });
  });

  describe('status subresource (built-in)', () => {
    it('ignores status on the main resource and spec and labels on /status (annotations pass)', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: { ...deployment('split'), status: { replicas: 99 } } });
      const created = await c.apps.readNamespacedDeployment({ name: 'split', namespace: 'default' });
      expect(created.status?.replicas).to.equal(undefined);
      const main = await c.apps.patchNamespacedDeployment(
        { name: 'split', namespace: 'default', body: { status: { replicas: 5 } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      expect(main.status?.replicas).to.equal(undefined);
      const status = await c.apps.patchNamespacedDeploymentStatus(
        {
          name: 'split',
          namespace: 'default',
          body: { metadata: { labels: { changed: 'no' }, annotations: { note: 'yes' } }, spec: { replicas: 7 }, status: { replicas: 5 } },
        },
        as(k8s.PatchStrategy.MergePatch),
      );
      expect(status.status?.replicas).to.equal(5);
      expect(status.spec?.replicas).to.equal(1);
      expect(status.metadata?.labels).to.deep.equal({ app: 'split' });
      expect(status.metadata?.annotations).to.deep.equal({ note: 'yes' });
    });
  });

  describe('finalizers and deletionTimestamp', () => {
    it('marks an object with finalizers for deletion, bumps generation once, and deletes it when the last finalizer goes', async () => {
      await c.apps.createNamespacedDeployment({
        namespace: 'default',
        body: { ...deployment('fin'), metadata: { name: 'fin', finalizers: ['example.com/a', 'example.com/b'] } },
      });
      const marked = await c.apps.deleteNamespacedDeployment({ name: 'fin', namespace: 'default' });
      expect(marked).to.be.an('object');
      const first = await c.apps.readNamespacedDeployment({ name: 'fin', namespace: 'default' });
      expect(first.metadata?.deletionTimestamp).to.be.instanceOf(Date);
      expect(first.metadata?.deletionGracePeriodSeconds).to.equal(0);
      expect(first.metadata?.generation).to.equal(2);
      await c.apps.deleteNamespacedDeployment({ name: 'fin', namespace: 'default' });
      const again = await c.apps.readNamespacedDeployment({ name: 'fin', namespace: 'default' });
      expect(again.metadata?.generation).to.equal(2);
      expect(again.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);

      const oneLeft = await c.apps.patchNamespacedDeployment(
        { name: 'fin', namespace: 'default', body: [{ op: 'replace', path: '/metadata/finalizers', value: ['example.com/b'] }] },
        as(k8s.PatchStrategy.JsonPatch),
      );
      expect(oneLeft.metadata?.finalizers).to.deep.equal(['example.com/b']);
      await c.apps.patchNamespacedDeployment(
        { name: 'fin', namespace: 'default', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
        as(k8s.PatchStrategy.JsonPatch),
      );
      expect(await isGone(() => c.apps.readNamespacedDeployment({ name: 'fin', namespace: 'default' }))).to.equal(true);
    });

    it('answers 422 when a finalizer is added to an object being deleted', async () => {
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fin2', finalizers: ['example.com/a'] } } });
      await c.core.deleteNamespacedConfigMap({ name: 'fin2', namespace: 'default' });
      const f = await failure(
        c.core.patchNamespacedConfigMap(
          { name: 'fin2', namespace: 'default', body: { metadata: { finalizers: ['example.com/a', 'example.com/new'] } } },
          as(k8s.PatchStrategy.MergePatch),
        ),
      );
      expect(f.code).to.equal(422);
      expect(f.status.reason).to.equal('Invalid');
      expect(String(f.status.message)).to.contain('no new finalizers can be added if the object is being deleted');
      const still = await c.core.readNamespacedConfigMap({ name: 'fin2', namespace: 'default' });
      expect(still.metadata?.finalizers).to.deep.equal(['example.com/a']);
    });

    it('checks delete preconditions (uid, resourceVersion): 409', async () => {
      const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'pre' } } });
      const f = await failure(
        c.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { uid: 'not-the-uid' } } }),
      );
      expect(f.code).to.equal(409);
      expect(String(f.status.message)).to.contain('the UID in the precondition (not-the-uid) does not match the UID in record');
      const g = await failure(
        c.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { resourceVersion: '1' } } }),
      );
      expect(g.code).to.equal(409);
      await c.core.deleteNamespacedConfigMap({
        name: 'pre',
        namespace: 'default',
        body: { preconditions: { uid: cm.metadata?.uid, resourceVersion: cm.metadata?.resourceVersion } },
      });
      expect(await isGone(() => c.core.readNamespacedConfigMap({ name: 'pre', namespace: 'default' }))).to.equal(true);
    });
  });

  describe('garbage collection by ownerReferences', () => {
    const owned = async (owner: k8s.V1ConfigMap, name: string, block = false) =>
      c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: {
            name,
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: owner.metadata?.name as string,
                uid: owner.metadata?.uid as string,
                blockOwnerDeletion: block,
              },
            ],
          },
        },
      });
    const exists = async (name: string) => !(await isGone(() => c.core.readNamespacedConfigMap({ name, namespace: 'default' })));

    it('background: deletes dependents after the owner is gone', async () => {
      const owner = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'bg-owner' } } });
      await owned(owner, 'bg-dep-1');
      await owned(owner, 'bg-dep-2');
      await c.core.deleteNamespacedConfigMap({ name: 'bg-owner', namespace: 'default', propagationPolicy: 'Background' });
      expect(await exists('bg-owner')).to.equal(false);
      await eventually(async () => !(await exists('bg-dep-1')) && !(await exists('bg-dep-2')), 'the dependents to be collected');
    });

    it('keeps a dependent that still has another live owner, removing the dangling reference', async () => {
      const a = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two-owners-a' } } });
      const b = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two-owners-b' } } });
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: {
            name: 'two-owners-dep',
            ownerReferences: [a, b].map((o) => ({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: o.metadata?.name as string,
              uid: o.metadata?.uid as string,
            })),
          },
        },
      });
      await c.core.deleteNamespacedConfigMap({ name: 'two-owners-a', namespace: 'default' });
      const dep = await eventually(async () => {
        const d = await c.core.readNamespacedConfigMap({ name: 'two-owners-dep', namespace: 'default' });
        return d.metadata?.ownerReferences?.length === 1 ? d : undefined;
      }, 'the dangling reference to go');
      expect(dep.metadata?.ownerReferences?.[0]?.name).to.equal('two-owners-b');
    });

    it('foreground: the owner waits (foregroundDeletion finalizer) until blocking dependents are gone', async () => {
      const owner = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fg-owner' } } });
      const dep = await owned(owner, 'fg-dep', true);
      await c.core.patchNamespacedConfigMap(
        { name: 'fg-dep', namespace: 'default', body: { metadata: { finalizers: ['example.com/hold'] } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      await c.core.deleteNamespacedConfigMap({ name: 'fg-owner', namespace: 'default', propagationPolicy: 'Foreground' });
      const marked = await c.core.readNamespacedConfigMap({ name: 'fg-owner', namespace: 'default' });
      expect(marked.metadata?.finalizers).to.deep.equal(['foregroundDeletion']);
      expect(marked.metadata?.deletionTimestamp).to.be.instanceOf(Date);
      await eventually(
        async () => (await c.core.readNamespacedConfigMap({ name: 'fg-dep', namespace: 'default' })).metadata?.deletionTimestamp,
        'the dependent to be deleted',
      );
      expect(await exists('fg-owner')).to.equal(true);
      await c.core.patchNamespacedConfigMap(
        { name: 'fg-dep', namespace: 'default', body: { metadata: { finalizers: null } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      await eventually(async () => !(await exists('fg-owner')), 'the owner to go after its dependent');
      expect(dep.metadata?.name).to.equal('fg-dep');
    });

    it('orphan: removes the owner reference from dependents and keeps them', async () => {
      const owner = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'or-owner' } } });
      await owned(owner, 'or-dep');
      await c.core.deleteNamespacedConfigMap({ name: 'or-owner', namespace: 'default', propagationPolicy: 'Orphan' });
      await eventually(async () => !(await exists('or-owner')), 'the owner to go');
      const dep = await c.core.readNamespacedConfigMap({ name: 'or-dep', namespace: 'default' });
      expect(dep.metadata?.ownerReferences).to.equal(undefined);
    });

    it('deletes a dependent whose owner does not exist', async () => {
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: {
            name: 'dangling',
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }],
          },
        },
      });
      await eventually(async () => !(await exists('dangling')), 'the orphaned dependent to be collected');
    });
  });

  describe('namespace lifecycle', () => {
    it('answers 404 for creates in a missing namespace', async () => {
      const f = await failure(c.core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
      expect(f.code).to.equal(404);
      expect(f.status.message).to.equal('namespaces "nowhere" not found');
    });

    it('deletes a namespace contents then the namespace; creates meanwhile are 403 Forbidden', async () => {
      await c.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
      await c.core.createNamespacedConfigMap({
        namespace: 'doomed',
        body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } },
      });
      await c.core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 's' } } });
      await c.core.deleteNamespace({ name: 'doomed' });
      const terminating = await c.core.readNamespace({ name: 'doomed' });
      expect(terminating.status?.phase).to.equal('Terminating');
      expect(terminating.metadata?.deletionTimestamp).to.be.instanceOf(Date);
      const f = await failure(c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
      expect(f.code).to.equal(403);
      expect(f.status.reason).to.equal('Forbidden');
      expect(String(f.status.message)).to.contain('because it is being terminated');
      await eventually(() => isGone(() => c.core.readNamespacedSecret({ name: 's', namespace: 'doomed' })), 'the secret to go');
      expect((await c.core.readNamespace({ name: 'doomed' })).status?.phase).to.equal('Terminating');
      await c.core.patchNamespacedConfigMap(
        { name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      await eventually(() => isGone(() => c.core.readNamespace({ name: 'doomed' })), 'the namespace to go');
    });

    it('refuses to delete the default namespace (403)', async () => {
      const f = await failure(c.core.deleteNamespace({ name: 'default' }));
      expect(f.code).to.equal(403);
    });
  });

  describe('selectors and paging', () => {
    before(async () => {
      await c.core.createNamespace({ body: { metadata: { name: 'sel' } } });
      const items: [string, Record<string, string>][] = [
        ['p1', { tier: 'front', env: 'prod' }],
        ['p2', { tier: 'back', env: 'prod' }],
        ['p3', { tier: 'front', env: 'dev' }],
        ['p4', { tier: 'cache' }],
        ['p5', {}],
      ];
      for (const [name, labels] of items)
        await c.core.createNamespacedConfigMap({ namespace: 'sel', body: { metadata: { name, labels } } });
    });
    const names = (l: k8s.V1ConfigMapList) => l.items.map((i) => i.metadata?.name);

    it('filters lists by label selectors in full syntax', async () => {
      const list = (labelSelector: string) => c.core.listNamespacedConfigMap({ namespace: 'sel', labelSelector });
      expect(names(await list('tier=front'))).to.deep.equal(['p1', 'p3']);
      expect(names(await list('tier!=front'))).to.deep.equal(['p2', 'p4', 'p5']);
      expect(names(await list('tier in (front,back),env=prod'))).to.deep.equal(['p1', 'p2']);
      expect(names(await list('tier notin (front)'))).to.deep.equal(['p2', 'p4', 'p5']);
      expect(names(await list('env'))).to.deep.equal(['p1', 'p2', 'p3']);
      expect(names(await list('!env'))).to.deep.equal(['p4', 'p5']);
    });

    it('filters by field selectors on metadata.name and metadata.namespace; 400 for unsupported fields', async () => {
      expect(names(await c.core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'metadata.name=p2' }))).to.deep.equal(['p2']);
      expect(names(await c.core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'metadata.name!=p2' }))).to.deep.equal([
        'p1',
        'p3',
        'p4',
        'p5',
      ]);
      const all = await c.core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=sel,metadata.name=p1' });
      expect(names(all)).to.deep.equal(['p1']);
      const f = await failure(c.core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'data.x=1' }));
      expect(f.code).to.equal(400);
      expect(f.status.reason).to.equal('BadRequest');
      const secrets = await c.core.listSecretForAllNamespaces({ fieldSelector: 'type=Opaque' });
      expect(secrets.kind).to.equal('SecretList');
    });

    it('selects Pods by status.phase and spec.nodeName (per-kind field selectors)', async () => {
      const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      await c.core.createNamespacedPod({ namespace: 'sel', body: pod('pending') });
      await c.core.createNamespacedPod({ namespace: 'sel', body: pod('running') });
      await c.core.patchNamespacedPodStatus(
        { name: 'running', namespace: 'sel', body: { status: { phase: 'Running' } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      const running = await c.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'status.phase=Running' });
      expect(running.items.map((p) => p.metadata?.name)).to.deep.equal(['running']);
      const unscheduled = await c.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'spec.nodeName=' });
      expect(unscheduled.items).to.have.length(2);
    });

    it('pages with limit/continue over one consistent snapshot', async () => {
      const page1 = await c.core.listNamespacedConfigMap({ namespace: 'sel', limit: 2 });
      expect(names(page1)).to.deep.equal(['p1', 'p2']);
      expect(page1.metadata?.remainingItemCount).to.equal(3);
      const token = page1.metadata?._continue as string;
      expect(token).to.be.a('string');
      await c.core.createNamespacedConfigMap({ namespace: 'sel', body: { metadata: { name: 'p0-late' } } });
      await c.core.deleteNamespacedConfigMap({ name: 'p4', namespace: 'sel' });
      const page2 = await c.core.listNamespacedConfigMap({ namespace: 'sel', limit: 2, _continue: token });
      expect(names(page2)).to.deep.equal(['p3', 'p4']);
      expect(page2.metadata?.resourceVersion).to.equal(page1.metadata?.resourceVersion);
      const page3 = await c.core.listNamespacedConfigMap({ namespace: 'sel', limit: 2, _continue: page2.metadata?._continue });
      expect(names(page3)).to.deep.equal(['p5']);
      expect(page3.metadata?._continue).to.equal(undefined);
    });

    describe('continue after a compaction (issue 9: as etcd, which refuses only revisions below its compaction point)', () => {
      const ns = 'compaction';
      const cm = (name: string) => ({ metadata: { name } });
      before(async () => {
        await c.core.createNamespace({ body: { metadata: { name: ns } } });
        for (const name of ['c1', 'c2', 'c3', 'c4']) await c.core.createNamespacedConfigMap({ namespace: ns, body: cm(name) });
      });

      it('issue 9: a continue token taken exactly at the compacted resourceVersion still pages, at that version', async () => {
        const page1 = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2 });
        c.server.faults.compact(); // compacts at the current version, which is the list's
        expect(String(c.server.stats().resourceVersion)).to.equal(page1.metadata?.resourceVersion);
        const page2 = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: page1.metadata?._continue });
        expect(names(page2)).to.deep.equal(['c3', 'c4']);
        expect(page2.metadata?.resourceVersion).to.equal(page1.metadata?.resourceVersion);
      });

      it('issue 9: a continue token from below the compaction answers 410 Expired with a token that continues at the latest version', async () => {
        const page1 = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2 });
        expect(names(page1)).to.deep.equal(['c1', 'c2']);
        await c.core.createNamespacedConfigMap({ namespace: ns, body: cm('c0-late') }); // before the next key: not in the rest
        await c.core.createNamespacedConfigMap({ namespace: ns, body: cm('c5-late') }); // after it: in the rest
        c.server.faults.compact();
        const token = encodeURIComponent(page1.metadata?._continue as string);
        const answer = await raw(c.server, 'GET', `/api/v1/namespaces/${ns}/configmaps?limit=2&continue=${token}`);
        expect(answer.status).to.equal(410);
        const status = answer.json as { reason: string; code: number; message: string; metadata: { continue?: string } };
        expect(status).to.include({ reason: 'Expired', code: 410 });
        expect(status.message).to.match(
          /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results\./,
        );
        expect(status.metadata.continue).to.be.a('string');
        const rest = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: status.metadata.continue });
        expect(names(rest)).to.deep.equal(['c3', 'c4']);
        expect(rest.metadata?.resourceVersion).to.equal(String(c.server.stats().resourceVersion));
        const last = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: rest.metadata?._continue });
        expect(names(last)).to.deep.equal(['c5-late']);
        expect(last.metadata?._continue).to.equal(undefined);
      });
    });

    it('deletes a collection selected by labels', async () => {
      await c.core.deleteCollectionNamespacedConfigMap({ namespace: 'sel', labelSelector: 'env=prod' });
      expect(names(await c.core.listNamespacedConfigMap({ namespace: 'sel' }))).to.not.include.members(['p1', 'p2']);
    });
  });

  describe('no-op writes', () => {
    it('do not bump resourceVersion for an update, a merge patch or a json patch that changes nothing', async () => {
      const cm = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'noop', labels: { a: 'b' } }, data: { k: 'v' } },
      });
      const rv = cm.metadata?.resourceVersion;
      const updated = await c.core.replaceNamespacedConfigMap({ name: 'noop', namespace: 'default', body: cm });
      const merged = await c.core.patchNamespacedConfigMap(
        { name: 'noop', namespace: 'default', body: { data: { k: 'v' } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      const json = await c.core.patchNamespacedConfigMap(
        { name: 'noop', namespace: 'default', body: [{ op: 'replace', path: '/data/k', value: 'v' }] },
        as(k8s.PatchStrategy.JsonPatch),
      );
      expect([updated, merged, json].map((x) => x.metadata?.resourceVersion)).to.deep.equal([rv, rv, rv]);
      const res = await raw(c.server, 'GET', '/api/v1/namespaces/default/configmaps/noop');
      expect((res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion).to.equal(rv);
    });
  });
});
