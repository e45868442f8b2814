import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { eventually, startEnv, widgetConfig, type Env, type Widget } from './fixtures.js';

/** A TCP proxy to `target` that can black-hole every connection: nothing forwarded, nothing closed, new connections accepted and ignored. */
async function blackHoleProxy(target: URL): Promise<{ url: string; blackHole(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let holed = false;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (holed) return client.pause();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    const forward = (from: Socket, to: Socket) => from.on('data', (chunk: Buffer) => void (holed || to.write(chunk)));
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `${target.protocol}//127.0.0.1:${address.port}`,
    blackHole: () => (holed = true),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('operator: /readyz after a network partition (OB3, ES1)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('OB3, ES1: cut off from the API server by a partition that black-holes its connections, the operator turns unready within timeoutSeconds + 2 × deadMarginMs and says which watch failed; /healthz stays 200', async function () {
    this.timeout(30_000);
    const proxy = await blackHoleProxy(new URL(env.server.url));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(
      JSON.stringify({
        ...JSON.parse(env.kubeConfig.exportConfig()),
        clusters: env.kubeConfig.clusters.map((c) => ({ name: c.name, cluster: { server: proxy.url, 'insecure-skip-tls-verify': true } })),
      }),
    );
    const op = env.operator({ kubeConfig, health: { port: 0 } });
    const timing = { timeoutSeconds: 2, deadMarginMs: 1_000 };
    op.register<Widget>({ reconcile: () => UpdateControl.noUpdate() } satisfies Reconciler<Widget>, widgetConfig({ informer: timing }));
    await op.start();
    const readyz = async () => {
      const res = await fetch(`${op.healthUrl}/readyz`);
      return { status: res.status, body: await res.text() };
    };
    await eventually('ready', async () => (await readyz()).status === 200);
    // The watch is open and quiet; cut it off.
    const cutAt = Date.now();
    proxy.blackHole();
    const unready = await eventually(
      'unready',
      async () => {
        const answer = await readyz();
        return answer.status === 503 ? answer : undefined;
      },
      20_000,
    );
    const elapsed = Date.now() - cutAt;
    console.log(
      `      /readyz 503 after ${elapsed} ms (bound: ${timing.timeoutSeconds * 1000 + 2 * timing.deadMarginMs} ms after the watch last delivered)`,
    );
    expect(unready.body).to.match(/watch of .* is failing/);
    expect((await fetch(`${op.healthUrl}/healthz`)).status).to.equal(200);
    await op.stop();
    await proxy.close();
  });
});
