/**
 * Issue 22, the embedded server under a hostile client: each test is one numbered finding,
 * reproduced over real HTTP against a running server.
 */
import { expect } from 'chai';
import { startApiServer, type ApiServer } from '../src/index.js';
import { raw, type RawResponse } from './helpers.js';

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
});
