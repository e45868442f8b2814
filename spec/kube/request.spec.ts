// The request path every API call takes (client-node's authentication or a direct connection, then undici's dispatch): answers, errors and aborts over real HTTP.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { kubeConfigOf } from '../../lib/kube/config.js';
import { createKubeClient, kubeClientOf, KubeApiError, type KubeClient, type KubeConfigData } from '../../lib/kube/index.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('kube/request: answers, errors and aborts over HTTP', function () {
  this.timeout(20_000);
  let server: Server;
  let handler: Handler = (_req, res) => res.end();
  let origin = '';
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      handler(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  beforeEach(() => {
    seen.length = 0;
  });

  // client-node takes plain HTTP only with insecure-skip-tls-verify, as the embedded server's kubeconfig has it.
  const data = (server: string): KubeConfigData => ({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'a-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const clients: Array<[string, (server: string) => KubeClient]> = [
    ['a direct connection', (server) => kubeClientOf(data(server))],
    ["client-node's KubeConfig", (server) => createKubeClient(kubeConfigOf(data(server)))],
  ];

  for (const [through, clientFor] of clients) {
    describe(`through ${through}`, () => {
      it('assembles a body sent in many small chunks, a character split between two of them', async () => {
        const text = JSON.stringify({ kind: 'Thing', note: 'grüße, 世界 '.repeat(200) });
        handler = (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          const bytes = Buffer.from(text);
          // 7-byte writes, each flushed on its own: multi-byte characters straddle the chunks.
          let at = 0;
          const next = (): void => {
            if (at >= bytes.length) return void res.end();
            res.write(bytes.subarray(at, (at += 7)), () => setImmediate(next));
          };
          next();
        };
        const answer = await clientFor(origin).request({ method: 'GET', path: '/api/v1/things' });
        expect(answer).to.deep.equal(JSON.parse(text));
      });

      it('sends the path below the server URL, the query encoded, the token and a JSON body', async () => {
        let body = '';
        let authorization: string | undefined;
        handler = (req, res) => {
          authorization = req.headers.authorization;
          req.setEncoding('utf8');
          req.on('data', (chunk: string) => (body += chunk));
          req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
        };
        const client = clientFor(`${origin}/prefix`);
        const answer = await client.request({
          method: 'PATCH',
          path: '/api/v1/namespaces/default/configmaps/a',
          query: { fieldManager: 'a b&c', dryRun: undefined, force: true },
          body: { data: { k: 'v' } },
          contentType: 'application/merge-patch+json',
        });
        expect(answer).to.deep.equal({ ok: true });
        expect(seen).to.deep.equal(['PATCH /prefix/api/v1/namespaces/default/configmaps/a?fieldManager=a+b%26c&force=true']);
        expect(authorization).to.equal('Bearer a-token');
        expect(JSON.parse(body)).to.deep.equal({ data: { k: 'v' } });
      });

      it('rejects an error answer with a KubeApiError carrying its status and Status body', async () => {
        handler = (_req, res) =>
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'things "a" not found' }));
        const failure: unknown = await clientFor(origin)
          .request({ method: 'GET', path: '/api/v1/things/a' })
          .catch((error: unknown) => error);
        expect(failure).to.be.instanceOf(KubeApiError);
        expect((failure as KubeApiError).code).to.equal(404);
        expect((failure as KubeApiError).message).to.contain('not found');
      });

      it("passes over an informational answer (103 Early Hints): the status and headers are the final answer's", async () => {
        handler = (_req, res) => {
          res.writeEarlyHints({ link: '</hint>; rel=preload' }, () =>
            res
              .writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' })
              .end(JSON.stringify({ kind: 'Status', code: 429 })),
          );
        };
        const failure: unknown = await clientFor(origin)
          .request({ method: 'GET', path: '/api/v1/things' })
          .catch((error: unknown) => error);
        expect(failure).to.be.instanceOf(KubeApiError);
        expect((failure as KubeApiError).code).to.equal(429);
        expect((failure as KubeApiError).headers)
          .to.include({ 'retry-after': '3' })
          .and.not.have.property('link');
      });

      it("rejects with the signal's reason, sending nothing, when the signal was aborted before", async () => {
        handler = (_req, res) => res.end('{}');
        const reason = new Error('the run was stopped');
        const failure = await clientFor(origin)
          .request({ method: 'GET', path: '/api/v1/things', signal: AbortSignal.abort(reason) })
          .catch((error: unknown) => error);
        expect(failure).to.equal(reason);
        expect(seen).to.deep.equal([]);
      });

      it("rejects with the signal's reason when aborted while the server holds the answer, and the pool serves on", async () => {
        const held: ServerResponse[] = [];
        handler = (req, res) => {
          if (req.url?.startsWith('/slow')) held.push(res);
          else res.writeHead(200, { 'content-type': 'application/json' }).end('{"fast":true}');
        };
        const client = clientFor(origin);
        const abort = new AbortController();
        const slow = client.request({ method: 'GET', path: '/slow', signal: abort.signal }).catch((error: unknown) => error);
        while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const reason = new Error('deadline passed');
        abort.abort(reason);
        expect(await slow).to.equal(reason);
        expect(await client.request({ method: 'GET', path: '/fast' })).to.deep.equal({ fast: true });
        for (const res of held) res.destroy();
      });
    });
  }
});
