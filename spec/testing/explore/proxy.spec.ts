import * as apiServer from '@rxkube/apiserver';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { connect } from 'node:net';
import { expect } from 'chai';
import { builtinResources, createKubeClient, openWatchStream, resourcePath, resolveDescriptor } from '../../../lib/kube/index.js';
import { fieldSelectorPredicate, labelSelectorPredicate, Mirror } from '../../../lib/testing/explore/mirror.js';
import { FaultProxy, type Incarnation } from '../../../lib/testing/explore/proxy.js';
import { eventually } from '../../../lib/testing/wait.js';

const configMaps = resolveDescriptor(builtinResources.configMap);
const secrets = resolveDescriptor(builtinResources.secret);

describe('testing: the explorer fault proxy', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let mirror: Mirror;
  let proxy: FaultProxy;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    server = await startApiServer({});
    mirror = await Mirror.start(server.kubeConfig(), [configMaps, secrets]);
    proxy = new FaultProxy(server.url, mirror, [], { beforeWrite: () => undefined, afterWrite: async () => undefined }, apiServer);
    await proxy.listen();
  });

  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    mirror.close();
    await proxy.close();
    await server.close();
  });

  /** Watches `resource` through the proxy as `incarnation`, recording the revisions it delivers. */
  async function watchThrough(url: string, resource: typeof configMaps): Promise<number[]> {
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
        () => undefined,
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
});
