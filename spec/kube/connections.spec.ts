import { CoordinationV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { expect } from 'chai';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { clientNodeInternals } from '../../lib/kube/connections.js';
import { shareConnections } from '../../lib/kube/index.js';
import { createRequestFn } from '../../lib/kube/request.js';
import { generateDevelopmentTls, type DevelopmentTls } from '../../lib/webhooks/index.js';

/** Sockets this process holds open (both ends of a loopback connection count, the server is in-process). */
function openSockets(): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;
}

describe('kube/connections: one connection pool per cluster identity', function () {
  this.timeout(30000);

  it('client-node 2 still has the internals shareConnections replaces, and plans a TLS agent for insecure-skip-tls-verify', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const internals = clientNodeInternals(kc);
    const plan = internals.createDispatcherOptions(kc.getCurrentCluster(), { rejectUnauthorized: false });
    expect(plan).to.deep.include({ type: 'agent' });
    expect(plan).to.have.nested.property('connect.rejectUnauthorized', false);
  });

  describe('against the embedded server', () => {
    let server: ApiServer;
    beforeEach(async () => {
      server = await startApiServer();
    });
    afterEach(async () => {
      await server.close();
    });

    it('a few hundred requests, writes, lease calls and 3 watches keep sockets within the pool size plus the watches', async () => {
      const connections = 4;
      const watches = 3;
      const kc = shareConnections(server.kubeConfig(), { connections });
      const request = createRequestFn(kc);
      const leases = kc.makeApiClient(CoordinationV1Api);
      const before = openSockets();
      const stops: AbortController[] = [];
      for (let i = 0; i < watches; i++) {
        stops.push(
          await new Watch(kc).watch(
            '/api/v1/namespaces/default/configmaps',
            {},
            () => undefined,
            () => undefined,
          ),
        );
      }
      let peak = 0;
      for (let batch = 0; batch < 15; batch++) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => {
            const n = batch * 20 + i;
            if (n % 10 === 0) {
              return leases.createNamespacedLease({
                namespace: 'default',
                body: { metadata: { name: `lease-${n}` }, spec: { holderIdentity: 'me' } },
              });
            }
            return n % 2 === 0
              ? request({
                  method: 'POST',
                  path: '/api/v1/namespaces/default/configmaps',
                  body: { metadata: { name: `cm-${n}` }, data: { n: String(n) } },
                })
              : request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps', query: { limit: 5 } });
          }),
        );
        peak = Math.max(peak, openSockets() - before);
      }
      for (const stop of stops) stop.abort();
      // Both ends of each connection live in this process; a keep-alive connection being replaced
      // shows its old and new sockets for a moment (seen once under load), hence one spare pair.
      expect(peak, `peak open sockets over 300 requests (client and server ends)`).to.be.at.most(2 * (connections + watches + 1));
    });
  });

  describe('TLS settings are honoured per identity', () => {
    let dir: string;
    let server: ApiServer;
    let other: DevelopmentTls;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rxkube-tls-'));
      // The toolkit's one self-signed CA helper: a CA and a serving certificate for 127.0.0.1.
      const tls = await generateDevelopmentTls({ dnsNames: [], ipAddresses: ['127.0.0.1'], days: 1 });
      other = await generateDevelopmentTls({ dnsNames: [], ipAddresses: ['127.0.0.1'], days: 1 });
      server = await startApiServer({ tls });
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('the right CA is served over the shared pool, a wrong CA is refused even after the right one pooled connections', async () => {
      const good = createRequestFn(server.kubeConfig());
      await good({ method: 'GET', path: '/api/v1/namespaces' });
      await good({ method: 'GET', path: '/api/v1/namespaces' });

      const wrong = server.kubeConfig();
      const cluster = wrong.getCurrentCluster();
      if (!cluster) throw new Error('no cluster');
      wrong.clusters = [{ ...cluster, caData: Buffer.from(other.ca).toString('base64') }];
      const refused = await createRequestFn(wrong)({ method: 'GET', path: '/api/v1/namespaces' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, 'a request with a CA that did not sign the server certificate').to.be.instanceOf(Error);

      const insecure = server.kubeConfig();
      insecure.clusters = [{ ...cluster, caData: undefined, skipTLSVerify: true }];
      expect(await createRequestFn(insecure)({ method: 'GET', path: '/api/v1/namespaces' })).to.have.property('kind', 'NamespaceList');
    });

    it('a CA file that changes on disk is read anew: the same cluster object gets the pool of the new CA', async () => {
      const kc = server.kubeConfig();
      const cluster = kc.getCurrentCluster();
      if (!cluster?.caData) throw new Error('no cluster CA');
      const caFile = join(dir, 'rotating-ca.crt');
      await writeFile(caFile, Buffer.from(cluster.caData, 'base64'));
      kc.clusters = [{ ...cluster, caData: undefined, caFile }];
      const request = createRequestFn(kc);
      const get = () =>
        request({ method: 'GET', path: '/api/v1/namespaces' }).then(
          () => 'served',
          () => 'refused',
        );
      expect(await get()).to.equal('served');
      expect(await get()).to.equal('served');
      await writeFile(caFile, other.ca);
      expect(await get(), 'with a CA that did not sign the server certificate').to.equal('refused');
      await writeFile(caFile, Buffer.from(cluster.caData, 'base64'));
      expect(await get()).to.equal('served');
    });
  });
});
