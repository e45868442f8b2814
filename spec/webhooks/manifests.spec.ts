/**
 * The webhook manifests: what operatorManifests and `rxkube manifests` write for an operator with
 * webhooks, and all but cert-manager's objects applied with kubectl to the embedded server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, type KubernetesObject, type V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { createLogger, manifestsToYaml, Operator, operatorManifests } from '../../lib/index.js';
import { main as manifestsCommand } from '../../lib/cli/manifests.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { generateDevelopmentTls, WEBHOOK_CERT_DIR } from '../../lib/webhooks/index.js';
import * as module from './operator-module.js';

const run = promisify(execFile);

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

function manifests(caBundle?: string) {
  const operator = new Operator({ ...module.operatorOptions, kubeConfig: offlineKubeConfig(), logger: createLogger({ level: 'silent' }) });
  module.register(operator);
  return operatorManifests(operator, {
    name: 'greeter',
    namespace: 'operators',
    crds: module.crds,
    ...(caBundle === undefined ? {} : { webhookCaBundle: caBundle }),
  });
}

type Webhooks = KubernetesObject & {
  webhooks: {
    name: string;
    clientConfig: { service: unknown; caBundle?: string };
    rules: unknown[];
    failurePolicy: string;
    sideEffects: string;
    admissionReviewVersions: string[];
  }[];
};
const byKind = (objects: readonly KubernetesObject[], kind: string) => objects.filter((o) => o.kind === kind);

describe('webhooks: manifests', function () {
  this.timeout(120_000);

  it('with cert-manager: the webhook configurations with the cainjector annotation, Service, Issuer, Certificate and the CRD conversion stanza', () => {
    const { objects } = manifests();
    const [validating] = byKind(objects, 'ValidatingWebhookConfiguration') as Webhooks[];
    expect(validating?.metadata?.annotations).to.deep.equal({ 'cert-manager.io/inject-ca-from': 'operators/greeter-webhook' });
    expect(validating?.webhooks).to.deep.equal([
      {
        name: 'validate.greetings.example.com',
        admissionReviewVersions: ['v1'],
        clientConfig: {
          service: { name: 'greeter-webhook', namespace: 'operators', path: '/validate/validate.greetings.example.com', port: 443 },
        },
        rules: [
          {
            apiGroups: ['example.com'],
            apiVersions: ['v2'],
            resources: ['greetings'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: 10,
      },
    ]);
    const [mutating] = byKind(objects, 'MutatingWebhookConfiguration') as Webhooks[];
    expect(mutating?.webhooks.map((w) => w.name)).to.deep.equal(['default.greetings.example.com']);
    const certificate = byKind(objects, 'Certificate')[0] as KubernetesObject & {
      spec: { secretName: string; dnsNames: string[]; issuerRef: { name: string } };
    };
    expect(certificate.spec).to.deep.equal({
      secretName: 'greeter-webhook-tls',
      dnsNames: ['greeter-webhook.operators.svc', 'greeter-webhook.operators.svc.cluster.local'],
      issuerRef: { kind: 'Issuer', name: 'greeter-selfsigned' },
    });
    expect(byKind(objects, 'Issuer')[0]?.metadata?.name).to.equal('greeter-selfsigned');
    const crd = byKind(objects, 'CustomResourceDefinition')[0] as KubernetesObject & { spec: { conversion: unknown } };
    expect(crd.spec.conversion).to.deep.equal({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { service: { name: 'greeter-webhook', namespace: 'operators', path: '/convert/greetings.example.com', port: 443 } },
      },
    });
    expect(crd.metadata?.annotations).to.deep.equal({ 'cert-manager.io/inject-ca-from': 'operators/greeter-webhook' });
    const pod = (byKind(objects, 'Deployment')[0] as V1Deployment).spec?.template.spec;
    expect(pod?.containers[0]?.ports).to.deep.include({ name: 'webhooks', containerPort: 9443, protocol: 'TCP' });
    expect(pod?.containers[0]?.volumeMounts).to.deep.include({ name: 'webhook-certs', mountPath: WEBHOOK_CERT_DIR, readOnly: true });
    expect(pod?.volumes).to.deep.include({ name: 'webhook-certs', secret: { secretName: 'greeter-webhook-tls' } });
  });

  it('with a caBundle: written inline in every clientConfig, and no cert-manager objects', async () => {
    const { ca } = await generateDevelopmentTls();
    const { objects } = manifests(ca);
    expect(byKind(objects, 'Certificate')).to.deep.equal([]);
    expect(byKind(objects, 'Issuer')).to.deep.equal([]);
    const base64 = Buffer.from(ca).toString('base64');
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const [config] = byKind(objects, kind) as Webhooks[];
      expect(config?.metadata?.annotations).to.equal(undefined);
      expect(config?.webhooks[0]?.clientConfig.caBundle).to.equal(base64);
    }
    const crd = byKind(objects, 'CustomResourceDefinition')[0] as KubernetesObject & {
      spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } };
    };
    expect(crd.spec.conversion.webhook.clientConfig.caBundle).to.equal(base64);
  });

  describe('rxkube manifests and kubectl on the embedded server', () => {
    let cluster: TestCluster;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rxkube-webhook-manifests-'));
      cluster = await startTestCluster();
      await cluster.server.writeKubeconfig(join(dir, 'kubeconfig'));
    });
    after(() => cluster?.close());
    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args], { cwd: dir });

    it('`rxkube manifests --webhook-ca-bundle` writes them; kubectl applies the CRD with its conversion webhook, the webhook Service and the webhook configurations', async () => {
      const { ca } = await generateDevelopmentTls();
      writeFileSync(join(dir, 'ca.crt'), ca);
      const out = join(dir, 'all.yaml');
      const code = await manifestsCommand([
        '--module',
        new URL('./operator-module.ts', import.meta.url).pathname,
        '--name',
        'greeter',
        '--namespace',
        'default',
        '--webhook-ca-bundle',
        join(dir, 'ca.crt'),
        '--out',
        out,
      ]);
      expect(code).to.equal(0);
      const objects = parseAllDocuments((await import('node:fs')).readFileSync(out, 'utf8')).map((d) => d.toJS() as KubernetesObject);
      expect(objects.map((o) => o.kind)).to.include.members([
        'ValidatingWebhookConfiguration',
        'MutatingWebhookConfiguration',
        'Service',
        'CustomResourceDefinition',
      ]);
      // cert-manager's kinds are not served here (the caBundle is inline): everything else of the webhooks is applied.
      const served = objects.filter(
        (o) =>
          ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(o.kind ?? '') ||
          (o.kind === 'Service' && o.metadata?.name === 'greeter-webhook'),
      );
      writeFileSync(join(dir, 'served.yaml'), manifestsToYaml(served));
      await kubectl('apply', '-f', 'served.yaml');
      await kubectl('wait', '--for=condition=Established', 'crd/greetings.example.com', '--timeout=20s');
      const crd = JSON.parse((await kubectl('get', 'crd', 'greetings.example.com', '-o', 'json')).stdout) as {
        spec: {
          conversion: { strategy: string; webhook: { clientConfig: { service: { name: string; path: string }; caBundle: string } } };
        };
      };
      expect(crd.spec.conversion.strategy).to.equal('Webhook');
      expect(crd.spec.conversion.webhook.clientConfig.service).to.include({
        name: 'greeter-webhook',
        path: '/convert/greetings.example.com',
      });
      expect(crd.spec.conversion.webhook.clientConfig.caBundle).to.equal(Buffer.from(ca).toString('base64'));
      const service = JSON.parse((await kubectl('get', 'service', 'greeter-webhook', '-o', 'json')).stdout) as {
        spec: { ports: { port: number; targetPort: string }[] };
      };
      expect(service.spec.ports[0]).to.include({ port: 443, targetPort: 'webhooks' });
      const validating = JSON.parse((await kubectl('get', 'validatingwebhookconfiguration', 'greeter', '-o', 'json')).stdout) as {
        webhooks: { name: string; clientConfig: { caBundle: string } }[];
      };
      expect(validating.webhooks.map((w) => w.name)).to.deep.equal(['validate.greetings.example.com']);
      expect(validating.webhooks[0]?.clientConfig.caBundle).to.equal(Buffer.from(ca).toString('base64'));
      await kubectl('get', 'mutatingwebhookconfiguration', 'greeter');
    });
  });
});
