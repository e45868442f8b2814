import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { classifyError, kubeClientOf, openWatchStream, readKubeConfig, watchTargetOf, type KubeClient } from '../../lib/kube/index.js';
import { eventually } from '../../lib/testing/index.js';

const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;

describe('kube/kubeClientOf: a kubeconfig read as data, client-node loaded only when needed', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  before(async () => {
    // Off loopback: HTTPS with a CA of its own, and a token required.
    server = await startApiServer({ host: '0.0.0.0', token: 'the-token' });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-direct-'));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const clientFor = async (name: string, token: string): Promise<KubeClient> => {
    const file = join(dir, name);
    await server.writeKubeconfig(file, { token });
    return kubeClientOf(readKubeConfig({ kubeconfigPath: file }));
  };

  it("requests and watches go to the server with the kubeconfig's CA and token; a wrong token is unauthorized", async () => {
    const client = await clientFor('good', 'the-token');
    expect(watchTargetOf(client)).to.have.property('pool'); // straight, not through client-node
    const configMaps = client.resource<KubernetesObject & { data?: Record<string, string> }>(CONFIGMAPS);
    const { resourceVersion } = await configMaps.listAll({ namespace: 'default' });
    const events: string[] = [];
    const close = await openWatchStream(
      watchTargetOf(client),
      { path: '/api/v1/namespaces/default/configmaps', query: { resourceVersion }, inactivityTimeoutMs: 10_000 },
      (type, object) => events.push(`${type} ${(object as KubernetesObject).metadata?.name}`),
      () => undefined,
    );
    await configMaps.create({ metadata: { name: 'direct', namespace: 'default' }, data: { a: '1' } });
    await configMaps.mergePatch({ name: 'direct', namespace: 'default' }, { data: { a: '2' } });
    await eventually('both events', () => events.length === 2);
    expect(events).to.deep.equal(['ADDED direct', 'MODIFIED direct']);
    close();
    expect((await configMaps.get({ name: 'direct', namespace: 'default' })).data).to.deep.equal({ a: '2' });

    const wrong = await clientFor('wrong', 'not-the-token');
    const error = await wrong
      .resource(CONFIGMAPS)
      .list({ namespace: 'default' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(classifyError(error)).to.equal('unauthorized');
  });

  it('the KubeConfig of such a client is made when first read, from the same kubeconfig', async () => {
    const client = await clientFor('lazy', 'the-token');
    const kubeConfig = client.kubeConfig;
    expect(kubeConfig.getCurrentUser()?.token).to.equal('the-token');
    expect(client.kubeConfig).to.equal(kubeConfig);
  });

  it('a context with an exec plugin or a proxy goes through client-node, as a KubeConfig does', async () => {
    const file = join(dir, 'exec');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: x',
        'clusters: [{ name: c, cluster: { server: "https://example.invalid" } }]',
        'users: [{ name: u, user: { exec: { apiVersion: client.authentication.k8s.io/v1, command: get-token } } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      ].join('\n'),
    );
    const client = kubeClientOf(readKubeConfig({ kubeconfigPath: file }));
    expect(watchTargetOf(client)).to.not.have.property('pool');
    expect(watchTargetOf(client)).to.equal(client.kubeConfig);
  });

  it("an Operator without a KubeConfig of its own reconciles from KUBECONFIG without loading client-node's generated API", async () => {
    const file = join(dir, 'operator');
    await server.writeKubeconfig(file, { token: 'the-token' });
    const admin = kubeClientOf(readKubeConfig({ kubeconfigPath: file }));
    await admin.resource(CONFIGMAPS).create({ metadata: { name: 'watched', namespace: 'kube-public' } });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures/operator-from-kubeconfig.ts'), 'kube-public'],
      {
        env: { ...process.env, KUBECONFIG: file, NODE_OPTIONS: '' },
        timeout: 50_000,
      },
    );
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as { runs: string[]; generated: string[]; context: string };
    expect(report.runs).to.include('watched');
    expect(report.generated).to.deep.equal([]);
    expect(report.context).to.be.a('string').and.not.equal('');
  });
});
