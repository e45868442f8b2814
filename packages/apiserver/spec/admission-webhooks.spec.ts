/**
 * Admission webhooks on the embedded server: ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration served and validated, and their webhooks called over real HTTPS
 * (a server written here, with a CA made by @peculiar/x509) as the real server calls them, seen
 * through client-node and kubectl.
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { startApiServer } from '../src/index.js';
import { generateServingTls, type GeneratedTls } from '../src/http/tls.js';
import { allow, b64, deny, patch, WebhookServer, type Handler } from './webhook-server.js';
import {
  eventually,
  failure,
  kubectlAvailable,
  kubectlSession,
  raw,
  startWithClients,
  webPageCrd,
  type Clients,
  type KubectlSession,
} from './helpers.js';

describe('admission webhooks', function () {
  this.timeout(60_000);
  let tls: GeneratedTls;
  let hooks: WebhookServer;
  let c: Clients;
  let admission: k8s.AdmissionregistrationV1Api;
  let caBundle: string;
  const created: { kind: 'validating' | 'mutating'; name: string }[] = [];

  before(async () => {
    tls = await generateServingTls({ dns: ['localhost', 'hooks.webhooks.svc'], ips: ['127.0.0.1'] });
    caBundle = b64(tls.ca);
    hooks = await WebhookServer.start(tls);
    c = await startWithClients({ webhookServices: { [`webhooks/hooks:443`]: `127.0.0.1:${hooks.port}` } });
    admission = c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  });

  after(async () => {
    await c.server.close();
    await hooks.close();
  });

  afterEach(async () => {
    for (const { kind, name } of created.splice(0)) {
      if (kind === 'validating') await admission.deleteValidatingWebhookConfiguration({ name });
      else await admission.deleteMutatingWebhookConfiguration({ name });
    }
    hooks.handlers.clear();
    hooks.reviews.splice(0);
  });

  const rules = (resources = ['configmaps'], operations = ['CREATE', 'UPDATE']): k8s.V1RuleWithOperations[] => [
    { apiGroups: [''], apiVersions: ['v1'], resources, operations },
  ];

  function webhook(name: string, path: string, more: Partial<k8s.V1ValidatingWebhook> = {}): k8s.V1ValidatingWebhook {
    return {
      name,
      clientConfig: { url: hooks.url(path), caBundle },
      rules: rules(),
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...more,
    };
  }

  async function validating(name: string, webhooks: k8s.V1ValidatingWebhook[]): Promise<void> {
    await admission.createValidatingWebhookConfiguration({ body: { metadata: { name }, webhooks } });
    created.push({ kind: 'validating', name });
  }

  async function mutating(name: string, webhooks: k8s.V1MutatingWebhook[]): Promise<void> {
    await admission.createMutatingWebhookConfiguration({ body: { metadata: { name }, webhooks } });
    created.push({ kind: 'mutating', name });
  }

  const configMap = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): k8s.V1ConfigMap => ({
    metadata: { name, labels },
    data,
  });

  describe('the configurations', () => {
    it('are served in admissionregistration.k8s.io/v1 with the real defaults, and listed by discovery', async () => {
      const groups = (await raw(c.server, 'GET', '/apis')).json as { groups: { name: string }[] };
      expect(groups.groups.map((g) => g.name)).to.include('admissionregistration.k8s.io');
      await validating('defaults', [
        webhook('defaults.example.com', '/allow', { clientConfig: { service: { namespace: 'webhooks', name: 'hooks' }, caBundle } }),
      ]);
      const read = await admission.readValidatingWebhookConfiguration({ name: 'defaults' });
      const hook = read.webhooks?.[0];
      expect(hook).to.deep.include({
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 10,
        namespaceSelector: {},
        objectSelector: {},
      });
      expect(hook?.clientConfig.service?.port).to.equal(443);
      expect(hook?.rules?.[0]?.scope).to.equal('*');
    });

    it('are validated as the real server validates them: unique names, sideEffects and admissionReviewVersions required, one of url or service, https only, timeout 1-30', async () => {
      const bad = webhook('dup.example.com', '/allow');
      const { code, status } = await failure(
        admission.createValidatingWebhookConfiguration({
          body: {
            metadata: { name: 'bad' },
            webhooks: [
              bad,
              { ...bad, sideEffects: undefined as unknown as string, admissionReviewVersions: [], timeoutSeconds: 31 },
              { ...webhook('short', '/x'), clientConfig: { url: 'http://127.0.0.1/x', service: { namespace: 'a', name: 'b' } } },
              { ...webhook('url.example.com', '/x'), clientConfig: { url: 'http://127.0.0.1/x' }, sideEffects: 'Some' },
            ],
          },
        }),
      );
      expect(code).to.equal(422);
      const message = String(status.message);
      expect(message).to.include('ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid');
      expect(message).to.include('webhooks[1].name: Duplicate value: "dup.example.com"');
      expect(message).to.include('webhooks[1].sideEffects: Required value');
      expect(message).to.include('webhooks[1].admissionReviewVersions: Required value: must specify one of v1, v1beta1');
      expect(message).to.include('webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds');
      expect(message).to.include(
        'webhooks[2].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      );
      expect(message).to.include('webhooks[2].clientConfig: Required value: exactly one of url or service is required');
      expect(message).to.include(
        `webhooks[3].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      );
      expect(message).to.include('webhooks[3].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"');
    });
  });

  it('startApiServer refuses webhookServices that are not namespace/name:port to host:port', async () => {
    for (const [services, expected] of [
      [{ 'hooks:443': '127.0.0.1:1' }, 'webhookServices keys must be namespace/name:port, got "hooks:443"'],
      [{ 'a/hooks:443': 'https://127.0.0.1' }, 'webhookServices["a/hooks:443"] must be host:port, got "https://127.0.0.1"'],
    ] as const) {
      const err = await startApiServer({ webhookServices: services }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(TypeError);
      expect(err?.message).to.include(expected);
    }
  });

  describe('validating webhooks', () => {
    it('deny an invalid custom resource with the webhook message, as kubectl prints it', async function () {
      await c.ext.createCustomResourceDefinition({ body: webPageCrd() });
      await eventually(async () => (await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v1')).status === 200, 'the CRD to be served');
      hooks.handlers.set('/webpages', (r) => (r.request.object?.spec?.title ? allow(r) : deny(r, 'spec.title is required', 403)));
      await validating('webpages', [
        webhook('webpages.sample.rxkube.dev', '/webpages', {
          rules: [{ apiGroups: ['sample.rxkube.dev'], apiVersions: ['*'], resources: ['webpages'], operations: ['CREATE', 'UPDATE'] }],
        }),
      ]);
      const g = { group: 'sample.rxkube.dev', version: 'v1', namespace: 'default', plural: 'webpages' };
      const { code, status } = await failure(
        c.custom.createNamespacedCustomObject({
          ...g,
          body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'untitled' }, spec: {} },
        }),
      );
      expect(code).to.equal(403);
      expect(status.message).to.equal('admission webhook "webpages.sample.rxkube.dev" denied the request: spec.title is required');
      await c.custom.createNamespacedCustomObject({
        ...g,
        body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'home' }, spec: { title: 'Home' } },
      });
      const request = hooks.calls('/webpages').at(-1)?.request;
      expect(request).to.deep.include({
        kind: { group: 'sample.rxkube.dev', version: 'v1', kind: 'WebPage' },
        resource: { group: 'sample.rxkube.dev', version: 'v1', resource: 'webpages' },
        requestKind: { group: 'sample.rxkube.dev', version: 'v1', kind: 'WebPage' },
        name: 'home',
        namespace: 'default',
        operation: 'CREATE',
        dryRun: false,
        oldObject: null,
      });
      expect(request?.options).to.deep.include({ kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
      expect((request?.userInfo as { username: string }).username).to.be.a('string');
      if (!(await kubectlAvailable())) return;
      const session = await kubectlSession(c.server);
      try {
        const out = await session
          .kubectlOutput('patch', 'webpages.sample.rxkube.dev', 'home', '--type=merge', '-p', '{"spec":{"title":null}}')
          .then(
            () => '',
            (e: { stderr: string }) => e.stderr,
          );
        expect(out).to.include('admission webhook "webpages.sample.rxkube.dev" denied the request: spec.title is required');
      } finally {
        await session.close();
        await c.ext.deleteCustomResourceDefinition({ name: 'webpages.sample.rxkube.dev' });
      }
    });

    it('a denial without a code is a 400, and one without a message says "without explanation"', async () => {
      hooks.handlers.set('/bare', (r) => ({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: r.request.uid, allowed: false },
      }));
      await validating('bare', [webhook('bare.example.com', '/bare')]);
      const { code, status } = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('bare') }));
      expect(code).to.equal(400);
      expect(status.message).to.equal('admission webhook "bare.example.com" denied the request without explanation');
    });

    it('see the object as it would be stored, and its old form on UPDATE and DELETE; their warnings reach the client', async () => {
      hooks.handlers.set('/watch', (r) => allow(r, { warnings: [`seen ${String(r.request.operation)}`] }));
      await validating('seen', [webhook('seen.example.com', '/watch', { rules: rules(['configmaps'], ['*']) })]);
      const warnings: string[] = [];
      const res = await raw(c.server, 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify(configMap('seen', { a: '1' })));
      expect(res.status).to.equal(201);
      warnings.push(String(res.headers.warning));
      const create = hooks.calls('/watch')[0]?.request;
      expect(create?.object?.metadata?.uid).to.be.a('string');
      expect(create?.object?.data).to.deep.equal({ a: '1' });
      await c.core.patchNamespacedConfigMap(
        { name: 'seen', namespace: 'default', body: { data: { a: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const update = hooks.calls('/watch')[1]?.request;
      expect(update?.operation).to.equal('UPDATE');
      expect(update?.object?.data).to.deep.equal({ a: '2' });
      expect(update?.oldObject?.data).to.deep.equal({ a: '1' });
      await c.core.deleteNamespacedConfigMap({ name: 'seen', namespace: 'default' });
      const del = hooks.calls('/watch')[2]?.request;
      expect(del).to.deep.include({ operation: 'DELETE', object: null });
      expect(del?.oldObject?.data).to.deep.equal({ a: '2' });
      expect(warnings[0]).to.include('seen CREATE');
    });
  });

  describe('mutating webhooks', () => {
    it('defaults land in the stored object, mutating before validating', async () => {
      hooks.handlers.set('/default', (r) => patch(r, [{ op: 'add', path: '/data/color', value: 'blue' }]));
      hooks.handlers.set('/check', (r) => (r.request.object?.data?.color === 'blue' ? allow(r) : deny(r, 'no color')));
      await mutating('defaults', [{ ...webhook('default.example.com', '/default'), reinvocationPolicy: 'Never' }]);
      await validating('check', [webhook('check.example.com', '/check')]);
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('painted', { size: 'big' }) });
      const read = await c.core.readNamespacedConfigMap({ name: 'painted', namespace: 'default' });
      expect(read.data).to.deep.equal({ size: 'big', color: 'blue' });
    });

    it('are called in order, and with reinvocationPolicy IfNeeded once more after a later webhook changed the object', async () => {
      hooks.handlers.set('/first', (r) =>
        r.request.object?.data?.second ? patch(r, [{ op: 'add', path: '/data/firstSawSecond', value: 'yes' }]) : allow(r),
      );
      hooks.handlers.set('/second', (r) => patch(r, [{ op: 'add', path: '/data/second', value: 'yes' }]));
      await mutating('a-first', [{ ...webhook('first.example.com', '/first'), reinvocationPolicy: 'IfNeeded' }]);
      await mutating('b-second', [{ ...webhook('second.example.com', '/second'), reinvocationPolicy: 'Never' }]);
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('reinvoked') });
      expect(hooks.reviews.map((r) => r.path)).to.deep.equal(['/first', '/second', '/first']);
      const read = await c.core.readNamespacedConfigMap({ name: 'reinvoked', namespace: 'default' });
      expect(read.data).to.deep.equal({ second: 'yes', firstSawSecond: 'yes' });
    });

    it('a create from generateName reaches them without a name', async () => {
      hooks.handlers.set('/named', (r) => allow(r));
      await mutating('named', [{ ...webhook('named.example.com', '/named') }]);
      const made = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
      expect(made.metadata?.name).to.match(/^gen-/);
      expect(hooks.calls('/named')[0]?.request.name).to.equal('');
    });
  });

  describe('failures', () => {
    it('a dead webhook refuses the write under failurePolicy Fail and admits it under Ignore', async () => {
      const dead = 'https://127.0.0.1:1/dead';
      await validating('dead-fail', [
        { ...webhook('dead.example.com', '/dead'), clientConfig: { url: dead, caBundle }, failurePolicy: 'Fail' },
      ]);
      const { code, status } = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('refused') }));
      expect(code).to.equal(500);
      expect(status.message).to.equal(
        'Internal error occurred: failed calling webhook "dead.example.com": failed to call webhook: Post "https://127.0.0.1:1/dead?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused',
      );
      await admission.patchValidatingWebhookConfiguration(
        { name: 'dead-fail', body: [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }] },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('admitted') });
    });

    it('a webhook that does not answer within timeoutSeconds fails the call (context deadline exceeded)', async () => {
      hooks.handlers.set('/slow', () => 'hang');
      await validating('slow', [webhook('slow.example.com', '/slow', { timeoutSeconds: 1 })]);
      const { code, status } = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('late') }));
      expect(code).to.equal(500);
      expect(status.message).to.include(
        `failed calling webhook "slow.example.com": failed to call webhook: Post "${hooks.url('/slow')}?timeout=1s": context deadline exceeded`,
      );
    });

    it('a certificate the caBundle does not vouch for fails the call with the x509 error', async () => {
      const other = await generateServingTls({ dns: ['localhost'], ips: ['127.0.0.1'] });
      await validating('untrusted', [
        webhook('untrusted.example.com', '/allow', { clientConfig: { url: hooks.url('/allow'), caBundle: b64(other.ca) } }),
      ]);
      const { code, status } = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('untrusted') }));
      expect(code).to.equal(500);
      expect(status.message).to.include('tls: failed to verify certificate: x509: certificate signed by unknown authority');
    });

    it('a Service clientConfig is reached through webhookServices, verified as name.namespace.svc; an unknown Service is not found', async () => {
      hooks.handlers.set('/svc', (r) => deny(r, 'through the service', 403));
      await validating('svc', [
        webhook('svc.example.com', '/svc', { clientConfig: { service: { namespace: 'webhooks', name: 'hooks', path: '/svc' }, caBundle } }),
      ]);
      expect((await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('svc') }))).status.message).to.equal(
        'admission webhook "svc.example.com" denied the request: through the service',
      );
      await validating('nosvc', [
        webhook('nosvc.example.com', '/svc', { clientConfig: { service: { namespace: 'webhooks', name: 'missing' }, caBundle } }),
      ]);
      expect(
        (await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('svc2') }))).status.message,
      ).to.include(
        'failed calling webhook "nosvc.example.com": failed to call webhook: Post "https://missing.webhooks.svc:443/?timeout=10s": service "missing" not found',
      );
    });

    it('hostile responses (wrong uid, not JSON, a patch that does not apply, a patch that changes the kind, a huge body) refuse the write and leave the server serving', async () => {
      const cases: [Handler, string][] = [
        [
          (_r) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'other', allowed: true } }),
          'received invalid webhook response: expected response.uid="',
        ],
        [() => ({ raw: '{not json' }), 'failed to call webhook'],
        [(r) => patch(r, [{ op: 'remove', path: '/nothing/here' }]), 'Internal error occurred: json patch operation 0'],
        [(r) => patch(r, [{ op: 'replace', path: '/kind', value: 'Secret' }]), "changed the object's apiVersion or kind"],
        [
          (r) =>
            allow(r, {
              patchType: 'JSONPatch',
              patch: b64(JSON.stringify([{ op: 'add', path: '/data/x', value: 'x'.repeat(7 * 1024 * 1024) }])),
            }),
          'larger than',
        ],
        [
          (r) => allow(r, { patch: b64('[]'), patchType: 'MergePatch' }),
          'received invalid webhook response: webhook returned invalid response.patchType of "MergePatch"',
        ],
        // What is not text in an answer is quoted as JSON, not as "[object Object]".
        [
          () => ({ apiVersion: { v: 1 }, kind: 'AdmissionReview', response: { allowed: true } }),
          'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {"v":1}, Kind=AdmissionReview',
        ],
        [(r) => patch(r, [{ op: 'replace', path: '/kind', value: { k: 1 } }]), String.raw`apiVersion or kind to "v1, Kind={\"k\":1}"`],
      ];
      await mutating('hostile', [{ ...webhook('hostile.example.com', '/hostile') }]);
      for (const [i, [handler, expected]] of cases.entries()) {
        hooks.handlers.set('/hostile', handler);
        const { code, status } = await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap(`hostile-${i}`) }));
        expect(code, expected).to.equal(500);
        expect(String(status.message), expected).to.include(expected);
      }
      const list = await c.core.listNamespacedConfigMap({ namespace: 'default' });
      expect(list.items.map((i) => i.metadata?.name)).to.not.include('hostile-0');
    });
  });

  describe('matching', () => {
    it('namespaceSelector, objectSelector and matchConditions choose the requests a webhook sees', async () => {
      await c.core.createNamespace({ body: { metadata: { name: 'watched', labels: { admission: 'on' } } } });
      hooks.handlers.set('/select', (r) => deny(r, 'selected', 403));
      await validating('select', [
        webhook('ns.example.com', '/select', { namespaceSelector: { matchLabels: { admission: 'on' } } }),
        webhook('obj.example.com', '/select', { objectSelector: { matchLabels: { guard: 'yes' } } }),
        webhook('cel.example.com', '/select', {
          matchConditions: [{ name: 'big', expression: "has(object.data) && 'big' in object.data" }],
        }),
      ]);
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('free', { small: '1' }) });
      expect(hooks.reviews).to.have.length(0);
      expect((await failure(c.core.createNamespacedConfigMap({ namespace: 'watched', body: configMap('ns') }))).status.message).to.include(
        '"ns.example.com" denied',
      );
      expect(
        (await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('obj', {}, { guard: 'yes' }) }))).status
          .message,
      ).to.include('"obj.example.com" denied');
      expect(
        (await failure(c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('cel', { big: '1' }) }))).status.message,
      ).to.include('"cel.example.com" denied');
    });

    it('rules match subresources only when named (configmaps vs pods/status), and never the webhook configurations themselves', async () => {
      hooks.handlers.set('/deny', (r) => deny(r, 'no', 403));
      await validating('everything', [
        webhook('all.example.com', '/deny', { rules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['*'] }] }),
      ]);
      // The configurations stay writable, so a broken webhook can be removed.
      await validating('second', [
        webhook('second.example.com', '/deny', { rules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['*'] }] }),
      ]);
      await admission.deleteValidatingWebhookConfiguration({ name: 'second' });
      created.splice(
        created.findIndex((x) => x.name === 'second'),
        1,
      );
      await admission.deleteValidatingWebhookConfiguration({ name: 'everything' });
      created.splice(
        created.findIndex((x) => x.name === 'everything'),
        1,
      );
      await c.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      });
      await validating('status-only', [
        webhook('status.example.com', '/deny', {
          rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], operations: ['UPDATE'] }],
        }),
      ]);
      await c.core.patchNamespacedPod(
        { name: 'p', namespace: 'default', body: { metadata: { labels: { a: 'b' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const { status } = await failure(
        c.core.patchNamespacedPodStatus(
          { name: 'p', namespace: 'default', body: { status: { message: 'x' } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ),
      );
      expect(status.message).to.include('"status.example.com" denied the request: no');
      const review = hooks.calls('/deny').at(-1)?.request;
      expect(review).to.deep.include({ subResource: 'status', requestSubResource: 'status' });
    });
  });

  describe('dry run', () => {
    it('a dryRun request reaches webhooks with dryRun true and stores nothing', async () => {
      await mutating('dry', [{ ...webhook('dry.example.com', '/dry'), sideEffects: 'NoneOnDryRun' }]);
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: configMap('dry'), dryRun: 'All' });
      expect(hooks.calls('/dry')[0]?.request.dryRun).to.equal(true);
      expect((await failure(c.core.readNamespacedConfigMap({ name: 'dry', namespace: 'default' }))).code).to.equal(404);
    });
  });

  describe('kubectl', () => {
    let session: KubectlSession | undefined;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip();
      session = await kubectlSession(c.server);
    });
    after(async () => session?.close());

    it('applies, lists and deletes webhook configurations, and prints a denial as the real server words it', async () => {
      const s = session as KubectlSession;
      hooks.handlers.set('/kubectl', (r) => deny(r, 'no configmaps today', 403));
      const manifest = {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'kubectl-hooks' },
        webhooks: [webhook('kubectl.example.com', '/kubectl')],
      };
      const { writeFile } = await import('node:fs/promises');
      const file = `${s.dir}/hooks.json`;
      await writeFile(file, JSON.stringify(manifest));
      expect(await s.kubectl('apply', '-f', file)).to.include(
        'validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-hooks created',
      );
      expect(await s.kubectl('get', 'validatingwebhookconfigurations')).to.match(/kubectl-hooks\s+1\s+/);
      const err = await s.kubectlOutput('create', 'configmap', 'today', '-n', 'default').then(
        () => '',
        (e: { stderr: string }) => e.stderr,
      );
      expect(err.trim()).to.equal(
        'error: failed to create configmap: admission webhook "kubectl.example.com" denied the request: no configmaps today',
      );
      expect(await s.kubectl('delete', '-f', file)).to.include('deleted');
    });
  });
});
