import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startApiServer } from '../src/index.js';
import { raw, startWithClients, type Clients, type RawResponse } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';

function statusOf(res: RawResponse): {
  kind: string;
  status: string;
  reason: string;
  code: number;
  message: string;
  details?: { causes?: { field?: string }[] };
} {
  return res.json as ReturnType<typeof statusOf>;
}

describe('apiserver: bad input', () => {
  let c: Clients;
  let snapshot: string;
  let rvBefore: number;

  before(async () => {
    c = await startWithClients();
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'keep' }, data: { a: '1' } } });
    rvBefore = c.server.stats().resourceVersion;
    snapshot = JSON.stringify((await c.core.listConfigMapForAllNamespaces()).items);
  });
  after(async () => {
    await c.server.close();
  });

  it('answers 400 BadRequest for malformed JSON', async () => {
    const res = await raw(c.server, 'POST', CMS, '{"metadata": {"name": "x"');
    expect(res.status).to.equal(400);
    expect(statusOf(res)).to.include({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(statusOf(res).message).to.match(/could not be decoded as JSON/);
  });

  it('answers 404 NotFound for an unknown resource or group', async () => {
    for (const path of ['/api/v1/namespaces/default/widgets', '/apis/nope.example.com/v1/things', '/api/v2/pods', '/not/an/api']) {
      const res = await raw(c.server, 'GET', path);
      expect(res.status, path).to.equal(404);
      expect(statusOf(res)).to.include({ reason: 'NotFound', message: 'the server could not find the requested resource' });
    }
  });

  it('answers 400 when the name in the body is not the name in the URL', async () => {
    const res = await raw(
      c.server,
      'PUT',
      `${CMS}/keep`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' }, data: { a: 'changed' } }),
    );
    expect(res.status).to.equal(400);
    expect(statusOf(res).message).to.equal('the name of the object (other) does not match the name on the URL (keep)');
  });

  it('answers 400 when the namespace in the body is not the namespace in the URL', async () => {
    const res = await raw(c.server, 'POST', CMS, JSON.stringify({ metadata: { name: 'ns-mismatch', namespace: 'kube-system' } }));
    expect(res.status).to.equal(400);
    expect(statusOf(res).message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
  });

  it('answers 400 for a body of another kind or apiVersion', async () => {
    const kind = await raw(c.server, 'POST', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k' } }));
    expect(kind.status).to.equal(400);
    const version = await raw(c.server, 'POST', CMS, JSON.stringify({ apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'k' } }));
    expect(version.status).to.equal(400);
  });

  it('answers 413 RequestEntityTooLarge for a body over 3 MiB', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { blob: 'x'.repeat(3 * 1024 * 1024) } });
    const res = await raw(c.server, 'POST', CMS, big);
    expect(res.status).to.equal(413);
    expect(statusOf(res)).to.include({ reason: 'RequestEntityTooLarge', code: 413 });
  });

  it('answers 422 Invalid with causes for a bad name, a missing name, bad labels', async () => {
    const bad = await raw(c.server, 'POST', CMS, JSON.stringify({ metadata: { name: 'Not_Valid' } }));
    expect(bad.status).to.equal(422);
    expect(statusOf(bad).reason).to.equal('Invalid');
    expect(statusOf(bad).details?.causes?.[0]?.field).to.equal('metadata.name');
    expect(statusOf(bad).message).to.match(
      /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/,
    );
    const missing = await raw(c.server, 'POST', CMS, JSON.stringify({ metadata: {} }));
    expect(missing.status).to.equal(422);
    expect(statusOf(missing).message).to.contain('metadata.name: Required value: name or generateName is required');
    const labels = await raw(c.server, 'POST', CMS, JSON.stringify({ metadata: { name: 'labels', labels: { 'bad key!': 'v' } } }));
    expect(labels.status).to.equal(422);
    const nsName = await raw(c.server, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'has.dot' } }));
    expect(nsName.status).to.equal(422);
  });

  it('answers 422 for a Deployment whose selector does not match its template', async () => {
    const res = await raw(
      c.server,
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      JSON.stringify({
        metadata: { name: 'mismatch' },
        spec: {
          selector: { matchLabels: { app: 'a' } },
          template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      }),
    );
    expect(res.status).to.equal(422);
    expect(statusOf(res).details?.causes?.map((x) => x.field)).to.include('spec.template.metadata.labels');
  });

  it('answers 405 MethodNotAllowed for a method the path does not take', async () => {
    const post = await raw(c.server, 'POST', `${CMS}/keep`, '{}');
    expect(post.status).to.equal(405);
    expect(statusOf(post).reason).to.equal('MethodNotAllowed');
    const put = await raw(c.server, 'PUT', CMS, '{}');
    expect(put.status).to.equal(405);
  });

  it('answers 415 for a create body that is not JSON or YAML', async () => {
    const res = await raw(c.server, 'POST', CMS, '<x/>', { 'content-type': 'application/xml' });
    expect(res.status).to.equal(415);
  });

  it('answers 400 for an invalid dryRun, propagationPolicy or limit', async () => {
    expect((await raw(c.server, 'POST', `${CMS}?dryRun=Some`, JSON.stringify({ metadata: { name: 'd' } }))).status).to.equal(400);
    expect((await raw(c.server, 'DELETE', `${CMS}/keep?propagationPolicy=Sometimes`)).status).to.equal(400);
    expect((await raw(c.server, 'GET', `${CMS}?limit=many`)).status).to.equal(400);
    expect((await raw(c.server, 'GET', `${CMS}?labelSelector=${encodeURIComponent('a in (')}`)).status).to.equal(400);
  });

  it('answers 404 for a subresource the resource does not have', async () => {
    expect((await raw(c.server, 'GET', `${CMS}/keep/status`)).status).to.equal(404);
  });

  // Runs last (mocha keeps order): none of the bad requests above stored anything.
  it('changed no stored object and no resourceVersion', async () => {
    expect(c.server.stats().resourceVersion).to.equal(rvBefore);
    expect(JSON.stringify((await c.core.listConfigMapForAllNamespaces()).items)).to.equal(snapshot);
  });
});

describe('apiserver: bearer token', () => {
  it('answers 401 Unauthorized without the token; client-node with the kubeconfig gets in', async () => {
    const server = await startApiServer({ token: 's3cret' });
    try {
      const none = await raw({ ...server, token: undefined }, 'GET', '/api/v1/namespaces');
      expect(none.status).to.equal(401);
      expect(statusOf(none)).to.include({ reason: 'Unauthorized', code: 401 });
      const wrong = await raw({ ...server, token: 'guess' }, 'POST', CMS, JSON.stringify({ metadata: { name: 'x' } }));
      expect(wrong.status).to.equal(401);
      const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
      const list = await core.listNamespacedConfigMap({ namespace: 'default' });
      expect(list.items).to.deep.equal([]);
      expect(server.kubeconfigYaml()).to.contain('token: "s3cret"');
    } finally {
      await server.close();
    }
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    let err: unknown;
    try {
      await startApiServer({ host: '0.0.0.0' });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.contain('requires a token');
  });
});
