/** What `rxkube dev` makes of a rendered deploy/ and of the operator's log lines, without a cluster. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { conversionRepoints, devPlan, forbiddenRequests, missingRule } from '../../lib/cli/dev-plan.js';

const object = (kind: string, name: string, rest: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind, metadata: { name, namespace: 'hello-system' }, ...rest }) as KubernetesObject;
const service = { name: 'hello-webhook', namespace: 'hello-system', path: '/validate-greetings', port: 443 };
const rendered = [
  object('Namespace', 'hello-system'),
  object('CustomResourceDefinition', 'greetings.example.com', {
    metadata: { name: 'greetings.example.com', annotations: { 'cert-manager.io/inject-ca-from': 'hello-system/hello-webhook' } },
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { ...service, path: '/convert' } } },
      },
    },
  }),
  object('ServiceAccount', 'hello-controller'),
  object('ClusterRole', 'hello-controller'),
  object('Deployment', 'hello-controller'),
  object('Service', 'hello-webhook'),
  object('Certificate', 'hello-webhook'),
  object('ValidatingWebhookConfiguration', 'hello-controller', {
    webhooks: [{ name: 'validate.greetings.example.com', clientConfig: { service } }],
  }),
];
const local = { url: 'https://127.0.0.1:9443', caPem: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n' };

describe('cli: rxkube dev, its plan', () => {
  it('applies what the operator needs from its cluster, not what would run it there, and runs as the one ServiceAccount', () => {
    const plan = devPlan(rendered, local);
    expect(plan.apply.map((o) => o.kind)).to.deep.equal([
      'Namespace',
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'ValidatingWebhookConfiguration',
    ]);
    expect(plan.skipped.map((o) => o.kind)).to.deep.equal(['Deployment', 'Service', 'Certificate']);
    expect(plan.serviceAccount).to.deep.equal({ namespace: 'hello-system', name: 'hello-controller' });
    expect(plan.hasWebhooks).to.equal(true);
    expect(
      devPlan(rendered.filter((o) => o.kind !== 'ValidatingWebhookConfiguration' && o.kind !== 'CustomResourceDefinition')).hasWebhooks,
    ).to.equal(false);
    expect(() => devPlan(rendered.filter((o) => o.kind !== 'ServiceAccount'))).to.throw(
      "deploy/ must define exactly one ServiceAccount, the operator's, to run it as (found none)",
    );
  });

  it('points every webhook at the local server, same path, with the development CA, and drops the cainjector annotation', () => {
    const plan = devPlan(rendered, local);
    const caBundle = Buffer.from(local.caPem).toString('base64');
    const validating = plan.apply.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as {
      webhooks: { clientConfig: unknown }[];
    };
    expect(validating.webhooks[0]?.clientConfig).to.deep.equal({ url: 'https://127.0.0.1:9443/validate-greetings', caBundle });
    const crd = plan.apply.find((o) => o.kind === 'CustomResourceDefinition') as unknown as {
      metadata: { annotations?: unknown };
      spec: { conversion: { webhook: { clientConfig: unknown } } };
    };
    expect(crd.spec.conversion.webhook.clientConfig).to.deep.equal({ url: 'https://127.0.0.1:9443/convert', caBundle });
    expect(crd.metadata.annotations).to.equal(undefined);
    expect(plan.webhookConfigurations.map((o) => o.metadata?.name)).to.deep.equal(['hello-controller']);
    // The input is left as it was.
    expect(
      (rendered[1] as unknown as { spec: { conversion: { webhook: { clientConfig: unknown } } } }).spec.conversion.webhook.clientConfig,
    ).to.deep.equal({ service: { ...service, path: '/convert' } });
    // An existing CRD is repointed in one merge patch that removes the Service.
    expect(conversionRepoints(plan.apply)).to.deep.equal([
      {
        name: 'greetings.example.com',
        patch: { spec: { conversion: { webhook: { clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle, service: null } } } } },
      },
    ]);
  });

  it("reads the API server's 403 from a JSON log line (escaped quotes), a subresource and a cluster-scoped one, as the rule that would allow it", () => {
    const line = JSON.stringify({
      level: 50,
      msg: 'run failed',
      err: 'configmaps "world-greeting" is forbidden: User "system:serviceaccount:hello-system:hello-controller" cannot patch resource "configmaps" in API group "" in the namespace "default"',
    });
    const [request] = forbiddenRequests(line);
    expect(request).to.deep.equal({
      seen: '403',
      user: 'system:serviceaccount:hello-system:hello-controller',
      verb: 'patch',
      apiGroup: '',
      resource: 'configmaps',
      namespace: 'default',
    });
    expect(missingRule(request)).to.equal('- apiGroups: [""]\n  resources: ["configmaps"]\n  verbs: ["patch"]');
    const [status] = forbiddenRequests(
      'greetings.example.com "world" is forbidden: User "u" cannot patch resource "greetings/status" in API group "example.com" in the namespace "default"',
    );
    expect(status).to.include({ resource: 'greetings', subresource: 'status', apiGroup: 'example.com' });
    expect(missingRule(status)).to.include('resources: ["greetings/status"]');
    const [cluster] = forbiddenRequests(
      'namespaces is forbidden: User "u" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    expect(cluster).to.deep.equal({ seen: '403', user: 'u', verb: 'list', apiGroup: '', resource: 'namespaces' });
    expect(forbiddenRequests('{"msg":"operator started"}')).to.deep.equal([]);
  });

  it("reads the operator's RBAC check at start (a warning per verb it may not use) as the same rule", () => {
    const warning = JSON.stringify({
      level: 40,
      rbac: {
        group: '',
        resource: 'configmaps',
        verb: 'patch',
        namespace: '',
        rule: { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] },
      },
      msg: "RBAC: cannot patch resource \"configmaps\" in API group \"\" at the cluster scope: add the rule { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] } to the operator's ClusterRole",
    });
    const [need] = forbiddenRequests(warning);
    expect(need).to.deep.equal({ seen: 'check', verb: 'patch', apiGroup: '', resource: 'configmaps' });
    expect(missingRule(need)).to.equal('- apiGroups: [""]\n  resources: ["configmaps"]\n  verbs: ["patch"]');
    const [status] = forbiddenRequests(
      JSON.stringify({
        rbac: { group: 'example.com', resource: 'greetings/status', verb: 'patch', namespace: 'shop' },
        msg: 'RBAC: cannot patch resource "greetings/status"',
      }),
    );
    expect(status).to.deep.equal({
      seen: 'check',
      verb: 'patch',
      apiGroup: 'example.com',
      resource: 'greetings',
      subresource: 'status',
      namespace: 'shop',
    });
  });
});
