import * as apiServer from '@rxkube/apiserver';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import type { KubernetesObject } from '@kubernetes/client-node';
import { connect } from 'node:net';
import { expect } from 'chai';
import { builtinResources, createKubeClient, openWatchStream, resourcePath, resolveDescriptor } from '../../lib/kube/index.js';
import { Mirror } from '../../lib/testing/explore/mirror.js';
import { fieldSelectorPredicate, FaultProxy, labelSelectorPredicate, type Incarnation } from '../../lib/testing/fault-proxy.js';
import { eventually } from '../../lib/testing/wait.js';

const configMaps = resolveDescriptor(builtinResources.configMap);
const secrets = resolveDescriptor(builtinResources.secret);

describe('testing: the fault proxy', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let mirror: Mirror;
  let proxy: FaultProxy;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    server = await startApiServer({});
    mirror = await Mirror.start(server.kubeConfig(), [configMaps, secrets]);
    proxy = new FaultProxy(server.url, { history: mirror, selectors: apiServer });
    await proxy.listen();
  });

  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    mirror.close();
    await proxy.close();
    await server.close();
  });

  /** Watches `resource` through the proxy as `incarnation`, recording the revisions it delivers (and, in `closed`, when it ends). */
  async function watchThrough(url: string, resource: typeof configMaps, closed: unknown[] = []): Promise<number[]> {
    const kubeConfig = server.kubeConfig();
    (kubeConfig.getCurrentCluster() as { server: string }).server = url;
    const seen: number[] = [];
    const from = (await createKubeClient(server.kubeConfig()).resource(resource).list({})).metadata?.resourceVersion;
    closers.push(
      await openWatchStream(
        kubeConfig,
        { path: resourcePath(resource), query: { resourceVersion: from }, inactivityTimeoutMs: 60_000 },
        (_type, object) => {
          seen.push(Number((object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion));
        },
        (error) => void closed.push(error ?? 'ended'),
      ),
    );
    return seen;
  }

  const delivered = (incarnation: Incarnation) =>
    eventually('every committed change at the proxy', () => mirror.caughtUp() && proxy.pendingDeliveries(incarnation) === 0);

  it('answers a request target that is no URL (GET /i1//[) alone, and serves on', async () => {
    const { url } = proxy.incarnation();
    const { host, port } = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), host.split(':')[0], () =>
        socket.end(`GET ${new URL(url).pathname}//[ HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).to.match(/^HTTP\/1\.1 400/);
    // Served on: the next request reaches the server through the proxy (its answer, whatever the credentials).
    const next = await fetch(`${url}/api/v1/namespaces/default/configmaps`);
    expect(await next.json()).to.have.property('kind');
  });

  /** Sends `raw` on a connection of its own and returns what came back before the connection ended (or `settleMs` passed). */
  function rawExchange(url: string, raw: string | Buffer, settleMs = 2_000): Promise<string> {
    const { hostname, port } = new URL(url);
    return new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(Number(port), hostname, () => socket.end(raw));
      const timer = setTimeout(() => (socket.destroy(), resolve(text)), settleMs);
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('close', () => (clearTimeout(timer), resolve(text)));
      socket.on('error', () => undefined);
    });
  }

  it('meets hostile clients one request at a time: a malformed request line, odd and oversized headers, a body past 3 MiB, a body cut short, a client that never reads; each fails alone and it serves on', async () => {
    const { url } = proxy.incarnation();
    const path = `${new URL(url).pathname}/api/v1/namespaces/default/configmaps`;
    expect(await rawExchange(url, 'GARBAGE\r\n\r\n')).to.match(/^HTTP\/1\.1 400/);
    expect(await rawExchange(url, `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Odd\x01: \u0000\r\n\r\n`)).to.match(/^HTTP\/1\.1 400/);
    expect(await rawExchange(url, `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`)).to.match(/^HTTP\/1\.1 431/);
    // Past the API server's own limit the proxy answers 413 itself, without holding the body or forwarding it.
    const huge = Buffer.concat([
      Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${4 * 2 ** 20}\r\n\r\n`),
      Buffer.alloc(4 * 2 ** 20, 0x20),
    ]);
    expect(await rawExchange(url, huge)).to.match(/^HTTP\/1\.1 413[\s\S]*3 MiB/);
    // Cut short: nothing is forwarded, and the client hears a 400 or nothing.
    expect(await rawExchange(url, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"kind":`, 300)).to.not.match(
      /^HTTP\/1\.1 [235]/,
    );
    // A client that asks for a large list and never reads it: its connection alone is stuck.
    const client = createKubeClient(server.kubeConfig()).resource<KubernetesObject & { data?: Record<string, string> }>(configMaps);
    for (let i = 0; i < 20; i++)
      await client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `big-${i}`, namespace: 'default' },
        data: { blob: 'x'.repeat(200_000) },
      });
    const { hostname, port } = new URL(url);
    const stuck = connect(Number(port), hostname, () => stuck.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
    stuck.pause();
    closers.push(() => stuck.destroy());
    const next = await fetch(`${url}/api/v1/namespaces/default/configmaps?limit=1`);
    expect(await next.json()).to.have.property('kind');
  });

  it("serves stale lists through the server's own selector grammar, and forwards what it would refuse", () => {
    const labels = labelSelectorPredicate(apiServer, 'app in (web,api),!canary,tier!=db');
    const cases: Record<string, string>[] = [
      { app: 'web' },
      { app: 'api', tier: 'front' },
      { app: 'web', canary: '' },
      { app: 'cache' },
      { app: 'web', tier: 'db' },
    ];
    expect(cases.map((l) => labels?.(l))).to.deep.equal([true, true, false, false, false]);
    expect(labelSelectorPredicate(apiServer, 'app in (web')).to.equal(undefined);
    const byName = fieldSelectorPredicate(apiServer, 'metadata.name=web,metadata.namespace!=kube-system');
    expect(byName?.({ metadata: { name: 'web', namespace: 'default' } })).to.equal(true);
    expect(byName?.({ metadata: { name: 'web', namespace: 'kube-system' } })).to.equal(false);
    expect(fieldSelectorPredicate(apiServer, 'status.phase=Running')).to.equal(undefined);
  });

  it("releases each watch's held events in revision order: an event arriving after the switch back to pass-through waits behind the held ones", async () => {
    const { incarnation, url } = proxy.incarnation();
    const cmSeen = await watchThrough(url, configMaps);
    const secretSeen = await watchThrough(url, secrets);
    await eventually('both watches open', () => incarnation.watches.size === 2);
    const admin = createKubeClient(server.kubeConfig());
    const write = async (resource: typeof configMaps, name: string) => {
      const made = await admin.resource(resource).create({ metadata: { name, namespace: 'default' } });
      mirror.expect(resource, 'POST', made);
    };

    proxy.watchMode = 'hold';
    await write(configMaps, 'a');
    await write(secrets, 's');
    await write(configMaps, 'b');
    await delivered(incarnation);
    expect(cmSeen, 'held while holding').to.deep.equal([]);

    // As a coalesce window closes: pass-through again, and a newer change lands before the release.
    proxy.watchMode = 'pass';
    await write(configMaps, 'c');
    await delivered(incarnation);
    await proxy.release(incarnation);
    await eventually(
      () => `three ConfigMap events and one Secret event (got ${cmSeen.length}, ${secretSeen.length})`,
      () => cmSeen.length === 3 && secretSeen.length === 1,
    );
    expect(cmSeen, 'configmap revisions as delivered').to.deep.equal([...cmSeen].sort((x, y) => x - y));
  });

  it('breaks the link as a test says: fail answers 503 without reaching the server; a cut answers nothing and loses what a watch sends; restore resets what lived through it', async () => {
    const { incarnation, url } = proxy.incarnation();
    const configMapsOf = `${url}/api/v1/namespaces/default/configmaps`;
    const post = (name: string) =>
      fetch(configMapsOf, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name } }),
      });
    const admin = createKubeClient(server.kubeConfig());
    const names = async () => (await admin.resource(configMaps).list({ namespace: 'default' })).items.map((o) => o.metadata?.name);

    proxy.link = 'fail';
    const failed = await post('failed');
    expect(failed.status).to.equal(503);
    expect(((await failed.json()) as { reason?: string }).reason).to.equal('ServiceUnavailable');
    expect(await names(), 'the failed create never reached the server').to.not.include('failed');
    proxy.restore();
    expect((await post('passed')).status).to.equal(201);

    const closed: unknown[] = [];
    const seen = await watchThrough(url, configMaps, closed);
    await eventually('the watch open', () => incarnation.watches.size === 1);
    proxy.link = 'cut';
    await admin.resource(configMaps).create({ metadata: { name: 'during-the-cut', namespace: 'default' } });
    const unanswered = await fetch(configMapsOf, { signal: AbortSignal.timeout(300) }).then(
      () => 'answered',
      (err: unknown) => (err as Error).name,
    );
    expect(unanswered, 'a request across the cut').to.equal('TimeoutError');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen, 'what the watch sent across the cut').to.deep.equal([]);
    expect(closed, 'the watch is still open').to.deep.equal([]);

    proxy.restore();
    await eventually('the watch that lived through the cut is reset', () => closed.length === 1);
    expect(seen, 'the lost event never arrives').to.deep.equal([]);
    expect((await fetch(configMapsOf)).status).to.equal(200);
  });
});
