import { expect } from 'chai';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { RequestDescription } from '../src/index.js';
import { raw, startWithClients, tokenFor, type Clients } from './helpers.js';

describe('apiserver: the request log (server.requests)', () => {
  let c: Clients;
  beforeEach(async () => {
    c = await startWithClients();
  });
  afterEach(async () => {
    await c.server.close();
  });

  it('counts resource requests by verb and resource, matches them like a fault, and tells listeners', async () => {
    const heard: RequestDescription[] = [];
    const stop = c.server.requests.onRequest((r) => heard.push(r));
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    await c.core.patchNamespacedConfigMap({ namespace: 'default', name: 'a', body: [{ op: 'add', path: '/data', value: { k: 'v' } }] });
    await c.core.readNamespacedConfigMap({ namespace: 'default', name: 'a' });
    await c.core.listNamespacedConfigMap({ namespace: 'default' });
    c.server.faults.failRequests({ verb: 'create', resource: 'secrets', status: 500 });
    await c.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } }).catch(() => undefined);

    expect(c.server.requests.counts()).to.deep.equal({
      'create configmaps': 1,
      'patch configmaps': 1,
      'get configmaps': 1,
      'list configmaps': 1,
      'create secrets': 1,
    });
    expect(c.server.requests.writes({ resource: 'configmaps' })).to.equal(2);
    expect(c.server.requests.writes(), 'a faulted request counts too').to.equal(3);
    expect(c.server.requests.count({ verb: ['get', 'list'], name: 'a' })).to.equal(1);
    expect(c.server.requests.count({ path: /\/configmaps\/a$/ })).to.equal(2);
    expect(heard.map((r) => `${r.verb} ${r.resource} ${r.name ?? ''}`)).to.deep.equal([
      'create configmaps ',
      'patch configmaps a',
      'get configmaps a',
      'list configmaps ',
      'create secrets ',
    ]);

    stop();
    c.server.requests.reset();
    await c.core.readNamespacedConfigMap({ namespace: 'default', name: 'a' });
    expect(heard).to.have.length(5);
    expect(c.server.requests.counts()).to.deep.equal({ 'get configmaps': 1 });
    expect(() => c.server.requests.count({ resource: /x/ as unknown as string })).to.throw(
      TypeError,
      /requests.count: resource must be a non-empty string/,
    );
  });

  it('logs a request RBAC refuses, as the path names it, and a refused create by server-side apply as the create it asked for', async () => {
    const token = await tokenFor(c.core, 'refused');
    c.server.requests.reset();
    const as = { authorization: `Bearer ${token}`, 'user-agent': 'refused-agent' };
    expect((await raw(c.server, 'GET', '/api/v1/namespaces/default/secrets/s', undefined, as)).status).to.equal(403);
    expect(
      (await raw(c.server, 'GET', '/apis/example.com/v1/namespaces/default/unknowns', undefined, as)).status,
      'authorized before it is looked up',
    ).to.equal(403);
    const ofAgent = () => c.server.requests.entries().filter((e) => e.request.userAgent === 'refused-agent');
    expect(
      ofAgent().map(
        (e) => `${e.request.verb} ${e.request.resource}${e.request.group ? `.${e.request.group}` : ''} ${e.request.name ?? ''}`,
      ),
    ).to.deep.equal(['get secrets s', 'list unknowns.example.com ']);

    // Allowed to patch, not to create: the apply is logged as a patch and the refused create as a create.
    const rbac = c.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'refused-patch' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'refused-patch' },
        subjects: [{ kind: 'ServiceAccount', name: 'refused', namespace: 'default' }],
      },
    });
    await rbac.createClusterRole({
      body: { metadata: { name: 'refused-patch' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] }] },
    });
    c.server.requests.reset();
    const applied = await raw(
      c.server,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/c?fieldManager=m',
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }),
      {
        ...as,
        'content-type': 'application/apply-patch+yaml',
      },
    );
    expect(applied.status).to.equal(403);
    expect(ofAgent().map((e) => `${e.request.verb} ${e.request.resource} ${e.request.name ?? ''}`)).to.deep.equal([
      'patch configmaps c',
      'create configmaps c',
    ]);
  });
});
