/**
 * Issue 22, the embedded server under a hostile client: each test is one numbered finding,
 * reproduced over real HTTP against a running server.
 */
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { startApiServer, type ApiServer } from '../src/index.js';
import { eventually, raw, saToken, type RawResponse } from './helpers.js';
import { exchange } from './raw-http.js';

const CMS = '/api/v1/namespaces/default/configmaps';

interface Status {
  code: number;
  reason: string;
  message: string;
}

const statusOf = (res: RawResponse): Status => res.json as Status;

describe('apiserver: a hostile client (issue 22)', function () {
  this.timeout(60_000);
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ clientNode: false });
  });
  after(async () => {
    await server.close();
  });

  describe('JSON patch bounds', () => {
    it('answers a 2 KB patch of 40 self-copies with 422 at once and keeps serving (once out of memory after minutes)', async () => {
      const body = JSON.stringify({ metadata: { name: 'copies' }, data: { a: 'x'.repeat(64) } });
      expect((await raw(server, 'POST', CMS, body)).status).to.equal(201);
      const ops: unknown[] = [{ op: 'add', path: '/x', value: ['x'.repeat(64)] }];
      for (let i = 0; i < 40; i++) ops.push({ op: 'copy', from: '/x', path: '/x/-' });
      const patch = JSON.stringify(ops);
      expect(patch.length).to.be.below(2000);
      const res = await raw(server, 'PATCH', `${CMS}/copies`, patch, { 'content-type': 'application/json-patch+json' });
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain('accumulated size increase of copy');
      expect((await raw(server, 'GET', `${CMS}/copies`)).status).to.equal(200);
    });
  });

  describe('CRDs in protected groups', () => {
    const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const crd = (group: string, plural: string, kind: string, annotations?: Record<string, string>): string =>
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${plural}.${group}`, ...(annotations ? { annotations } : {}) },
        spec: {
          group,
          scope: 'Cluster',
          names: { plural, kind },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      });

    it('refuses a CRD that would shadow clusterrolebindings (protected group, no approval) with 422, and the built-in keeps serving', async () => {
      const sa = await saToken(server, 'crd-maker', [
        { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['create', 'delete'] },
      ]);
      const as = { authorization: `Bearer ${sa}` };
      const res = await raw(server, 'POST', CRDS, crd('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding'), as);
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain('protected groups must have approval annotation "api-approved.kubernetes.io"');
      const del = await raw(server, 'DELETE', `${CRDS}/clusterrolebindings.rbac.authorization.k8s.io`, undefined, as);
      expect(del.status).to.equal(404);
      const bindings = await raw(server, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings');
      expect(bindings.status).to.equal(200);
      expect((bindings.json as { items: unknown[] }).items.length).to.be.greaterThan(0);
      for (const group of ['k8s.io', 'x.kubernetes.io', 'my.k8s.io']) {
        expect((await raw(server, 'POST', CRDS, crd(group, 'widgets', 'Widget'))).status, group).to.equal(422);
      }
    });

    it('serves an approved CRD in a protected group, but never lets one replace or delete a built-in resource', async () => {
      const approved = { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/1' };
      expect((await raw(server, 'POST', CRDS, crd('gadgets.x-k8s.io.k8s.io', 'gadgets', 'Gadget', approved))).status).to.equal(201);
      expect((await raw(server, 'GET', '/apis/gadgets.x-k8s.io.k8s.io/v1/gadgets')).status).to.equal(200);
      const bad = await raw(server, 'POST', CRDS, crd('spare.k8s.io', 'spares', 'Spare', { 'api-approved.kubernetes.io': 'yes' }));
      expect(bad.status).to.equal(422);
      const shadow = await raw(
        server,
        'POST',
        CRDS,
        crd('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding', {
          'api-approved.kubernetes.io': 'unapproved, testing',
        }),
      );
      expect(shadow.status, shadow.text).to.equal(201);
      const before = (await raw(server, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')).json as {
        kind: string;
        items: unknown[];
      };
      expect(before.kind).to.equal('ClusterRoleBindingList');
      const status = await eventuallyStatus(server, `${CRDS}/clusterrolebindings.rbac.authorization.k8s.io`);
      expect(status.find((c) => c.type === 'NamesAccepted')).to.include({ status: 'False', reason: 'BuiltinConflict' });
      expect((await raw(server, 'DELETE', `${CRDS}/clusterrolebindings.rbac.authorization.k8s.io`)).status).to.equal(200);
      await eventually(
        async () => (await raw(server, 'GET', `${CRDS}/clusterrolebindings.rbac.authorization.k8s.io`)).status === 404,
        'the CRD to be gone',
      );
      const after = (await raw(server, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')).json as { items: unknown[] };
      expect(after.items.length).to.equal(before.items.length);
    });
  });

  describe('one connection', () => {
    it('handles pipelined requests in order: a GET after a POST on one connection sees what the POST created', async () => {
      const url = new URL(server.url);
      const host = url.host;
      const wire: string[] = [];
      for (let i = 0; i < 5; i++) {
        const body = JSON.stringify({ metadata: { name: `piped-${i}` }, data: { v: 'x'.repeat(i * 1000) } });
        wire.push(
          `POST ${CMS} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        wire.push(`GET ${CMS}/piped-${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
        wire.push(`DELETE ${CMS}/piped-${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
        wire.push(`GET ${CMS}/piped-${i} HTTP/1.1\r\nHost: ${host}\r\n${i === 4 ? 'Connection: close\r\n' : ''}\r\n`);
      }
      const ex = await exchange(url.hostname, Number(url.port), Buffer.from(wire.join('')));
      expect(ex.responses.map((r) => r.status)).to.deep.equal(Array.from({ length: 5 }, () => [201, 200, 200, 404]).flat());
    });
  });

  describe('clients that do not read', () => {
    let small: ApiServer;
    const sockets: Socket[] = [];
    before(async () => {
      // One user throughout, answered at once (no queue): the limits as that user meets them.
      small = await startApiServer({
        clientNode: false,
        maxRequestsInFlight: 3,
        maxPendingResponseBytes: 6 * 1024 * 1024,
        writeTimeoutMs: 500,
        bodyTimeoutMs: 1000,
        requestQueueWaitMs: 0,
      });
      // A 8 MB list: more than a loopback socket takes in before its reader reads.
      for (let i = 0; i < 8; i++) {
        const body = JSON.stringify({ metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(1_000_000) } });
        expect((await raw(small, 'POST', CMS, body)).status).to.equal(201);
      }
    });
    after(async () => {
      for (const s of sockets) s.destroy();
      await small.close();
    });

    /** Asks for the whole list and never reads the answer. */
    const stall = (): Promise<Socket> =>
      new Promise((resolve) => {
        const url = new URL(small.url);
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`GET ${CMS} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
          socket.pause();
          resolve(socket);
        });
        sockets.push(socket);
      });

    it('answers 429 with Retry-After beyond the bytes answers may hold unread, and frees the unread answers after writeTimeoutMs', async () => {
      await stall();
      await stall();
      await eventually(async () => (await raw(small, 'GET', `${CMS}/big-0`)).status === 429, 'the unread answers to fill the budget');
      const refused = await raw(small, 'GET', `${CMS}/big-0`);
      expect(refused.status).to.equal(429);
      expect(refused.headers['retry-after']).to.equal('1');
      expect(statusOf(refused)).to.include({ reason: 'TooManyRequests', message: 'Too many requests, please try again later.' });
      // Nothing was read: only cutting the unread answers frees the budget.
      await eventually(async () => (await raw(small, 'GET', `${CMS}/big-0`)).status === 200, 'the unread answers to be cut');
    });

    it('answers 429 beyond maxRequestsInFlight requests in flight, counting no watch', async () => {
      const url = new URL(small.url);
      // Three writes whose bodies never finish hold the three slots (until bodyTimeoutMs).
      for (let i = 0; i < 3; i++) {
        const socket = connect(Number(url.port), url.hostname);
        sockets.push(socket);
        socket.write(
          `POST ${CMS} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"metadata":`,
        );
      }
      await eventually(async () => (await raw(small, 'GET', `${CMS}/big-0`)).status === 429, 'the slots to fill');
      expect(statusOf(await raw(small, 'GET', '/version')).reason).to.equal('TooManyRequests');
      const watch = await exchange(
        url.hostname,
        Number(url.port),
        Buffer.from(`GET ${CMS}?watch=1&resourceVersion=0&timeoutSeconds=1 HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`),
        { streamMs: 50 },
      );
      expect(watch.responses[0]?.status).to.equal(200);
      await eventually(async () => (await raw(small, 'GET', `${CMS}/big-0`)).status === 200, 'the slow bodies to time out');
    });
  });

  describe('continue tokens', () => {
    const token = (fields: Record<string, unknown>): string =>
      Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', ...fields })).toString('base64url');

    it('never serve another list: a token is bound to its resource, namespace and selectors, and its id is not guessable', async () => {
      for (let i = 0; i < 3; i++) {
        expect(
          (
            await raw(
              server,
              'POST',
              '/api/v1/namespaces/kube-system/secrets',
              JSON.stringify({ metadata: { name: `s-${i}` }, stringData: { k: 'secret' } }),
            )
          ).status,
        ).to.equal(201);
        expect((await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: `page-${i}` } }))).status).to.equal(201);
      }
      const sa = await saToken(server, 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }]);
      const as = { authorization: `Bearer ${sa}` };
      const secrets = (await raw(server, 'GET', '/api/v1/namespaces/kube-system/secrets?limit=1')).json as {
        metadata: { continue: string };
      };
      const stolen = secrets.metadata.continue;
      expect(JSON.parse(Buffer.from(stolen, 'base64url').toString()).id).to.match(/^[\w-]{20,}$/);
      for (const path of [`${CMS}?limit=1&continue=${stolen}`, `/api/v1/namespaces/kube-system/configmaps?limit=1&continue=${stolen}`]) {
        const res = await raw(server, 'GET', path, undefined, as);
        expect(res.status, res.text).to.equal(400);
        expect(statusOf(res).message).to.contain('continue key is not valid');
        expect(res.text).not.to.contain('"Secret"');
      }
      // The admin's own token, for its own list, still pages; a forged sequential id finds nothing.
      expect((await raw(server, 'GET', `/api/v1/namespaces/kube-system/secrets?limit=1&continue=${stolen}`)).status).to.equal(200);
      for (const id of ['1', '2', '3']) {
        const res = await raw(server, 'GET', `${CMS}?limit=1&continue=${token({ id, rv: 1, offset: 1, after: '' })}`, undefined, as);
        expect(res.status).to.be.oneOf([400, 410]);
        expect(res.text).not.to.contain('"Secret"');
      }
      const labelled = (await raw(server, 'GET', `${CMS}?limit=1&labelSelector=a!%3Db`)).json as { metadata: { continue: string } };
      expect((await raw(server, 'GET', `${CMS}?limit=1&continue=${labelled.metadata.continue}`)).status).to.equal(400);
    });

    it('answer a forged offset (-1000, 0.5, past the end) with 400, never 500', async () => {
      const list = (await raw(server, 'GET', `${CMS}?limit=1`)).json as { metadata: { continue: string } };
      const real = JSON.parse(Buffer.from(list.metadata.continue, 'base64url').toString()) as Record<string, unknown>;
      for (const offset of [-1000, 0.5, 0, 1e9]) {
        const res = await raw(server, 'GET', `${CMS}?limit=1&continue=${token({ ...real, offset })}`);
        expect(res.status, `offset ${offset}: ${res.text}`).to.equal(400);
        expect(statusOf(res).reason).to.equal('BadRequest');
      }
    });
  });

  describe('CEL runtime cost', () => {
    const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const WORDS = '/apis/cost.rxkube.dev/v1/namespaces/default/words';
    before(async () => {
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'words.cost.rxkube.dev' },
        spec: {
          group: 'cost.rxkube.dev',
          scope: 'Namespaced',
          names: { plural: 'words', kind: 'Word' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: {
                        s: {
                          type: 'string',
                          maxLength: 8000,
                          'x-kubernetes-validations': [{ rule: "self.replace('a', self).matches('^(a|b)*c$') == false" }],
                        },
                        list: {
                          type: 'array',
                          maxItems: 100,
                          items: {
                            type: 'string',
                            maxLength: 30000,
                            'x-kubernetes-validations': [{ rule: `self.replace('a', '${'x'.repeat(100)}').size() > 0` }],
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          ],
        },
      };
      const res = await raw(server, 'POST', CRDS, JSON.stringify(crd));
      expect(res.status, res.text).to.equal(201);
      await eventually(async () => (await raw(server, 'GET', WORDS)).status === 200, 'the CRD to be served');
    });

    it('stops a rule whose string grows past the per-call cost limit (replace of a string by itself, then matches) with 422, at once', async () => {
      const res = await raw(
        server,
        'POST',
        WORDS,
        JSON.stringify({ apiVersion: 'cost.rxkube.dev/v1', kind: 'Word', metadata: { name: 'grow' }, spec: { s: 'a'.repeat(2000) } }),
      );
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain('call cost exceeds limit for rule');
      const small = await raw(
        server,
        'POST',
        WORDS,
        JSON.stringify({ apiVersion: 'cost.rxkube.dev/v1', kind: 'Word', metadata: { name: 'small' }, spec: { s: 'ab' } }),
      );
      expect(small.status, small.text).to.equal(201);
    });

    it('stops the rules of one object once they spend the per-request budget together, with the real server message', async () => {
      const list = Array.from({ length: 40 }, () => 'a'.repeat(20_000));
      const res = await raw(
        server,
        'POST',
        WORDS,
        JSON.stringify({ apiVersion: 'cost.rxkube.dev/v1', kind: 'Word', metadata: { name: 'many' }, spec: { list } }),
      );
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain(
        'validation failed due to running out of cost budget, no further validation rules will be run',
      );
      const few = await raw(
        server,
        'POST',
        WORDS,
        JSON.stringify({ apiVersion: 'cost.rxkube.dev/v1', kind: 'Word', metadata: { name: 'few' }, spec: { list: list.slice(0, 3) } }),
      );
      expect(few.status, few.text).to.equal(201);
    });
  });

  describe('watch history', () => {
    it('keeps history within historyBytes: updates of a large object evict old versions, and a watch from one of them gets 410', async () => {
      const bounded = await startApiServer({ clientNode: false, historyBytes: 1024 * 1024 });
      try {
        const body = (v: number): string => JSON.stringify({ metadata: { name: 'large' }, data: { v: String(v).repeat(200_000) } });
        const created = await raw(bounded, 'POST', CMS, body(0));
        expect(created.status).to.equal(201);
        const first = (created.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
        let last = first;
        for (let i = 1; i <= 10; i++) {
          const res = await raw(bounded, 'PUT', `${CMS}/large`, body(i));
          expect(res.status).to.equal(200);
          last = (res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
        }
        const url = new URL(bounded.url);
        const watchFrom = (rv: string) =>
          exchange(
            url.hostname,
            Number(url.port),
            Buffer.from(
              `GET ${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1 HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`,
            ),
            { streamMs: 300 },
          );
        const old = await watchFrom(first);
        expect(old.responses[0]?.body.toString()).to.contain('"code":410');
        const recent = await watchFrom(String(Number(last) - 1));
        expect(recent.responses[0]?.body.toString()).to.contain('"type":"MODIFIED"');
      } finally {
        await bounded.close();
      }
    });
  });

  describe('TokenRequest boundObjectRef', () => {
    const tokenPath = '/api/v1/namespaces/default/serviceaccounts/bound-sa/token';
    const request = (boundObjectRef: Record<string, unknown>) =>
      raw(server, 'POST', tokenPath, JSON.stringify({ spec: { audiences: [], boundObjectRef } }));

    it('binds a token to a Pod that runs as the account: it stops working when the Pod is deleted; other kinds, missing objects and other accounts are refused', async () => {
      await saToken(server, 'bound-sa', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }]);
      const pod = {
        metadata: { name: 'bound-pod' },
        spec: { serviceAccountName: 'bound-sa', containers: [{ name: 'c', image: 'busybox' }] },
      };
      expect((await raw(server, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod))).status).to.equal(201);
      const granted = await request({ apiVersion: 'v1', kind: 'Pod', name: 'bound-pod' });
      expect(granted.status, granted.text).to.equal(201);
      const body = granted.json as { spec: { boundObjectRef: { uid?: string } }; status: { token: string } };
      expect(body.spec.boundObjectRef.uid).to.be.a('string').and.not.equal('');
      const as = { authorization: `Bearer ${body.status.token}` };
      expect((await raw(server, 'GET', CMS, undefined, as)).status).to.equal(200);
      expect((await raw(server, 'DELETE', '/api/v1/namespaces/default/pods/bound-pod?gracePeriodSeconds=0')).status).to.equal(200);
      await eventually(
        async () => (await raw(server, 'GET', '/api/v1/namespaces/default/pods/bound-pod')).status === 404,
        'the Pod to be gone',
      );
      expect((await raw(server, 'GET', CMS, undefined, as)).status).to.equal(401);

      const deployment = await request({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' });
      expect(deployment.status).to.equal(400);
      expect(statusOf(deployment).message).to.equal('cannot bind token to object of type apps/v1, Kind=Deployment');
      expect((await request({ apiVersion: 'v1', kind: 'Pod', name: 'bound-pod' })).status).to.equal(404);
      const other = { metadata: { name: 'other-pod' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
      expect((await raw(server, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(other))).status).to.equal(201);
      const foreign = await request({ apiVersion: 'v1', kind: 'Pod', name: 'other-pod' });
      expect(foreign.status).to.equal(400);
      expect(statusOf(foreign).message).to.contain('pod running with different serviceaccount name');
      expect((await request({ apiVersion: 'v1', kind: 'Pod', name: 'other-pod', uid: 'not-its-uid' })).status).to.equal(400);
    });
  });

  describe('list resourceVersion semantics', () => {
    const rvOf = (res: RawResponse): string => (res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

    it('answers resourceVersionMatch=Exact with the list as it was, NotOlderThan a future version with 504 after waiting, an unknown match with 422', async () => {
      const created = await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'exact' }, data: { v: 'old' } }));
      const before = rvOf(created);
      await raw(server, 'PUT', `${CMS}/exact`, JSON.stringify({ metadata: { name: 'exact' }, data: { v: 'new' } }));
      await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'exact-later' } }));
      const old = await raw(server, 'GET', `${CMS}?resourceVersion=${before}&resourceVersionMatch=Exact`);
      expect(old.status, old.text).to.equal(200);
      expect(rvOf(old)).to.equal(before);
      const items = (old.json as { items: { metadata: { name: string }; data?: { v?: string } }[] }).items;
      expect(items.find((o) => o.metadata.name === 'exact')?.data?.v).to.equal('old');
      expect(items.map((o) => o.metadata.name)).not.to.include('exact-later');

      const current = rvOf(await raw(server, 'GET', CMS));
      const future = await raw(server, 'GET', `${CMS}?resourceVersion=${Number(current) + 1000}&resourceVersionMatch=NotOlderThan`);
      expect(future.status).to.equal(504);
      expect(statusOf(future).message).to.contain('Too large resource version');

      const bogus = await raw(server, 'GET', `${CMS}?resourceVersion=1&resourceVersionMatch=bogus`);
      expect(bogus.status).to.equal(422);
      expect(statusOf(bogus).message).to.contain('resourceVersionMatch: Unsupported value: "bogus"');
      expect((await raw(server, 'GET', `${CMS}?resourceVersionMatch=Exact`)).status).to.equal(422);
      expect((await raw(server, 'GET', `${CMS}?resourceVersion=0&resourceVersionMatch=Exact`)).status).to.equal(422);
    });

    it('answers a resourceVersion past a uint64 with 400 "value out of range" at once, for a list and a watch (fuzz seed 530410085; was: a 504 after waiting 3 s for it)', async () => {
      const huge = '99999999999999999999';
      for (const path of [`${CMS}?resourceVersion=${huge}`, `${CMS}?watch=true&resourceVersion=${huge}`]) {
        const res = await raw(server, 'GET', path);
        expect(res.status, path).to.equal(400);
        expect(statusOf(res).message).to.equal(
          `invalid resource version: resourceVersion: Invalid value: "${huge}": strconv.ParseUint: parsing "${huge}": value out of range`,
        );
      }
    });

    it('answers Exact at a version the history no longer holds with 410', async () => {
      const small = await startApiServer({ clientNode: false, historySize: 2 });
      try {
        const first = rvOf(await raw(small, 'POST', CMS, JSON.stringify({ metadata: { name: 'a' } })));
        for (const name of ['b', 'c', 'd']) await raw(small, 'POST', CMS, JSON.stringify({ metadata: { name } }));
        const res = await raw(small, 'GET', `${CMS}?resourceVersion=${first}&resourceVersionMatch=Exact`);
        expect(res.status).to.equal(410);
        expect(statusOf(res).reason).to.equal('Expired');
      } finally {
        await small.close();
      }
    });
  });

  describe('collections', () => {
    it('answers a DELETE of the namespace collection with 405 and deletes no namespace, as a real cluster serves no deletecollection of namespaces (was: every namespace before default deleted)', async () => {
      expect((await raw(server, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'aa-first' } }))).status).to.equal(201);
      for (const path of ['/api/v1/namespaces', '/api/v1/namespaces/', '/api/v1/namespaces/aa-first/..']) {
        const res = await raw(server, 'DELETE', path);
        expect(res.status, path).to.equal(405);
        expect(statusOf(res).reason).to.equal('MethodNotAllowed');
      }
      const ns = await raw(server, 'GET', '/api/v1/namespaces/aa-first');
      expect((ns.json as { status?: { phase?: string } }).status?.phase).to.equal('Active');
      const discovery = (await raw(server, 'GET', '/api/v1')).json as { resources: { name: string; verbs: string[] }[] };
      expect(discovery.resources.find((r) => r.name === 'namespaces')?.verbs).to.not.include('deletecollection');
    });
  });

  describe('warnings', () => {
    it('names an unknown field holding a DEL byte in its Warning header, escaped, instead of a 500 (fuzz seed 947161464)', async () => {
      expect((await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'warned' } }))).status).to.equal(201);
      const res = await raw(server, 'PATCH', `${CMS}/warned`, JSON.stringify({ ['a\x7fb']: 1 }), {
        'content-type': 'application/merge-patch+json',
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.warning).to.equal('299 - "unknown field \\"a\\u007fb\\""');
    });
  });
});

/** A ServiceAccount's token, the account bound to a ClusterRole of `rules` (made by the admin). */
async function eventuallyStatus(server: ApiServer, path: string): Promise<{ type: string }[]> {
  let conditions: { type: string }[] = [];
  await eventually(async () => {
    const crd = (await raw(server, 'GET', path)).json as { status?: { conditions?: { type: string }[] } };
    conditions = crd.status?.conditions ?? [];
    return conditions.some((c) => c.type === 'NamesAccepted');
  }, 'the CRD to have its conditions');
  return conditions;
}
