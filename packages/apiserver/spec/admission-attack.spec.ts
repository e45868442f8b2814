/**
 * Admission read as an attacker would, on the embedded server over real HTTPS: a client looking
 * for a path that reaches a write without the webhooks that guard it (a subresource, a DELETE of
 * the collection across namespaces), or that deletes an object admission never saw.
 * kube-apiserver is the reference: it serves DELETE of a collection only under a namespace, admits
 * a scale as an autoscaling/v1 Scale with subresource "scale", and its store runs a delete's
 * admission against the object it deletes.
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { allow, deny, patch, useAdmissionFixture, type Handler, type WebhookServer } from './webhook-server.js';
import { failure, kubectlAvailable, kubectlSession, raw, type Clients } from './helpers.js';

describe('admission under attack: other paths to the same write', function () {
  this.timeout(60_000);
  const fixture = useAdmissionFixture();
  const { created } = fixture;
  let hooks: WebhookServer;
  let c: Clients;
  let admission: k8s.AdmissionregistrationV1Api;
  let caBundle: string;
  before(() => ({ hooks, c, admission, caBundle } = fixture));

  const deleteRules: k8s.V1RuleWithOperations[] = [
    { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['DELETE'] },
  ];
  const protect: Handler = (r) => (r.request.oldObject?.metadata?.labels?.protect === 'yes' ? deny(r, 'protected', 403) : allow(r));

  async function validating(name: string, path: string, handler: Handler, more: Partial<k8s.V1ValidatingWebhook> = {}): Promise<void> {
    hooks.handlers.set(path, handler);
    const webhook: k8s.V1ValidatingWebhook = {
      name: `${name}.example.com`,
      clientConfig: { url: hooks.url(path), caBundle },
      rules: deleteRules,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      ...more,
    };
    await admission.createValidatingWebhookConfiguration({ body: { metadata: { name }, webhooks: [webhook] } });
    created.push({ kind: 'validating', name });
  }

  async function mutating(name: string, path: string, handler: Handler, rules: k8s.V1RuleWithOperations[]): Promise<void> {
    hooks.handlers.set(path, handler);
    const webhook: k8s.V1MutatingWebhook = {
      name: `${name}.example.com`,
      clientConfig: { url: hooks.url(path), caBundle },
      rules,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
    };
    await admission.createMutatingWebhookConfiguration({ body: { metadata: { name }, webhooks: [webhook] } });
    created.push({ kind: 'mutating', name });
  }

  it('a DELETE or POST of a namespaced collection across all namespaces is 405, as on the real server, so it cannot pass a webhook guarding a namespace by its labels', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'vault', labels: { guarded: 'yes' } } } });
    await c.core.createNamespacedConfigMap({ namespace: 'vault', body: { metadata: { name: 'treasure', labels: { sweep: 'yes' } } } });
    await validating('vault-guard', '/vault-guard', (r) => deny(r, 'the vault keeps its configmaps', 403), {
      namespaceSelector: { matchLabels: { guarded: 'yes' } },
    });
    // The guard works for a DELETE under the namespace.
    const direct = await failure(c.core.deleteCollectionNamespacedConfigMap({ namespace: 'vault', labelSelector: 'sweep=yes' }));
    expect(direct.code).to.equal(403);
    const sweep = await raw(c.server, 'DELETE', '/api/v1/configmaps?labelSelector=sweep%3Dyes');
    expect(sweep.status, sweep.text).to.equal(405);
    expect(sweep.json).to.deep.include({
      reason: 'MethodNotAllowed',
      message: 'the server does not allow this method on the requested resource',
    });
    const post = await raw(c.server, 'POST', '/api/v1/configmaps', JSON.stringify({ metadata: { name: 'nowhere', namespace: 'vault' } }));
    expect(post.status, post.text).to.equal(405);
    const left = await c.core.listNamespacedConfigMap({ namespace: 'vault' });
    expect(left.items.map((i) => i.metadata?.name)).to.include('treasure');
  });

  /**
   * A webhook that, the first time it is asked about `name`, lets the object be replaced by one the
   * guard protects (as another client could while admission decides), then allows the old one.
   */
  const replacedWhileDeciding = (name: string): Handler => {
    let replaced = false;
    return async (r) => {
      const old = r.request.oldObject;
      if (replaced || old?.metadata?.name !== name) return protect(r);
      replaced = true;
      // The other client's own delete passes this webhook too (allowed: not protected yet).
      await c.core.deleteNamespacedConfigMap({ name, namespace: 'default' });
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name, labels: { group: name, protect: 'yes' } }, data: { kept: 'yes' } },
      });
      return allow(r);
    };
  };

  for (const how of ['DELETE', 'DELETE of the collection'] as const) {
    it(`a ${how} never removes an object admission did not see: one replaced while admission decided is admitted again (refused here) and stays`, async () => {
      const name = how === 'DELETE' ? 'swap-one' : 'swap-all';
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name, labels: { group: name, protect: 'no' } } },
      });
      await validating('swap', '/swap', replacedWhileDeciding(name));
      const attempt =
        how === 'DELETE'
          ? c.core.deleteNamespacedConfigMap({ name, namespace: 'default' })
          : c.core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: `group=${name}` });
      const { code, status } = await failure(attempt);
      expect(code).to.equal(403);
      expect(status.message).to.equal('admission webhook "swap.example.com" denied the request: protected');
      const after = await c.core.readNamespacedConfigMap({ name, namespace: 'default' });
      expect(after.data).to.deep.equal({ kept: 'yes' });
      expect(hooks.calls('/swap').map((r) => r.request.oldObject?.metadata?.labels?.protect)).to.deep.equal(['no', 'no', 'yes']);
    });
  }

  describe('the scale subresource', () => {
    const scaleRules: k8s.V1RuleWithOperations[] = [
      { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'deployments/scale'], operations: ['UPDATE'] },
    ];
    const replicasOf = (r: Parameters<Handler>[0]): number => Number(r.request.object?.spec?.replicas ?? 0);
    const atMostFive: Handler = (r) => (replicasOf(r) > 5 ? deny(r, 'at most 5 replicas', 403) : allow(r));
    const deployment = (name: string): k8s.V1Deployment => ({
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });

    it('is admitted as the real server admits it: a validating webhook on deployments/scale sees an autoscaling/v1 Scale and its refusal keeps the replicas', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('scaled') });
      await validating('replicas', '/replicas', atMostFive, { rules: scaleRules });
      const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
      const patched = await failure(
        c.apps.patchNamespacedDeploymentScale({ name: 'scaled', namespace: 'default', body: { spec: { replicas: 50 } } }, mergePatch),
      );
      expect(patched.code).to.equal(403);
      expect(patched.status.message).to.equal('admission webhook "replicas.example.com" denied the request: at most 5 replicas');
      const put = await failure(
        c.apps.replaceNamespacedDeploymentScale({
          name: 'scaled',
          namespace: 'default',
          body: { metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 50 } },
        }),
      );
      expect(put.code).to.equal(403);
      if (await kubectlAvailable()) {
        const session = await kubectlSession(c.server);
        try {
          const refused = await session.kubectl('scale', 'deployment/scaled', '--replicas=40').then(
            () => 'scaled',
            (err: Error) => err.message,
          );
          expect(refused).to.include('at most 5 replicas');
        } finally {
          await session.close();
        }
      }
      expect((await c.apps.readNamespacedDeployment({ name: 'scaled', namespace: 'default' })).spec?.replicas).to.equal(1);
      const review = hooks.calls('/replicas')[0]?.request;
      expect(review?.kind).to.deep.equal({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
      expect(review?.resource).to.deep.equal({ group: 'apps', version: 'v1', resource: 'deployments' });
      expect(review?.subResource).to.equal('scale');
      expect([review?.object?.apiVersion, review?.object?.kind, review?.oldObject?.spec?.replicas]).to.deep.equal([
        'autoscaling/v1',
        'Scale',
        1,
      ]);
      // Within the limit, the scale goes through.
      const ok = await c.apps.patchNamespacedDeploymentScale(
        { name: 'scaled', namespace: 'default', body: { spec: { replicas: 3 } } },
        mergePatch,
      );
      expect(ok.spec?.replicas).to.equal(3);
      expect((await c.apps.readNamespacedDeployment({ name: 'scaled', namespace: 'default' })).spec?.replicas).to.equal(3);
    });

    it('is mutated as the real server mutates it: a mutating webhook on deployments/scale caps the replicas stored', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('capped') });
      await mutating(
        'cap',
        '/cap',
        (r) => (replicasOf(r) > 5 ? patch(r, [{ op: 'replace', path: '/spec/replicas', value: 5 }]) : allow(r)),
        scaleRules,
      );
      const scaled = await c.apps.replaceNamespacedDeploymentScale({
        name: 'capped',
        namespace: 'default',
        body: { metadata: { name: 'capped', namespace: 'default' }, spec: { replicas: 50 } },
      });
      expect(scaled.spec?.replicas).to.equal(5);
      expect((await c.apps.readNamespacedDeployment({ name: 'capped', namespace: 'default' })).spec?.replicas).to.equal(5);
    });
  });

  describe('the create subresources', () => {
    const rules = (resources: string[]): k8s.V1RuleWithOperations[] => [
      { apiGroups: [''], apiVersions: ['v1'], resources, operations: ['CREATE'] },
    ];

    it("a pod's binding is admitted as a v1 Binding: a webhook on pods/binding that refuses a node keeps the pod unbound", async () => {
      await c.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'placed' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      });
      await validating(
        'placement',
        '/placement',
        (r) =>
          r.request.object?.target?.name === 'forbidden-node'
            ? deny(r, 'not on that node', 403)
            : allow(r, { warnings: ['placed by a webhook'] }),
        { rules: rules(['pods/binding']) },
      );
      const { code, status } = await failure(
        c.core.createNamespacedPodBinding({
          name: 'placed',
          namespace: 'default',
          body: { metadata: { name: 'placed' }, target: { kind: 'Node', name: 'forbidden-node' } },
        }),
      );
      expect(code).to.equal(403);
      expect(status.message).to.equal('admission webhook "placement.example.com" denied the request: not on that node');
      expect((await c.core.readNamespacedPod({ name: 'placed', namespace: 'default' })).spec?.nodeName).to.equal(undefined);
      const review = hooks.calls('/placement')[0]?.request;
      expect([review?.kind, review?.subResource, review?.name, review?.operation]).to.deep.equal([
        { group: '', version: 'v1', kind: 'Binding' },
        'binding',
        'placed',
        'CREATE',
      ]);
      // An allowed binding is made, with the webhook's warnings.
      const bound = await raw(
        c.server,
        'POST',
        '/api/v1/namespaces/default/pods/placed/binding',
        JSON.stringify({ metadata: { name: 'placed' }, target: { kind: 'Node', name: 'node-a' } }),
      );
      expect(bound.status, bound.text).to.equal(201);
      expect(bound.headers.warning).to.equal('299 - "placed by a webhook"');
      expect((await c.core.readNamespacedPod({ name: 'placed', namespace: 'default' })).spec?.nodeName).to.equal('node-a');
    });

    it('a token request is admitted as an authentication.k8s.io/v1 TokenRequest: a webhook on serviceaccounts/token that refuses it means no token, whatever the body', async () => {
      await c.core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'robot' } } });
      await validating('no-tokens', '/no-tokens', (r) => deny(r, 'no tokens for robot', 403), { rules: rules(['serviceaccounts/token']) });
      const { code, status } = await failure(
        c.core.createNamespacedServiceAccountToken({ name: 'robot', namespace: 'default', body: { spec: { audiences: ['x'] } } }),
      );
      expect(code).to.equal(403);
      expect(status.message).to.equal('admission webhook "no-tokens.example.com" denied the request: no tokens for robot');
      const review = hooks.calls('/no-tokens')[0]?.request;
      expect(review?.kind).to.deep.equal({ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' });
      // A body that is no object is refused as the real server's decoding refuses it, never a token with the defaults.
      const odd = await raw(c.server, 'POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', '[]');
      expect(odd.status, odd.text).to.equal(400);
    });
  });
});
