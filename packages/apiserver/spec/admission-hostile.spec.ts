/**
 * Admission webhooks that try to reach past what a request may write, on the embedded server over
 * real HTTPS: a mutating webhook that renames or moves the object, stores what Go clients cannot
 * decode, or writes the status of a custom resource through its main resource; validating
 * webhooks that must see exactly the name and uid stored. The real server's answers are the
 * reference (kube-apiserver's create and update handlers, its store and its webhook dispatcher).
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { allow, deny, patch, useAdmissionFixture, type Handler, type WebhookServer } from './webhook-server.js';
import { eventually, failure, kubectlAvailable, kubectlSession, raw, webPageCrd, type Clients } from './helpers.js';

describe('admission webhooks under attack', function () {
  this.timeout(60_000);
  const fixture = useAdmissionFixture();
  const { created } = fixture;
  let hooks: WebhookServer;
  let c: Clients;
  let admission: k8s.AdmissionregistrationV1Api;
  let caBundle: string;
  before(() => ({ hooks, c, admission, caBundle } = fixture));

  type Rule = k8s.V1RuleWithOperations;
  const configMapRules: Rule[] = [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE'] }];

  function webhook(name: string, path: string, rules: Rule[] = configMapRules): k8s.V1MutatingWebhook {
    return {
      name,
      clientConfig: { url: hooks.url(path), caBundle },
      rules,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
    };
  }

  async function mutating(name: string, path: string, handler: Handler, rules?: Rule[]): Promise<void> {
    hooks.handlers.set(path, handler);
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name }, webhooks: [webhook(`${name}.example.com`, path, rules)] },
    });
    created.push({ kind: 'mutating', name });
  }

  async function validating(name: string, path: string, handler: Handler, rules?: Rule[]): Promise<void> {
    hooks.handlers.set(path, handler);
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name }, webhooks: [webhook(`${name}.example.com`, path, rules)] },
    });
    created.push({ kind: 'validating', name });
  }

  /** A webhook that applies `ops` to the objects whose name starts with `prefix`, and lets the others through. */
  const rewriting =
    (prefix: string, ops: unknown[]): Handler =>
    (r) =>
      String(r.request.object?.metadata?.name ?? '').startsWith(prefix) ? patch(r, ops) : allow(r);

  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

  describe('a mutating webhook that renames or moves the object', () => {
    it('cannot replace another object on create: renamed onto an existing name is 409 AlreadyExists, the victim unchanged', async () => {
      const victim = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'victim' }, data: { owner: 'victim' } },
      });
      await mutating('rename', '/rename', rewriting('attacker', [{ op: 'replace', path: '/metadata/name', value: 'victim' }]));
      const { code, status } = await failure(
        c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'attacker' }, data: { owner: 'attacker' } } }),
      );
      expect(code).to.equal(409);
      expect(status).to.deep.include({ reason: 'AlreadyExists', message: 'configmaps "victim" already exists' });
      const after = await c.core.readNamespacedConfigMap({ name: 'victim', namespace: 'default' });
      expect(after.data).to.deep.equal({ owner: 'victim' });
      expect(after.metadata?.uid).to.equal(victim.metadata?.uid);
      expect(after.metadata?.resourceVersion).to.equal(victim.metadata?.resourceVersion);
      // A free name is taken as the real server takes it: the object is created under it.
      hooks.handlers.set('/rename', rewriting('attacker-3', [{ op: 'replace', path: '/metadata/name', value: 'renamed-3' }]));
      const renamed = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'attacker-3' } } });
      expect(renamed.metadata?.name).to.equal('renamed-3');
      expect((await c.core.readNamespacedConfigMap({ name: 'renamed-3', namespace: 'default' })).metadata?.uid).to.equal(
        renamed.metadata?.uid,
      );
    });

    it('cannot move a create into another namespace (kube-system, or one that does not exist): 400, nothing stored', async () => {
      for (const target of ['kube-system', 'nowhere']) {
        await mutating(
          `move-${target}`,
          `/move-${target}`,
          rewriting('moved', [{ op: 'replace', path: '/metadata/namespace', value: target }]),
        );
        const { code, status } = await failure(
          c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `moved-${target}` } } }),
        );
        expect(code, target).to.equal(400);
        expect(status.message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
        const everywhere = await c.core.listConfigMapForAllNamespaces();
        expect(everywhere.items.map((i) => i.metadata?.name)).to.not.include(`moved-${target}`);
      }
      expect((await raw(c.server, 'GET', '/api/v1/namespaces/nowhere/configmaps/moved-nowhere')).status).to.equal(404);
    });

    it('cannot rename on update or patch: 422 "field is immutable", no second object with the same uid, never a 500', async () => {
      const a = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'rename-a' }, data: { v: 'a' } },
      });
      const b = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'rename-b' }, data: { v: 'b' } },
      });
      await mutating('rename-update', '/rename-update', (r) => {
        const name = String(r.request.object?.metadata?.name ?? '');
        if (r.request.operation !== 'UPDATE' || name !== 'rename-a') return allow(r);
        const to = r.request.object?.data?.to as string;
        return patch(r, [{ op: 'replace', path: '/metadata/name', value: to }]);
      });
      for (const to of ['rename-b', 'rename-new']) {
        const { code, status } = await failure(
          c.core.patchNamespacedConfigMap({ name: 'rename-a', namespace: 'default', body: { data: { v: 'a', to } } }, mergePatch),
        );
        expect(code, to).to.equal(422);
        expect(status.message).to.equal(`ConfigMap "rename-a" is invalid: metadata.name: Invalid value: "${to}": field is immutable`);
        const put = await failure(
          c.core.replaceNamespacedConfigMap({ name: 'rename-a', namespace: 'default', body: { ...a, data: { v: 'a', to } } }),
        );
        expect(put.code, `PUT ${to}`).to.equal(422);
      }
      const list = await c.core.listNamespacedConfigMap({ namespace: 'default' });
      const uids = list.items.map((i) => i.metadata?.uid);
      expect(uids.filter((u) => u === a.metadata?.uid)).to.have.length(1);
      expect(list.items.map((i) => i.metadata?.name)).to.not.include('rename-new');
      const bAfter = await c.core.readNamespacedConfigMap({ name: 'rename-b', namespace: 'default' });
      expect(bAfter.metadata?.uid).to.equal(b.metadata?.uid);
      expect(bAfter.data).to.deep.equal({ v: 'b' });
    });

    it('cannot move an update into another namespace: 400', async () => {
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'stay' } } });
      await mutating('move-update', '/move-update', (r) =>
        r.request.operation === 'UPDATE' ? patch(r, [{ op: 'replace', path: '/metadata/namespace', value: 'kube-system' }]) : allow(r),
      );
      const { code, status } = await failure(
        c.core.patchNamespacedConfigMap({ name: 'stay', namespace: 'default', body: { data: { x: '1' } } }, mergePatch),
      );
      expect(code).to.equal(400);
      expect(status.message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
      expect((await raw(c.server, 'GET', '/api/v1/namespaces/kube-system/configmaps/stay')).status).to.equal(404);
    });
  });

  describe('a mutating webhook that writes what Go clients cannot decode', () => {
    const deploymentRules: Rule[] = [
      { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['CREATE', 'UPDATE'] },
    ];
    const deployment = (name: string): k8s.V1Deployment => ({
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });

    it('is refused: replicas "three" from a webhook is the 500 of the real dispatcher on create and patch, nothing stored, and kubectl describe deployments keeps working', async () => {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('typed-ok') });
      await mutating('retype', '/retype', rewriting('typed', [{ op: 'replace', path: '/spec/replicas', value: 'three' }]), deploymentRules);
      const expected =
        'Internal error occurred: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32';
      const create = await failure(c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('typed-new') }));
      expect(create.code).to.equal(500);
      expect(create.status.message).to.equal(expected);
      const update = await failure(
        c.apps.patchNamespacedDeployment({ name: 'typed-ok', namespace: 'default', body: { spec: { replicas: 2 } } }, mergePatch),
      );
      expect(update.code).to.equal(500);
      expect(update.status.message).to.equal(expected);
      expect((await c.apps.readNamespacedDeployment({ name: 'typed-ok', namespace: 'default' })).spec?.replicas).to.equal(1);
      expect((await raw(c.server, 'GET', '/apis/apps/v1/namespaces/default/deployments/typed-new')).status).to.equal(404);
      if (!(await kubectlAvailable())) return;
      const session = await kubectlSession(c.server);
      try {
        expect(await session.kubectl('describe', 'deployments', '-n', 'default')).to.include('typed-ok');
      } finally {
        await session.close();
      }
    });

    it('has fields the Go types do not declare dropped, as decoding drops them, and the object validated after mutation (422)', async () => {
      await mutating(
        'extra',
        '/extra',
        rewriting('extra', [{ op: 'add', path: '/spec/template/spec/hostPID2', value: true }]),
        deploymentRules,
      );
      const made = await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('extra-field') });
      expect(made.spec?.template.spec).to.not.have.property('hostPID2');
      const stored = (await raw(c.server, 'GET', '/apis/apps/v1/namespaces/default/deployments/extra-field')).json as {
        spec: { template: { spec: Record<string, unknown> } };
      };
      expect(stored.spec.template.spec).to.not.have.property('hostPID2');
      await mutating(
        'negative',
        '/negative',
        rewriting('negative', [{ op: 'replace', path: '/spec/replicas', value: -5 }]),
        deploymentRules,
      );
      const { code, status } = await failure(c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('negative') }));
      expect(code).to.equal(422);
      expect(String(status.message)).to.include('spec.replicas: Invalid value: -5: must be greater than or equal to 0');
    });
  });

  describe('a mutating webhook on a custom resource with a status subresource', () => {
    const g = { group: 'sample.rxkube.dev', version: 'v1', namespace: 'default', plural: 'webpages' };
    const pageRules: Rule[] = [
      { apiGroups: ['sample.rxkube.dev'], apiVersions: ['*'], resources: ['webpages'], operations: ['CREATE', 'UPDATE'] },
    ];
    before(async () => {
      await c.ext.createCustomResourceDefinition({ body: webPageCrd() });
      await eventually(async () => (await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v1')).status === 200, 'the CRD to be served');
    });

    it('cannot write status through the main resource: dropped on create, the stored status kept on a merge patch', async () => {
      await mutating('status', '/status', (r) => patch(r, [{ op: 'add', path: '/status', value: { phase: 'Hacked' } }]), pageRules);
      const made = (await c.custom.createNamespacedCustomObject({
        ...g,
        body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'page' }, spec: { title: 'T' } },
      })) as Record<string, unknown>;
      expect(made).to.not.have.property('status');
      expect((await c.custom.getNamespacedCustomObject({ ...g, name: 'page' })) as Record<string, unknown>).to.not.have.property('status');
      await c.custom.patchNamespacedCustomObjectStatus({ ...g, name: 'page', body: { status: { phase: 'Ready' } } }, mergePatch);
      await c.custom.patchNamespacedCustomObject({ ...g, name: 'page', body: { spec: { title: 'U' } } }, mergePatch);
      const read = (await c.custom.getNamespacedCustomObject({ ...g, name: 'page' })) as { spec: unknown; status: unknown };
      expect(read.spec).to.deep.equal({ title: 'U' });
      expect(read.status).to.deep.equal({ phase: 'Ready' });
    });
  });

  describe('validating webhooks', () => {
    it('approve exactly the name and uid stored: a generateName create draws them once', async () => {
      const mutatingSaw: unknown[] = [];
      await mutating('before-identity', '/before-identity', (r) => {
        mutatingSaw.push(r.request.object?.metadata?.uid);
        return allow(r);
      });
      const seen: { name: string; uid: string; generated: string }[] = [];
      await validating('identity', '/identity', (r) => {
        seen.push({
          name: String(r.request.name),
          uid: String(r.request.object?.metadata?.uid),
          generated: String(r.request.object?.metadata?.name),
        });
        return allow(r);
      });
      const made = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'drawn-' } } });
      const named = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'named-once' } } });
      expect(seen).to.have.length(2);
      expect(seen[0]).to.deep.equal({ name: made.metadata?.name, uid: made.metadata?.uid, generated: made.metadata?.name });
      expect(seen[1]).to.deep.equal({ name: 'named-once', uid: named.metadata?.uid, generated: 'named-once' });
      const stored = await c.core.readNamespacedConfigMap({ name: String(made.metadata?.name), namespace: 'default' });
      expect(stored.metadata?.uid).to.equal(seen[0]?.uid);
      // Mutating webhooks run before the server draws the uid, as on the real server.
      expect(mutatingSaw).to.deep.equal([undefined, undefined]);
    });
  });

  describe('a conversion webhook', () => {
    const g = { group: 'convert.rxkube.dev', namespace: 'default', plural: 'notes' };
    type Obj = Record<string, any>;
    /** v1 spec.text is v2 spec.body; the webhook also rewrites metadata, as a hostile one would. */
    const converting: Handler = (review) => {
      const { uid, desiredAPIVersion, objects } = review.request as unknown as { uid: string; desiredAPIVersion: string; objects: Obj[] };
      const convertedObjects = objects.map((o) => {
        const spec = { ...(o.spec ?? {}) };
        if (desiredAPIVersion.endsWith('/v2')) [spec.body, spec.text] = [spec.text, undefined];
        else [spec.text, spec.body] = [spec.body, undefined];
        const metadata = {
          ...o.metadata,
          finalizers: [],
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'made-up', uid: '00000000-0000-0000-0000-000000000000' }],
          labels: { ...(o.metadata.labels ?? {}), converted: 'yes' },
          annotations: { ...(o.metadata.annotations ?? {}), 'converted-by': 'webhook' },
          managedFields: [],
        };
        return { ...o, apiVersion: desiredAPIVersion, metadata, spec: JSON.parse(JSON.stringify(spec)) as Obj };
      });
      return {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: { uid, result: { status: 'Success' }, convertedObjects },
      };
    };

    before(async () => {
      hooks.handlers.set('/convert', converting);
      const schema = { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } as k8s.V1CustomResourceValidation;
      await c.ext.createCustomResourceDefinition({
        body: {
          metadata: { name: 'notes.convert.rxkube.dev' },
          spec: {
            group: 'convert.rxkube.dev',
            scope: 'Namespaced',
            names: { plural: 'notes', singular: 'note', kind: 'Note' },
            versions: [
              { name: 'v1', served: true, storage: true, schema },
              { name: 'v2', served: true, storage: false, schema },
            ],
            conversion: {
              strategy: 'Webhook',
              webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hooks.url('/convert'), caBundle } },
            },
          },
        },
      });
      await eventually(async () => (await raw(c.server, 'GET', '/apis/convert.rxkube.dev/v2')).status === 200, 'the CRD to be served');
    });

    it('cannot rewrite finalizers or ownerReferences: the original metadata is restored, only its labels and annotations kept', async () => {
      await c.custom.createNamespacedCustomObject({
        ...g,
        version: 'v1',
        body: {
          apiVersion: 'convert.rxkube.dev/v1',
          kind: 'Note',
          metadata: { name: 'kept', finalizers: ['example.com/keep'], labels: { a: 'b' } },
          spec: { text: 'hello' },
        },
      });
      const v2 = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v2', name: 'kept' })) as Obj;
      expect(v2.spec).to.deep.equal({ body: 'hello' });
      expect(v2.metadata.finalizers).to.deep.equal(['example.com/keep']);
      expect(v2.metadata).to.not.have.property('ownerReferences');
      expect(v2.metadata.labels).to.deep.equal({ a: 'b', converted: 'yes' });
      expect(v2.metadata.annotations).to.deep.equal({ 'converted-by': 'webhook' });
      expect(v2.metadata.managedFields).to.have.length.greaterThan(0);
      // A PUT in v2 stores no made-up owner, so the garbage collector has nothing to delete it for.
      await c.custom.replaceNamespacedCustomObject({ ...g, version: 'v2', name: 'kept', body: { ...v2, spec: { body: 'again' } } });
      const v1 = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'kept' })) as Obj;
      expect(v1.spec).to.deep.equal({ text: 'again' });
      expect(v1.metadata.finalizers).to.deep.equal(['example.com/keep']);
      expect(v1.metadata).to.not.have.property('ownerReferences');
    });
  });

  describe('validating admission of deletes', () => {
    const deleteRules: Rule[] = [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['DELETE'] }];
    const protect: Handler = (r) => (r.request.oldObject?.metadata?.labels?.protect === 'yes' ? deny(r, 'protected', 403) : allow(r));
    const denied = 'admission webhook "protect.example.com" denied the request: protected';
    const cm = (name: string, labels: Record<string, string>, more: Partial<k8s.V1ObjectMeta> = {}): k8s.V1ConfigMap => ({
      metadata: { name, labels, ...more },
    });

    it('sees each item of a DELETE of the collection: a refused item stays, the collection stops there, and the refusal is the answer', async () => {
      for (const [name, p] of [
        ['dc-a', 'no'],
        ['dc-b', 'yes'],
        ['dc-c', 'no'],
      ] as const)
        await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm(name, { group: 'dc', protect: p }) });
      await validating('protect', '/protect', protect, deleteRules);
      const { code, status } = await failure(
        c.core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'group=dc' }),
      );
      expect(code).to.equal(403);
      expect(status.message).to.equal(denied);
      const left = await c.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'group=dc' });
      expect(left.items.map((i) => i.metadata?.name)).to.deep.equal(['dc-b', 'dc-c']);
      const reviews = hooks.calls('/protect').map((r) => r.request);
      expect(reviews.map((r) => [r.operation, r.name, r.oldObject?.metadata?.name])).to.deep.equal([
        ['DELETE', '', 'dc-a'],
        ['DELETE', '', 'dc-b'],
      ]);
    });

    it('a ValidatingAdmissionPolicy that refuses a DELETE keeps the item a DELETE of the collection reaches', async () => {
      for (const [name, p] of [
        ['vap-a', 'no'],
        ['vap-b', 'vap'],
      ] as const)
        await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm(name, { group: 'vap', protect: p }) });
      await admission.createValidatingAdmissionPolicy({
        body: {
          metadata: { name: 'no-delete' },
          spec: {
            matchConstraints: { resourceRules: deleteRules },
            validations: [
              {
                expression: "!('protect' in oldObject.metadata.labels) || oldObject.metadata.labels['protect'] != 'vap'",
                message: 'protected by policy',
              },
            ],
          },
        },
      });
      await admission.createValidatingAdmissionPolicyBinding({
        body: { metadata: { name: 'no-delete-binding' }, spec: { policyName: 'no-delete', validationActions: ['Deny'] } },
      });
      try {
        const { code, status } = await failure(
          c.core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'group=vap' }),
        );
        expect(code).to.equal(422);
        expect(String(status.message)).to.include(
          "ValidatingAdmissionPolicy 'no-delete' with binding 'no-delete-binding' denied request: protected by policy",
        );
        const left = await c.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'group=vap' });
        expect(left.items.map((i) => i.metadata?.name)).to.deep.equal(['vap-b']);
      } finally {
        await admission.deleteValidatingAdmissionPolicyBinding({ name: 'no-delete-binding' });
        await admission.deleteValidatingAdmissionPolicy({ name: 'no-delete' });
      }
    });

    it('is applied to the garbage collector: a dependent whose delete is refused stays, and goes once admission allows it', async () => {
      const owner = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-owner', { protect: 'no' }) });
      const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: String(owner.metadata?.uid) }];
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-dependent', { protect: 'yes' }, { ownerReferences }) });
      await validating('protect', '/protect', protect, deleteRules);
      await c.core.deleteNamespacedConfigMap({ name: 'gc-owner', namespace: 'default' });
      const review = await eventually(
        () => hooks.calls('/protect').find((r) => r.request.oldObject?.metadata?.name === 'gc-dependent')?.request,
        'the garbage collector to ask admission',
      );
      expect(review.operation).to.equal('DELETE');
      expect((review.userInfo as { username: string }).username).to.equal('system:serviceaccount:kube-system:generic-garbage-collector');
      expect((await c.core.readNamespacedConfigMap({ name: 'gc-dependent', namespace: 'default' })).metadata?.name).to.equal(
        'gc-dependent',
      );
      hooks.handlers.set('/protect', allow);
      await eventually(
        async () => (await raw(c.server, 'GET', '/api/v1/namespaces/default/configmaps/gc-dependent')).status === 404,
        'the dependent to be collected once allowed',
        10_000,
      );
    });

    it('the garbage collector looks again at a dependent that changed while admission decided: one that gained a live owner stays', async () => {
      const gone = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-gone-owner', {}) });
      const live = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-live-owner', {}) });
      const ref = (o: k8s.V1ConfigMap): k8s.V1OwnerReference => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: String(o.metadata?.name),
        uid: String(o.metadata?.uid),
      });
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: cm('gc-adopted', { watched: 'yes' }, { ownerReferences: [ref(gone)] }),
      });
      await validating(
        'adopt',
        '/adopt',
        async (r) => {
          if (r.request.oldObject?.metadata?.name !== 'gc-adopted') return allow(r);
          // While admission decides, the dependent is adopted by an owner that lives.
          await c.core.patchNamespacedConfigMap(
            { name: 'gc-adopted', namespace: 'default', body: { metadata: { ownerReferences: [ref(gone), ref(live)] } } },
            mergePatch,
          );
          return allow(r);
        },
        deleteRules,
      );
      await c.core.deleteNamespacedConfigMap({ name: 'gc-gone-owner', namespace: 'default' });
      await eventually(
        () => hooks.calls('/adopt').some((r) => r.request.oldObject?.metadata?.name === 'gc-adopted'),
        'the garbage collector to ask admission',
      );
      await eventually(async () => {
        const read = await c.core.readNamespacedConfigMap({ name: 'gc-adopted', namespace: 'default' });
        return read.metadata?.ownerReferences?.length === 1 && read.metadata.ownerReferences[0]?.uid === live.metadata?.uid;
      }, 'the reference to the deleted owner to be dropped');
      // A later collection through the same webhook, done once the answer above has long been handled.
      const later = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-later-owner', {}) });
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-later', {}, { ownerReferences: [ref(later)] }) });
      await c.core.deleteNamespacedConfigMap({ name: 'gc-later-owner', namespace: 'default' });
      await eventually(
        async () => (await raw(c.server, 'GET', '/api/v1/namespaces/default/configmaps/gc-later')).status === 404,
        'the later dependent to be collected',
      );
      const kept = await c.core.readNamespacedConfigMap({ name: 'gc-adopted', namespace: 'default' });
      expect(kept.metadata?.ownerReferences?.map((o) => o.name)).to.deep.equal(['gc-live-owner']);
    });

    it('the garbage collector asks admission about at most 20 deletes at once', async () => {
      const owner = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('gc-many-owner', {}) });
      const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-many-owner', uid: String(owner.metadata?.uid) }];
      for (let i = 0; i < 30; i++)
        await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm(`gc-many-${i}`, { many: 'yes' }, { ownerReferences }) });
      let inFlight = 0;
      let peak = 0;
      const held: (() => void)[] = [];
      await validating(
        'slow',
        '/slow',
        async (r) => {
          if (r.request.oldObject?.metadata?.labels?.many !== 'yes') return allow(r);
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise<void>((resolve) => held.push(resolve));
          inFlight--;
          return allow(r);
        },
        deleteRules,
      );
      await c.core.deleteNamespacedConfigMap({ name: 'gc-many-owner', namespace: 'default' });
      await eventually(() => held.length === 20, 'twenty deletes to be asked about');
      // Another turn for any more the collector would ask about at once.
      await c.core.listNamespacedConfigMap({ namespace: 'default' });
      expect(held).to.have.length(20);
      const release = async (): Promise<boolean> => {
        held.splice(0).forEach((go) => go());
        return (await c.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'many=yes' })).items.length === 0;
      };
      await eventually(release, 'every dependent to be collected', 10_000);
      expect(peak).to.equal(20);
    });

    it('is applied to namespace deletion: the namespace stays Terminating with a NamespaceDeletionContentFailure condition until admission allows', async () => {
      await c.core.createNamespace({ body: { metadata: { name: 'guarded' } } });
      await c.core.createNamespacedConfigMap({ namespace: 'guarded', body: cm('kept', { protect: 'yes' }) });
      await c.core.createNamespacedConfigMap({ namespace: 'guarded', body: cm('free', { protect: 'no' }) });
      await validating('protect', '/protect', protect, deleteRules);
      await c.core.deleteNamespace({ name: 'guarded' });
      const ns = await eventually(async () => {
        const read = await c.core.readNamespace({ name: 'guarded' });
        return read.status?.conditions?.some((x) => x.type === 'NamespaceDeletionContentFailure' && x.status === 'True') ? read : undefined;
      }, 'the content failure condition');
      expect(ns.status?.phase).to.equal('Terminating');
      const conditions = Object.fromEntries((ns.status?.conditions ?? []).map((x) => [x.type, [x.status, x.reason, x.message]]));
      expect(conditions.NamespaceDeletionContentFailure).to.deep.equal([
        'True',
        'ContentDeletionFailed',
        `Failed to delete all resource types, 1 remaining: ${denied}`,
      ]);
      expect(conditions.NamespaceContentRemaining).to.deep.equal([
        'True',
        'SomeResourcesRemain',
        'Some resources are remaining: configmaps. has 1 resource instances',
      ]);
      expect(conditions.NamespaceDeletionDiscoveryFailure).to.deep.equal([
        'False',
        'ResourcesDiscovered',
        'All resources successfully discovered',
      ]);
      const left = await c.core.listNamespacedConfigMap({ namespace: 'guarded' });
      expect(left.items.map((i) => i.metadata?.name))
        .to.include('kept')
        .and.not.include('free');
      const asked = hooks.calls('/protect').find((r) => r.request.oldObject?.metadata?.name === 'kept')?.request;
      expect((asked?.userInfo as { username: string }).username).to.equal('system:serviceaccount:kube-system:namespace-controller');
      if (await kubectlAvailable()) {
        const session = await kubectlSession(c.server);
        try {
          expect(await session.kubectl('get', 'namespace', 'guarded', '-o', 'jsonpath={.status.phase}')).to.equal('Terminating');
        } finally {
          await session.close();
        }
      }
      hooks.handlers.set('/protect', allow);
      await eventually(
        async () => (await raw(c.server, 'GET', '/api/v1/namespaces/guarded')).status === 404,
        'the namespace to go once allowed',
        10_000,
      );
    });
  });
});
