import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { failure, startWithClients, type Clients } from './helpers.js';

describe('apiserver: CRUD with @kubernetes/client-node', () => {
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c.server.close();
  });

  it('starts with the default namespaces, Active and labelled with their name', async () => {
    const list = await c.core.listNamespace();
    const names = list.items.map((n) => n.metadata?.name);
    expect(names).to.include.members(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
    const def = list.items.find((n) => n.metadata?.name === 'default') as k8s.V1Namespace;
    expect(def.status?.phase).to.equal('Active');
    expect(def.spec?.finalizers).to.deep.equal(['kubernetes']);
    expect(def.metadata?.labels).to.deep.equal({ 'kubernetes.io/metadata.name': 'default' });
  });

  it('creates, reads, lists, replaces and deletes a ConfigMap', async () => {
    const created = await c.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'crud', labels: { app: 'x' } }, data: { a: '1' } },
    });
    expect(created.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.resourceVersion).to.match(/^\d+$/);
    expect(created.metadata?.creationTimestamp).to.be.instanceOf(Date);
    expect(created.metadata?.namespace).to.equal('default');
    expect(created.metadata?.generation).to.equal(undefined);

    const read = await c.core.readNamespacedConfigMap({ name: 'crud', namespace: 'default' });
    expect(read.data).to.deep.equal({ a: '1' });
    expect(read.metadata?.resourceVersion).to.equal(created.metadata?.resourceVersion);

    read.data = { a: '2' };
    const replaced = await c.core.replaceNamespacedConfigMap({ name: 'crud', namespace: 'default', body: read });
    expect(Number(replaced.metadata?.resourceVersion)).to.be.greaterThan(Number(created.metadata?.resourceVersion));
    expect(replaced.metadata?.uid).to.equal(created.metadata?.uid);
    expect(replaced.data).to.deep.equal({ a: '2' });

    const list = await c.core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.items.map((i) => i.metadata?.name)).to.include('crud');
    expect(Number(list.metadata?.resourceVersion)).to.be.at.least(Number(replaced.metadata?.resourceVersion));

    await c.core.deleteNamespacedConfigMap({ name: 'crud', namespace: 'default' });
    const gone = await failure(c.core.readNamespacedConfigMap({ name: 'crud', namespace: 'default' }));
    expect(gone.code).to.equal(404);
    expect(gone.status).to.include({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      message: 'configmaps "crud" not found',
    });
    expect(gone.status.details).to.deep.equal({ name: 'crud', kind: 'configmaps' });
  });

  it('answers 409 AlreadyExists for a duplicate name', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } });
    const f = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } }));
    expect(f.code).to.equal(409);
    expect(f.status.reason).to.equal('AlreadyExists');
    expect(f.status.message).to.equal('configmaps "dup" already exists');
  });

  it('generates names from generateName', async () => {
    const a = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    const b = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    expect(a.metadata?.name).to.match(/^gen-[a-z0-9]{5}$/);
    expect(b.metadata?.name).to.match(/^gen-[a-z0-9]{5}$/);
    expect(a.metadata?.name).to.not.equal(b.metadata?.name);
  });

  it('rejects a replace with a stale resourceVersion: 409 Conflict', async () => {
    const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'occ' }, data: { v: '1' } } });
    await c.core.replaceNamespacedConfigMap({ name: 'occ', namespace: 'default', body: { ...cm, data: { v: '2' } } });
    const f = await failure(c.core.replaceNamespacedConfigMap({ name: 'occ', namespace: 'default', body: { ...cm, data: { v: '3' } } }));
    expect(f.code).to.equal(409);
    expect(f.status.reason).to.equal('Conflict');
    expect(f.status.message).to.equal(
      'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    const now = await c.core.readNamespacedConfigMap({ name: 'occ', namespace: 'default' });
    expect(now.data).to.deep.equal({ v: '2' });
  });

  it('lets built-ins replace without a resourceVersion (unconditional update)', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'uncond' }, data: { v: '1' } } });
    const replaced = await c.core.replaceNamespacedConfigMap({
      name: 'uncond',
      namespace: 'default',
      body: { metadata: { name: 'uncond' }, data: { v: '9' } },
    });
    expect(replaced.data).to.deep.equal({ v: '9' });
  });

  it('lists across all namespaces at /api/v1/configmaps', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'other' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'other', body: { metadata: { name: 'elsewhere' } } });
    const all = await c.core.listConfigMapForAllNamespaces();
    const keys = all.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`);
    expect(keys).to.include.members(['other/elsewhere', 'default/dup']);
    const sorted = [...keys].sort();
    expect(keys).to.deep.equal(sorted);
  });

  it('defaults a Deployment and tracks its generation', async () => {
    const d = await c.apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
        },
      },
    });
    expect(d.metadata?.generation).to.equal(1);
    expect(d.spec?.replicas).to.equal(1);
    expect(d.spec?.strategy?.type).to.equal('RollingUpdate');
    expect(d.spec?.revisionHistoryLimit).to.equal(10);
    expect(d.spec?.template.spec?.containers[0]?.imagePullPolicy).to.equal('IfNotPresent');
    const status = await c.apps.readNamespacedDeploymentStatus({ name: 'web', namespace: 'default' });
    expect(status.metadata?.name).to.equal('web');
  });

  it('serves the Deployment scale subresource (autoscaling/v1 Scale)', async () => {
    const scale = await c.apps.readNamespacedDeploymentScale({ name: 'web', namespace: 'default' });
    expect(scale).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1' });
    expect(scale.spec?.replicas).to.equal(1);
    expect(scale.status?.selector).to.equal('app=web');
    const replaced = await c.apps.replaceNamespacedDeploymentScale({
      name: 'web',
      namespace: 'default',
      body: { ...scale, spec: { replicas: 4 } },
    });
    expect(replaced.spec?.replicas).to.equal(4);
    const d = await c.apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    expect(d.spec?.replicas).to.equal(4);
    expect(d.metadata?.generation).to.equal(2);
  });

  it('turns Secret stringData into base64 data and defaults the type', async () => {
    const s = await c.core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'sec' }, stringData: { password: 'hunter2' } },
    });
    expect(s.type).to.equal('Opaque');
    expect(s.data).to.deep.equal({ password: Buffer.from('hunter2').toString('base64') });
    expect(s.stringData).to.equal(undefined);
  });

  it('allocates a Service clusterIP and keeps it on replace', async () => {
    const svc = await c.core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } },
    });
    expect(svc.spec?.clusterIP).to.match(/^10\.96\.\d+\.\d+$/);
    expect(svc.spec?.ports?.[0]).to.deep.include({ port: 80, protocol: 'TCP', targetPort: 80 });
    const replaced = await c.core.replaceNamespacedService({
      name: 'svc',
      namespace: 'default',
      body: { metadata: { name: 'svc', resourceVersion: svc.metadata?.resourceVersion }, spec: { ports: [{ port: 81 }] } },
    });
    expect(replaced.spec?.clusterIP).to.equal(svc.spec?.clusterIP);
  });

  it('creates and replaces a Lease, with 409 on a stale replace (leader election)', async () => {
    const lease = await c.coordination.createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: new Date(), renewTime: new Date() },
      },
    });
    expect(lease.spec?.holderIdentity).to.equal('a');
    const renewed = await c.coordination.replaceNamespacedLease({
      name: 'leader',
      namespace: 'default',
      // A second later: a renewal within the same millisecond would be the same object, a no-op update.
      body: { ...lease, spec: { ...lease.spec, renewTime: new Date(Date.now() + 1_000) } },
    });
    expect(renewed.metadata?.resourceVersion).to.not.equal(lease.metadata?.resourceVersion);
    const stolen = await failure(
      c.coordination.replaceNamespacedLease({
        name: 'leader',
        namespace: 'default',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
      }),
    );
    expect(stolen.code).to.equal(409);
    expect(stolen.status.reason).to.equal('Conflict');
    const current = await c.coordination.readNamespacedLease({ name: 'leader', namespace: 'default' });
    expect(current.spec?.holderIdentity).to.equal('a');
  });

  it('creates a Lease on replace when it does not exist (AllowCreateOnUpdate)', async () => {
    const created = await c.coordination.replaceNamespacedLease({
      name: 'fresh',
      namespace: 'default',
      body: { metadata: { name: 'fresh' }, spec: { holderIdentity: 'z' } },
    });
    expect(created.metadata?.uid).to.be.a('string');
  });

  it('answers 404 for a replace of a missing ConfigMap', async () => {
    const f = await failure(
      c.core.replaceNamespacedConfigMap({ name: 'nope', namespace: 'default', body: { metadata: { name: 'nope' } } }),
    );
    expect(f.code).to.equal(404);
  });

  it('creates and deletes cluster-scoped objects (Namespace)', async () => {
    const ns = await c.core.createNamespace({ body: { metadata: { name: 'tmp-ns', namespace: 'ignored' } } });
    expect(ns.metadata?.namespace).to.equal(undefined);
    const read = await c.core.readNamespace({ name: 'tmp-ns' });
    expect(read.status?.phase).to.equal('Active');
  });

  it('honours dryRun=All on delete and patch: answers, changes nothing', async () => {
    const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dry-keep' }, data: { a: '1' } } });
    await c.core.deleteNamespacedConfigMap({ name: 'dry-keep', namespace: 'default', dryRun: 'All' });
    const patched = await c.core.patchNamespacedConfigMap(
      { name: 'dry-keep', namespace: 'default', body: [{ op: 'replace', path: '/data/a', value: '2' }], dryRun: 'All' },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    expect(patched.data).to.deep.equal({ a: '2' });
    const after = await c.core.readNamespacedConfigMap({ name: 'dry-keep', namespace: 'default' });
    expect(after.data).to.deep.equal({ a: '1' });
    expect(after.metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
  });

  it('honours dryRun=All: validates and answers, stores nothing', async () => {
    const dry = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dry' } }, dryRun: 'All' });
    expect(dry.metadata?.name).to.equal('dry');
    const f = await failure(c.core.readNamespacedConfigMap({ name: 'dry', namespace: 'default' }));
    expect(f.code).to.equal(404);
  });
});
