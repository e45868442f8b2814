import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createKubeClient, KubeApiError, openWatchStream } from '../../lib/kube/index.js';
import { eventually } from '../../lib/testing/index.js';

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** Collects a watch's events and waits for its single close. */
function recorder() {
  const events: Array<[string, unknown]> = [];
  const closes: unknown[] = [];
  let resolveClosed: (error: unknown) => void = () => undefined;
  const closed = new Promise<unknown>((resolve) => (resolveClosed = resolve));
  return {
    events,
    closes,
    closed,
    onEvent: (type: string, object: unknown) => events.push([type, object]),
    onClose: (error?: unknown) => {
      closes.push(error);
      resolveClosed(error);
    },
  };
}

describe('kube/watch-stream: watches read straight from the socket', function () {
  this.timeout(20_000);
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
  });
  after(async () => {
    await server.close();
  });

  it('delivers every event in order', async () => {
    const kc = server.kubeConfig();
    const configmaps = createKubeClient(kc).resource({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true });
    const list = await configmaps.list({ namespace: 'default' });
    const r = recorder();
    const close = await openWatchStream(
      kc,
      {
        path: '/api/v1/namespaces/default/configmaps',
        query: { resourceVersion: list.metadata?.resourceVersion, timeoutSeconds: 60 },
        inactivityTimeoutMs: 60_000,
      },
      r.onEvent,
      r.onClose,
    );
    for (let i = 0; i < 50; i++)
      await configmaps.create({ metadata: { name: `w${i}`, namespace: 'default' }, data: { big: 'x'.repeat(i * 100) } } as never);
    await eventually(
      () => `50 events (have ${r.events.length})`,
      () => r.events.length >= 50,
      15_000,
    );
    close();
    expect(r.events.map(([type, o]) => `${type} ${(o as { metadata: { name: string } }).metadata.name}`)).to.deep.equal(
      Array.from({ length: 50 }, (_, i) => `ADDED w${i}`),
    );
  });

  it('closes once without an error when the server ends the stream', async () => {
    const r = recorder();
    await openWatchStream(
      server.kubeConfig(),
      { path: '/api/v1/namespaces/default/configmaps', query: { timeoutSeconds: 1 }, inactivityTimeoutMs: 5_000 },
      r.onEvent,
      r.onClose,
    );
    expect(await r.closed).to.equal(undefined);
    expect(r.closes).to.have.length(1);
  });

  it('passes on the ERROR event of a watch from compacted history (410 in the stream, as the real server sends it)', async () => {
    const kc = server.kubeConfig();
    const configmaps = createKubeClient(kc).resource({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true });
    const old = (await configmaps.create({ metadata: { name: 'old', namespace: 'default' } })).metadata?.resourceVersion;
    await configmaps.create({ metadata: { name: 'newer', namespace: 'default' } });
    server.faults.compact();
    const r = recorder();
    await openWatchStream(
      kc,
      { path: '/api/v1/namespaces/default/configmaps', query: { resourceVersion: old }, inactivityTimeoutMs: 5_000 },
      r.onEvent,
      r.onClose,
    );
    expect(await r.closed).to.equal(undefined);
    expect(r.events).to.have.length(1);
    expect(r.events[0][0]).to.equal('ERROR');
    expect(r.events[0][1]).to.include({ kind: 'Status', code: 410 });
  });

  it('ends with a KubeApiError carrying the code and the Status when the server answers the watch with an error', async () => {
    const r = recorder();
    await openWatchStream(
      server.kubeConfig(),
      { path: '/apis/nothing.example.com/v1/widgets', query: {}, inactivityTimeoutMs: 5_000 },
      r.onEvent,
      r.onClose,
    );
    const error = (await r.closed) as KubeApiError;
    expect(error).to.be.instanceOf(KubeApiError);
    expect(error.code).to.equal(404);
    expect(error.status?.kind).to.equal('Status');
  });

  it('closes once, without an error, when the caller closes it', async () => {
    const r = recorder();
    const close = await openWatchStream(
      server.kubeConfig(),
      { path: '/api/v1/namespaces/default/configmaps', query: { timeoutSeconds: 60 }, inactivityTimeoutMs: 5_000 },
      r.onEvent,
      r.onClose,
    );
    close();
    close();
    expect(await r.closed).to.equal(undefined);
    expect(r.closes).to.have.length(1);
  });

  describe('against a server that misbehaves', () => {
    let raw: Server;
    let behaviour: (res: import('node:http').ServerResponse) => void = () => undefined;
    before(async () => {
      raw = createServer((_req, res) => behaviour(res));
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => raw.close(() => resolve())));
    const url = () => `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;

    it('ends with an error naming the line by its size (not its text: it may hold a Secret) when the server sends one that is not JSON, after the good ones before it', async () => {
      behaviour = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADD');
        res.write('ED","object":{"metadata":{"name":"b"}}}\nnot json\n{"type":"ADDED","object":{}}\n');
      };
      const r = recorder();
      await openWatchStream(
        kubeConfigFor(url()),
        { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 5_000 },
        r.onEvent,
        r.onClose,
      );
      const error = (await r.closed) as Error;
      expect(error.message).to.contain('a line of 8 bytes that is not JSON').and.not.to.contain('not json');
      expect(r.events.map(([, o]) => (o as { metadata: { name: string } }).metadata.name)).to.deep.equal(['a', 'b']);
    });

    it('ends with an error when a line is JSON but no event (null, a number, an array), and when the caller cannot take an event', async () => {
      for (const line of ['null', '1', '[]', '"ADDED"']) {
        behaviour = (res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`${line}\n`);
        };
        const r = recorder();
        await openWatchStream(
          kubeConfigFor(url()),
          { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 5_000 },
          r.onEvent,
          r.onClose,
        );
        expect(((await r.closed) as Error).message, line).to.contain('a line that is no watch event (JSON, but not an object)');
      }
      behaviour = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
      };
      const r = recorder();
      const refusing = () => {
        throw new TypeError('cannot take it');
      };
      await openWatchStream(
        kubeConfigFor(url()),
        { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 5_000 },
        refusing,
        r.onClose,
      );
      expect(((await r.closed) as Error).message).to.equal('cannot take it');
    });

    it('ends with a LineTooLongError when a line passes the limit without a newline', async () => {
      behaviour = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"type":"ADDED","object":{"metadata":{"name":"${'a'.repeat(4096)}`);
      };
      const r = recorder();
      await openWatchStream(
        kubeConfigFor(url()),
        { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 5_000 },
        r.onEvent,
        r.onClose,
        1024,
      );
      const error = (await r.closed) as Error;
      expect(error.name).to.equal('LineTooLongError');
      expect(error.message).to.match(/watch of \/api\/v1\/configmaps: a line of more than 1024 bytes/);
    });

    it('gives up on a connection that stays silent for the inactivity timeout', async () => {
      behaviour = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('\n');
      };
      const r = recorder();
      await openWatchStream(
        kubeConfigFor(url()),
        { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 300 },
        r.onEvent,
        r.onClose,
      );
      const error = (await r.closed) as { code?: string };
      expect(error?.code).to.equal('UND_ERR_BODY_TIMEOUT');
    });

    it('reports a non-JSON error page with its HTTP status', async () => {
      behaviour = (res) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad gateway');
      };
      const r = recorder();
      await openWatchStream(
        kubeConfigFor(url()),
        { path: '/api/v1/configmaps', query: {}, inactivityTimeoutMs: 5_000 },
        r.onEvent,
        r.onClose,
      );
      const error = (await r.closed) as KubeApiError;
      expect(error).to.be.instanceOf(KubeApiError);
      expect(error.code).to.equal(502);
      expect(error.message).to.contain('bad gateway');
    });
  });
});
