/**
 * End to end: the toolkit's webhook server registered on the embedded API server by the manifests
 * rxkube writes (caBundle inline), then kubectl: a denial with the webhook's message, a mutating
 * webhook's default, and a v1/v2 CRD served in both versions through the conversion webhook.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createLogger, manifestsToYaml, Operator, operatorManifests } from '../../lib/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { generateDevelopmentTls, startWebhookServer, type WebhookServer } from '../../lib/webhooks/index.js';
import * as module from './operator-module.js';

const run = promisify(execFile);
const logger = createLogger({ level: 'silent' });

function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://manifests.invalid' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u', namespace: 'default' }],
    currentContext: 'c',
  });
  return kc;
}

describe('webhooks: end to end on the embedded API server with kubectl', function () {
  this.timeout(120_000);
  let server: WebhookServer;
  let cluster: TestCluster;
  let dir: string;
  const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args], { cwd: dir });
  const kubectlFails = (...args: string[]) =>
    kubectl(...args).then(
      () => {
        throw new Error(`kubectl ${args.join(' ')} succeeded`);
      },
      (err: Error & { stderr?: string }) => err.stderr ?? String(err),
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-webhooks-e2e-'));
    // As cert-manager would issue it: valid for the Service's DNS name.
    const tls = await generateDevelopmentTls({ dnsNames: ['greeter-webhook.default.svc'], ipAddresses: ['127.0.0.1'] });
    server = await startWebhookServer({ webhooks: module.webhooks, tls, port: 0, host: '127.0.0.1', logger });
    cluster = await startTestCluster({ webhookServices: { 'default/greeter-webhook:443': `127.0.0.1:${server.port}` } });
    await cluster.server.writeKubeconfig(join(dir, 'kubeconfig'));
    const operator = new Operator({ ...module.operatorOptions, kubeConfig: offlineKubeConfig(), logger });
    module.register(operator);
    const { objects } = operatorManifests(operator, { name: 'greeter', namespace: 'default', crds: module.crds, webhookCaBundle: tls.ca });
    const wanted = objects.filter(
      (o) =>
        ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(o.kind ?? '') ||
        o.metadata?.name === 'greeter-webhook',
    );
    writeFileSync(join(dir, 'webhooks.yaml'), manifestsToYaml(wanted));
    await kubectl('apply', '-f', 'webhooks.yaml');
    await kubectl('wait', '--for=condition=Established', 'crd/greetings.example.com', '--timeout=20s');
  });
  after(async () => {
    await cluster?.close();
    await server?.close();
  });

  const greeting = (name: string, version: 'v1' | 'v2', spec: object): string =>
    manifestsToYaml([
      { apiVersion: `example.com/${version}`, kind: 'Greeting', metadata: { name, namespace: 'default' }, spec } as KubernetesObject,
    ]);

  it('an invalid custom resource is denied with the webhook message', async () => {
    writeFileSync(join(dir, 'bad.yaml'), greeting('bad', 'v2', { greeting: '', name: 'World' }));
    const stderr = await kubectlFails('apply', '-f', 'bad.yaml');
    expect(stderr).to.include('admission webhook "validate.greetings.example.com" denied the request: spec.greeting must not be empty');
  });

  it("a mutating webhook's defaults land", async () => {
    writeFileSync(join(dir, 'good.yaml'), greeting('good', 'v2', { greeting: 'Hello', name: 'World' }));
    await kubectl('apply', '-f', 'good.yaml');
    const stored = JSON.parse((await kubectl('get', 'greetings.v2.example.com', 'good', '-o', 'json')).stdout) as {
      spec: Record<string, unknown>;
    };
    expect(stored.spec).to.deep.equal({ greeting: 'Hello', name: 'World', replicas: 1 });
  });

  it('the v1/v2 CRD with a conversion webhook serves both versions and round-trips', async () => {
    writeFileSync(join(dir, 'v1.yaml'), greeting('old', 'v1', { message: 'Hi, There' }));
    await kubectl('apply', '-f', 'v1.yaml');
    const asV2 = JSON.parse((await kubectl('get', 'greetings.v2.example.com', 'old', '-o', 'json')).stdout) as {
      apiVersion: string;
      spec: Record<string, unknown>;
    };
    expect(asV2.apiVersion).to.equal('example.com/v2');
    expect(asV2.spec).to.include({ greeting: 'Hi', name: 'There' });
    const asV1 = JSON.parse((await kubectl('get', 'greetings.v1.example.com', 'old', '-o', 'json')).stdout) as {
      apiVersion: string;
      spec: Record<string, unknown>;
    };
    expect(asV1.apiVersion).to.equal('example.com/v1');
    expect(asV1.spec).to.deep.equal({ message: 'Hi, There' });
    const list = JSON.parse((await kubectl('get', 'greetings.v1.example.com', '-o', 'json')).stdout) as {
      items: { metadata: { name: string }; spec: Record<string, unknown> }[];
    };
    expect(list.items.find((i) => i.metadata.name === 'good')?.spec).to.deep.equal({ message: 'Hello, World' });
  });
});
