import { expect } from 'chai';
import { Registry } from 'prom-client';
import { BehaviorSubject } from 'rxjs';
import { createMetrics, startHealthServer, type HealthCheckResult, type HealthServer } from '../../lib/observe/index.js';
import { checkFromObservable } from '../../lib/observe/health.js';
import { exchange } from '../fuzz/listener-fuzz.js';

describe('observe/health server', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('OB3: /healthz answers while the process is alive, whatever readiness says', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', checks: { caches: () => ({ ok: false, reason: 'not synced' }) } });
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.contain('healthz check passed');
  });

  it('OB3: /readyz is 503 naming every failing check until all pass', async () => {
    let synced = false;
    const watch = new BehaviorSubject<HealthCheckResult>({ ok: false, reason: 'watch configmaps silent for 95 s' });
    const watchCheck = checkFromObservable(watch);
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checks: {
        'caches-synced': () => (synced ? { ok: true } : { ok: false, reason: 'primary cache not synced' }),
        'watches-healthy': watchCheck.check,
        'async-check': async () => ({ ok: true }),
      },
    });

    let res = await fetch(`${server.url}/readyz`);
    let body = await res.text();
    expect(res.status).to.equal(503);
    expect(body).to.contain('[-]caches-synced failed: primary cache not synced');
    expect(body).to.contain('[-]watches-healthy failed: watch configmaps silent for 95 s');
    expect(body).to.contain('[+]async-check ok');

    synced = true;
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).to.equal(503);
    expect(await res.text()).to.not.contain('[-]caches-synced');

    watch.next({ ok: true });
    res = await fetch(`${server.url}/readyz`);
    body = await res.text();
    expect(res.status).to.equal(200);
    expect(body).to.contain('readyz check passed');
    watchCheck.unsubscribe();
  });

  it('OB3: a check that throws or hangs fails readiness instead of hanging the probe', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checkTimeoutMs: 50,
      checks: {
        throws: () => {
          throw new Error('informer crashed');
        },
        hangs: () => new Promise<HealthCheckResult>(() => undefined),
      },
    });
    const res = await fetch(`${server.url}/readyz`);
    const body = await res.text();
    expect(res.status).to.equal(503);
    expect(body).to.contain('[-]throws failed: check threw: informer crashed');
    expect(body).to.contain('[-]hangs failed: no answer within 50 ms');
  });

  it('OB3: /metrics serves the registry in Prometheus text format', async () => {
    const registry = new Registry();
    createMetrics(registry).setLeader(true);
    server = await startHealthServer({ port: 0, host: '127.0.0.1', registry });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/plain');
    expect(await res.text()).to.match(/^rxkube_leader 1$/m);
    expect((await fetch(`${server.url}/nope`)).status).to.equal(404);
    expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).to.equal(405);
  });

  it('OB3: binds the configured address and frees the port on close', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1' });
    expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { port } = server;
    await server.close();
    server = undefined;
    const err = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Error);
    server = await startHealthServer({ port, host: '127.0.0.1' });
    expect(server.port).to.equal(port);
  });

  it('a request target that is no URL (GET //[ HTTP/1.1) is 400, not 500, and the server serves on', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1' });
    for (const line of ['GET //[ HTTP/1.1', 'GET http://[ HTTP/1.1']) {
      const answers = await exchange(
        { host: '127.0.0.1', port: server.port, tls: false },
        { writes: [Buffer.from(`${line}\r\nHost: localhost\r\n\r\n`)] },
      );
      expect(
        answers.map((a) => a.status),
        line,
      ).to.deep.equal([400]);
    }
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });

  it('rejects bad options with the option named', async () => {
    for (const [options, message] of [
      [{ port: -1 }, /port must be an integer/],
      [{ port: 0, checks: { x: 'yes' } }, /checks\.x must be a function/],
      [{ port: 0, checkTimeoutMs: 0 }, /checkTimeoutMs must be > 0/],
    ] as const) {
      const err = await startHealthServer(options as never).then(
        (s) => s.close(),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(Error).with.property('message').that.matches(message);
    }
  });
});
