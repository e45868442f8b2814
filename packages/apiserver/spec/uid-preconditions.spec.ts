/**
 * metadata.uid in a write's body, and DeleteOptions.preconditions, as the real server checks
 * them (issue 22): a PUT's uid is a storage precondition (409, also when nothing exists under
 * the name), a patch or apply that changes the uid fails validation (422, the uid is
 * immutable), an apply that would create an object under a given uid is a 409, and a delete's
 * preconditions are checked against the stored object (409).
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { failure, kubectlAvailable, kubectlSession, startWithClients, type Clients, type KubectlSession } from './helpers.js';

const as = (strategy: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', strategy);
const NS = 'default';

describe('apiserver: uid preconditions on writes and deletes (issue 22)', () => {
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c.server.close();
  });

  const configMap = (name: string) => c.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name }, data: { a: '1' } } });
  const read = (name: string) => c.core.readNamespacedConfigMap({ name, namespace: NS });

  it('refuses a PUT whose metadata.uid is not the stored object\'s with 409 "Precondition failed", changing nothing', async () => {
    const cm = await configMap('put-uid');
    const f = await failure(
      c.core.replaceNamespacedConfigMap({
        name: 'put-uid',
        namespace: NS,
        body: { ...cm, metadata: { ...cm.metadata, uid: 'other-uid' }, data: { a: '2' } },
      }),
    );
    expect(f.code).to.equal(409);
    expect(f.status.reason).to.equal('Conflict');
    expect(f.status.message).to.equal(
      `Operation cannot be fulfilled on configmaps "put-uid": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/put-uid, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other-uid, UID in object meta: ${cm.metadata?.uid}`,
    );
    const after = await read('put-uid');
    expect(after.data).to.deep.equal({ a: '1' });
    expect(after.metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
  });

  it('takes a PUT naming the stored uid, or none', async () => {
    const cm = await configMap('put-same');
    const same = await c.core.replaceNamespacedConfigMap({ name: 'put-same', namespace: NS, body: { ...cm, data: { a: '2' } } });
    expect(same.data).to.deep.equal({ a: '2' });
    const { uid: _uid, ...withoutUid } = same.metadata ?? {};
    const none = await c.core.replaceNamespacedConfigMap({
      name: 'put-same',
      namespace: NS,
      body: { ...same, metadata: withoutUid, data: { a: '3' } },
    });
    expect(none.data).to.deep.equal({ a: '3' });
    expect(none.metadata?.uid).to.equal(cm.metadata?.uid);
  });

  it('refuses a PUT with a uid to a name that holds nothing with 409 (an empty uid in object meta), not 404', async () => {
    const f = await failure(
      c.core.replaceNamespacedConfigMap({
        name: 'put-gone',
        namespace: NS,
        body: { metadata: { name: 'put-gone', uid: 'was-here', resourceVersion: '5' } },
      }),
    );
    expect(f.code).to.equal(409);
    expect(f.status.message).to.match(/Precondition failed: UID in precondition: was-here, UID in object meta: $/);
  });

  it('refuses a status PUT and a Scale PUT naming another uid with 409', async () => {
    const d = await c.apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'uid-deploy' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'u' } },
          template: { metadata: { labels: { app: 'u' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      },
    });
    const status = await failure(
      c.apps.replaceNamespacedDeploymentStatus({
        name: 'uid-deploy',
        namespace: NS,
        body: { ...d, metadata: { ...d.metadata, uid: 'x' }, status: { replicas: 1 } },
      }),
    );
    expect(status.code).to.equal(409);
    expect(status.status.message).to.contain('UID in precondition: x,');
    const scale = await c.apps.readNamespacedDeploymentScale({ name: 'uid-deploy', namespace: NS });
    expect(scale.metadata?.uid).to.equal(d.metadata?.uid);
    const f = await failure(
      c.apps.replaceNamespacedDeploymentScale({
        name: 'uid-deploy',
        namespace: NS,
        body: { ...scale, metadata: { ...scale.metadata, uid: 'y' }, spec: { replicas: 3 } },
      }),
    );
    expect(f.code).to.equal(409);
    expect(f.status.message).to.contain(`Precondition failed: UID in precondition: y, UID in object meta: ${d.metadata?.uid}`);
    expect((await c.apps.readNamespacedDeployment({ name: 'uid-deploy', namespace: NS })).spec?.replicas).to.equal(1);
  });

  for (const [what, strategy, body] of [
    ['a merge patch', k8s.PatchStrategy.MergePatch, { metadata: { uid: 'patched-uid' }, data: { a: '9' } }],
    ['a strategic merge patch', k8s.PatchStrategy.StrategicMergePatch, { metadata: { uid: 'patched-uid' }, data: { a: '9' } }],
    [
      'a JSON patch',
      k8s.PatchStrategy.JsonPatch,
      [
        { op: 'replace', path: '/metadata/uid', value: 'patched-uid' },
        { op: 'replace', path: '/data/a', value: '9' },
      ],
    ],
  ] as const) {
    it(`refuses ${what} that changes metadata.uid with 422 "field is immutable", changing nothing`, async () => {
      const name = `patch-uid-${strategy.split('/')[1]?.split('+')[0] ?? 'x'}`;
      const cm = await configMap(name);
      const f = await failure(c.core.patchNamespacedConfigMap({ name, namespace: NS, body }, as(strategy)));
      expect(f.code).to.equal(422);
      expect(f.status.reason).to.equal('Invalid');
      expect(f.status.message).to.equal(`ConfigMap "${name}" is invalid: metadata.uid: Invalid value: "patched-uid": field is immutable`);
      expect((await read(name)).metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
    });
  }

  it('takes a patch that names the stored uid (a uid used as a precondition by a patch that holds)', async () => {
    const cm = await configMap('patch-same');
    const done = await c.core.patchNamespacedConfigMap(
      { name: 'patch-same', namespace: NS, body: { metadata: { uid: cm.metadata?.uid }, data: { a: '2' } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    expect(done.data).to.deep.equal({ a: '2' });
  });

  it('refuses an apply that changes the uid (422) and one that would create an object under a given uid (409)', async () => {
    const cm = await configMap('apply-uid');
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'apply-uid', uid: 'applied-uid' }, data: { b: '2' } };
    const changed = await failure(
      c.core.patchNamespacedConfigMap(
        { name: 'apply-uid', namespace: NS, body, fieldManager: 'uid-test' },
        as(k8s.PatchStrategy.ServerSideApply),
      ),
    );
    expect(changed.code, JSON.stringify(changed.status)).to.equal(422);
    expect(changed.status.message).to.contain('metadata.uid: Invalid value: "applied-uid": field is immutable');
    expect((await read('apply-uid')).metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
    const created = await failure(
      c.core.patchNamespacedConfigMap(
        {
          name: 'apply-new',
          namespace: NS,
          body: { ...body, metadata: { name: 'apply-new', uid: 'applied-uid' } },
          fieldManager: 'uid-test',
        },
        as(k8s.PatchStrategy.ServerSideApply),
      ),
    );
    expect(created.code).to.equal(409);
    expect(created.status.message).to.equal(
      'Operation cannot be fulfilled on configmaps "apply-new": uid mismatch: the provided object specified uid applied-uid, and no existing object was found',
    );
    expect((await failure(read('apply-new'))).code).to.equal(404);
  });

  it("checks DeleteOptions.preconditions (uid, resourceVersion) against the stored object: 409 in the real server's words, nothing deleted", async () => {
    const cm = await configMap('del-pre');
    const uid = await failure(
      c.core.deleteNamespacedConfigMap({ name: 'del-pre', namespace: NS, body: { preconditions: { uid: 'not-the-uid' } } }),
    );
    expect(uid.code).to.equal(409);
    expect(uid.status.message).to.equal(
      `Operation cannot be fulfilled on ConfigMap "del-pre": the UID in the precondition (not-the-uid) does not match the UID in record (${cm.metadata?.uid}). The object might have been deleted and then recreated`,
    );
    const rv = await failure(
      c.core.deleteNamespacedConfigMap({ name: 'del-pre', namespace: NS, body: { preconditions: { resourceVersion: '1' } } }),
    );
    expect(rv.code).to.equal(409);
    expect(rv.status.message).to.equal(
      `Operation cannot be fulfilled on ConfigMap "del-pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${cm.metadata?.resourceVersion}). The object might have been modified`,
    );
    expect((await read('del-pre')).metadata?.uid).to.equal(cm.metadata?.uid);
  });

  describe('through kubectl', () => {
    let k: KubectlSession | undefined;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip();
      k = await kubectlSession(c.server);
    });
    after(async () => {
      await k?.close();
    });

    it("kubectl replace of a manifest carrying another object's uid fails with the precondition conflict", async () => {
      const cm = await configMap('kubectl-uid');
      const file = join((k as KubectlSession).dir, 'cm.yaml');
      await writeFile(
        file,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-uid\n  namespace: default\n  uid: 0b0b0b0b-0000-4000-8000-000000000000\ndata:\n  a: "2"\n`,
      );
      const err = await (k as KubectlSession).kubectl('replace', '-f', file).then(
        () => undefined,
        (e: { stderr?: string }) => e.stderr ?? '',
      );
      expect(err).to.contain('Precondition failed: UID in precondition: 0b0b0b0b-0000-4000-8000-000000000000');
      expect((await read('kubectl-uid')).data).to.deep.equal(cm.data);
    });

    it('kubectl patch that changes the uid fails as invalid (the uid is immutable)', async () => {
      await configMap('kubectl-patch-uid');
      const err = await (k as KubectlSession)
        .kubectl('patch', 'configmap', 'kubectl-patch-uid', '--type', 'merge', '-p', '{"metadata":{"uid":"another"}}')
        .then(
          () => undefined,
          (e: { stderr?: string }) => e.stderr ?? '',
        );
      expect(err).to.contain('metadata.uid: Invalid value: "another": field is immutable');
    });
  });
});
