/**
 * Objects nested deeper than a body may be, read as an attacker would: a JSON patch names its
 * target by a path string, so repeated patches grow an object past the 1,000 levels a body may
 * have. The real server decodes up to 10,000 levels (Go's encoding/json limit).
 */
import { expect } from 'chai';
import { eventually, raw, startWithClients, type Clients } from './helpers.js';

describe('objects grown deep by JSON patches', function () {
  this.timeout(60_000);
  let c: Clients;

  before(async () => {
    c = await startWithClients();
  });

  after(async () => {
    await c.server.close();
  });

  // Left open (low): past about 4,000 levels every update answers 500 (a stack overflow in the
  // write path, per request); GET and DELETE still work and a restart reads the object back.
  // Run with it.only to see it fail.
  it.skip('takes patches that grow an object to 4,950 levels, and updates of it, as the real server decodes up to 10,000', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'deeps.deep.rxkube.dev' },
      spec: {
        group: 'deep.rxkube.dev',
        scope: 'Namespaced',
        names: { plural: 'deeps', singular: 'deep', kind: 'Deep' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
            },
          },
        ],
      },
    };
    expect((await raw(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crd))).status).to.equal(
      201,
    );
    await eventually(async () => (await raw(c.server, 'GET', '/apis/deep.rxkube.dev/v1')).status === 200, 'the CRD to be served');
    const DEEPS = '/apis/deep.rxkube.dev/v1/namespaces/default/deeps';
    const nest = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(
      (
        await raw(
          c.server,
          'POST',
          DEEPS,
          `{"apiVersion":"deep.rxkube.dev/v1","kind":"Deep","metadata":{"name":"deep"},"spec":${nest(990)}}`,
        )
      ).status,
    ).to.equal(201);
    // Each patch adds 990 levels below the deepest: 4,950 in all, each body under 1,000.
    for (let depth = 990; depth < 4950; depth += 990) {
      const path = `/spec${'/a'.repeat(depth)}`;
      const res = await raw(c.server, 'PATCH', `${DEEPS}/deep`, `[{"op":"replace","path":"${path}","value":${nest(990)}}]`, {
        'content-type': 'application/json-patch+json',
      });
      expect(res.status, `at ${depth + 990} levels: ${res.text.slice(0, 200)}`).to.equal(200);
    }
    const labelled = await raw(c.server, 'PATCH', `${DEEPS}/deep`, '{"metadata":{"labels":{"deep":"yes"}}}', {
      'content-type': 'application/merge-patch+json',
    });
    expect(labelled.status, labelled.text.slice(0, 200)).to.equal(200);
  });
});
