import { expect } from 'chai';
import type { RequestDescription } from '../src/index.js';
import { startWithClients, type Clients } from './helpers.js';

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

    expect(c.server.requests.counts()).to.deep.equal({ 'create configmaps': 1, 'patch configmaps': 1, 'get configmaps': 1, 'list configmaps': 1, 'create secrets': 1 });
    expect(c.server.requests.writes({ resource: 'configmaps' })).to.equal(2);
    expect(c.server.requests.writes(), 'a faulted request counts too').to.equal(3);
    expect(c.server.requests.count({ verb: ['get', 'list'], name: 'a' })).to.equal(1);
    expect(c.server.requests.count({ path: /\/configmaps\/a$/ })).to.equal(2);
    expect(heard.map((r) => `${r.verb} ${r.resource} ${r.name ?? ''}`)).to.deep.equal(['create configmaps ', 'patch configmaps a', 'get configmaps a', 'list configmaps ', 'create secrets ']);

    stop();
    c.server.requests.reset();
    await c.core.readNamespacedConfigMap({ namespace: 'default', name: 'a' });
    expect(heard).to.have.length(5);
    expect(c.server.requests.counts()).to.deep.equal({ 'get configmaps': 1 });
    expect(() => c.server.requests.count({ resource: /x/ as unknown as string })).to.throw(TypeError, /requests.count: resource must be a non-empty string/);
  });
});
