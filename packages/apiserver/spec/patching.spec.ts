import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { failure, raw, startWithClients, type Clients } from './helpers.js';

/** client-node 2.x picks the patch type from the Content-Type header set through request options. */
const as = (strategy: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', strategy);

describe('apiserver: PATCH (json, merge, strategic, apply) with client-node', () => {
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c.server.close();
  });

  const cm = (name: string, data: Record<string, string>) =>
    c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name }, data } });

  const deployment = (name: string): k8s.V1Deployment => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] },
            { name: 'sidecar', image: 'side:1' },
          ],
        },
      },
    },
  });

  it('applies a JSON patch (application/json-patch+json)', async () => {
    await cm('jp', { a: '1' });
    const patched = await c.core.patchNamespacedConfigMap(
      {
        name: 'jp',
        namespace: 'default',
        body: [
          { op: 'test', path: '/data/a', value: '1' },
          { op: 'add', path: '/data/b', value: '2' },
          { op: 'remove', path: '/data/a' },
        ],
      },
      as(k8s.PatchStrategy.JsonPatch),
    );
    expect(patched.data).to.deep.equal({ b: '2' });
  });

  it('answers 422 when a JSON patch test fails, and changes nothing', async () => {
    const before = await cm('jp-fail', { a: '1' });
    const f = await failure(
      c.core.patchNamespacedConfigMap(
        { name: 'jp-fail', namespace: 'default', body: [{ op: 'test', path: '/data/a', value: 'nope' }] },
        as(k8s.PatchStrategy.JsonPatch),
      ),
    );
    expect(f.code).to.equal(422);
    expect(f.status.kind).to.equal('Status');
    const after = await c.core.readNamespacedConfigMap({ name: 'jp-fail', namespace: 'default' });
    expect(after.metadata?.resourceVersion).to.equal(before.metadata?.resourceVersion);
  });

  it('applies a merge patch (application/merge-patch+json), null deleting a key', async () => {
    await cm('mp', { a: '1', b: '2' });
    const patched = await c.core.patchNamespacedConfigMap(
      { name: 'mp', namespace: 'default', body: { metadata: { labels: { x: 'y' } }, data: { a: null, c: '3' } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    expect(patched.data).to.deep.equal({ b: '2', c: '3' });
    expect(patched.metadata?.labels).to.deep.equal({ x: 'y' });
  });

  it('applies a strategic merge patch to a Deployment: containers merge by name', async () => {
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('smp') });
    const patched = await c.apps.patchNamespacedDeployment(
      {
        name: 'smp',
        namespace: 'default',
        body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } },
      },
      as(k8s.PatchStrategy.StrategicMergePatch),
    );
    const containers = patched.spec?.template.spec?.containers ?? [];
    expect(containers.map((x) => `${x.name}=${x.image}`)).to.deep.equal(['app=app:2', 'sidecar=side:1']);
    expect(containers[0]?.env).to.deep.equal([{ name: 'A', value: '1' }]);
    expect(patched.metadata?.generation).to.equal(2);
  });

  it('makes a merge patch with a stale metadata.resourceVersion a 409 Conflict', async () => {
    const first = await cm('mp-rv', { a: '1' });
    await c.core.patchNamespacedConfigMap(
      { name: 'mp-rv', namespace: 'default', body: { data: { a: '2' } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    const f = await failure(
      c.core.patchNamespacedConfigMap(
        { name: 'mp-rv', namespace: 'default', body: { metadata: { resourceVersion: first.metadata?.resourceVersion }, data: { a: '3' } } },
        as(k8s.PatchStrategy.MergePatch),
      ),
    );
    expect(f.code).to.equal(409);
    expect(f.status.reason).to.equal('Conflict');
  });

  it('answers 404 for a merge patch of a missing object', async () => {
    const f = await failure(
      c.core.patchNamespacedConfigMap({ name: 'absent', namespace: 'default', body: { data: {} } }, as(k8s.PatchStrategy.MergePatch)),
    );
    expect(f.code).to.equal(404);
  });

  describe('server-side apply (application/apply-patch+yaml)', () => {
    const apply = (name: string, data: Record<string, string>, manager: string, force?: boolean) =>
      c.core.patchNamespacedConfigMap(
        {
          name,
          namespace: 'default',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data },
          fieldManager: manager,
          force,
        },
        as(k8s.PatchStrategy.ServerSideApply),
      );

    it('creates the object when missing and records an Apply managedFields entry', async () => {
      const created = await apply('ssa', { a: '1' }, 'alice');
      expect(created.data).to.deep.equal({ a: '1' });
      const entry = created.metadata?.managedFields?.find((m) => m.manager === 'alice');
      expect(entry?.operation).to.equal('Apply');
      expect(entry?.fieldsV1).to.deep.equal({ 'f:data': { 'f:a': {} } });
      const res = await raw(
        c.server,
        'PATCH',
        '/api/v1/namespaces/default/configmaps/ssa-raw?fieldManager=raw',
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa-raw' } }),
        { 'content-type': 'application/apply-patch+yaml' },
      );
      expect(res.status).to.equal(201);
    });

    it('answers 409 with causes when another manager owns the field, and force takes it over', async () => {
      await apply('ssa-conflict', { a: '1' }, 'alice');
      const f = await failure(apply('ssa-conflict', { a: '2' }, 'bob'));
      expect(f.code).to.equal(409);
      expect(f.status.reason).to.equal('Conflict');
      expect(f.status.message).to.equal('Apply failed with 1 conflict: conflict with "alice": .data.a');
      expect((f.status.details as { causes: unknown[] }).causes).to.deep.equal([
        { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' },
      ]);
      const forced = await apply('ssa-conflict', { a: '2' }, 'bob', true);
      expect(forced.data).to.deep.equal({ a: '2' });
      const managers = (forced.metadata?.managedFields ?? []).map((m) => m.manager);
      expect(managers).to.deep.equal(['bob']);
    });

    it('removes a field the manager applied before and no longer applies', async () => {
      await apply('ssa-prune', { a: '1', b: '2' }, 'alice');
      const pruned = await apply('ssa-prune', { a: '1' }, 'alice');
      expect(pruned.data).to.deep.equal({ a: '1' });
    });

    it('is a no-op (same resourceVersion) when the same configuration is applied again', async () => {
      const first = await apply('ssa-noop', { a: '1' }, 'alice');
      const again = await apply('ssa-noop', { a: '1' }, 'alice');
      expect(again.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
    });

    it('accepts a YAML body', async () => {
      const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-yaml\ndata:\n  k: "v"\n';
      const res = await raw(c.server, 'PATCH', '/api/v1/namespaces/default/configmaps/ssa-yaml?fieldManager=yaml', yaml, {
        'content-type': 'application/apply-patch+yaml',
      });
      expect(res.status).to.equal(201);
      expect((res.json as { data: unknown }).data).to.deep.equal({ k: 'v' });
    });

    it('requires a fieldManager (400)', async () => {
      const res = await raw(
        c.server,
        'PATCH',
        '/api/v1/namespaces/default/configmaps/ssa-nofm',
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' }),
        {
          'content-type': 'application/apply-patch+yaml',
        },
      );
      expect(res.status).to.equal(400);
      expect((res.json as { reason: string }).reason).to.equal('BadRequest');
    });

    it('records Update entries for other writes, and apply conflicts name them with their apiVersion', async () => {
      await apply('ssa-upd', { a: '1' }, 'alice');
      await c.core.patchNamespacedConfigMap(
        { name: 'ssa-upd', namespace: 'default', body: { data: { a: '9' } }, fieldManager: 'editor' },
        as(k8s.PatchStrategy.MergePatch),
      );
      const f = await failure(apply('ssa-upd', { a: '1' }, 'alice'));
      expect(f.status.message).to.equal('Apply failed with 1 conflict: conflict with "editor" using v1: .data.a');
    });

    it('applies to a Deployment, keeping status for /status', async () => {
      const d = deployment('ssa-deploy');
      const created = await c.apps.patchNamespacedDeployment(
        { name: 'ssa-deploy', namespace: 'default', body: { ...d, status: { replicas: 5 } }, fieldManager: 'ci' },
        as(k8s.PatchStrategy.ServerSideApply),
      );
      expect(created.spec?.replicas).to.equal(1);
      expect(created.status?.replicas).to.equal(undefined);
      const status = await c.apps.patchNamespacedDeploymentStatus(
        {
          name: 'ssa-deploy',
          namespace: 'default',
          body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa-deploy' }, status: { replicas: 3 } },
          fieldManager: 'ctl',
        },
        as(k8s.PatchStrategy.ServerSideApply),
      );
      expect(status.status?.replicas).to.equal(3);
      expect(status.metadata?.managedFields?.find((m) => m.manager === 'ctl')?.subresource).to.equal('status');
    });
  });

  it('answers 415 for an unknown patch content type', async () => {
    await cm('ct', { a: '1' });
    const res = await raw(c.server, 'PATCH', '/api/v1/namespaces/default/configmaps/ct', '{}', { 'content-type': 'application/xml' });
    expect(res.status).to.equal(415);
    expect((res.json as { reason: string }).reason).to.equal('UnsupportedMediaType');
  });
});
