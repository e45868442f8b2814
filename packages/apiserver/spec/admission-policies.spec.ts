/**
 * ValidatingAdmissionPolicy and its binding on the embedded server (admissionregistration.k8s.io/v1,
 * as Kubernetes 1.30+): CEL validations over object, oldObject, request and params, with the
 * real denial wording, seen through client-node and kubectl.
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { failure, kubectlAvailable, kubectlSession, raw, startWithClients, type Clients } from './helpers.js';

describe('validating admission policies', function () {
  this.timeout(30_000);
  let c: Clients;
  let admission: k8s.AdmissionregistrationV1Api;
  const cleanup: (() => Promise<unknown>)[] = [];

  before(async () => {
    c = await startWithClients();
    admission = c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  });
  after(async () => c.server.close());
  afterEach(async () => {
    for (const undo of cleanup.splice(0).reverse()) await undo();
  });

  const configMapRules: k8s.V1NamedRuleWithOperations[] = [
    { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE'] },
  ];

  async function policy(
    name: string,
    spec: Partial<k8s.V1ValidatingAdmissionPolicySpec>,
    binding: Partial<k8s.V1ValidatingAdmissionPolicyBindingSpec> = {},
  ): Promise<void> {
    await admission.createValidatingAdmissionPolicy({
      body: { metadata: { name }, spec: { matchConstraints: { resourceRules: configMapRules }, ...spec } },
    });
    cleanup.push(() => admission.deleteValidatingAdmissionPolicy({ name }));
    await admission.createValidatingAdmissionPolicyBinding({
      body: { metadata: { name: `${name}-binding` }, spec: { policyName: name, validationActions: ['Deny'], ...binding } },
    });
    cleanup.push(() => admission.deleteValidatingAdmissionPolicyBinding({ name: `${name}-binding` }));
  }

  const cm = (name: string, data: Record<string, string>, namespace = 'default'): Promise<k8s.V1ConfigMap> =>
    c.core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data } });

  it('a ValidatingAdmissionPolicy denies by CEL with the real wording (422, "failed expression" without a message)', async () => {
    await policy('max-keys', { validations: [{ expression: '!has(object.data) || size(object.data) <= 2' }] });
    await cm('small', { a: '1' });
    const { code, status } = await failure(cm('big', { a: '1', b: '2', c: '3' }));
    expect(code).to.equal(422);
    expect(status.reason).to.equal('Invalid');
    expect(status.message).to.equal(
      `configmaps "big" is invalid: : ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: failed expression: !has(object.data) || size(object.data) <= 2`,
    );
    if (!(await kubectlAvailable())) return;
    const session = await kubectlSession(c.server);
    try {
      const err = await session
        .kubectlOutput('create', 'configmap', 'big2', '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3')
        .then(
          () => '',
          (e: { stderr: string }) => e.stderr,
        );
      expect(err.trim()).to.equal(
        `error: failed to create configmap: configmaps "big2" is invalid: : ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: failed expression: !has(object.data) || size(object.data) <= 2`,
      );
    } finally {
      await session.close();
    }
  });

  it('message, messageExpression, reason, oldObject and request are used as the real server uses them', async () => {
    await policy('immutable', {
      validations: [
        {
          expression: "request.operation != 'UPDATE' || object.data == oldObject.data",
          messageExpression: "'data of ' + object.metadata.name + ' may not change'",
          reason: 'Forbidden',
        },
        { expression: "object.metadata.name != 'reserved'", message: 'the name is reserved' },
      ],
    });
    await cm('fixed', { a: '1' });
    const update = await failure(
      c.core.patchNamespacedConfigMap(
        { name: 'fixed', namespace: 'default', body: { data: { a: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      ),
    );
    expect(update.code).to.equal(403);
    expect(update.status.message).to.equal(
      `configmaps "fixed" is forbidden: ValidatingAdmissionPolicy 'immutable' with binding 'immutable-binding' denied request: data of fixed may not change`,
    );
    expect((await failure(cm('reserved', {}))).status.message).to.include('denied request: the name is reserved');
  });

  it('params from paramKind and paramRef, variables, and a binding that only warns', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'limits' }, data: { max: '1' } } });
    cleanup.push(() => c.core.deleteNamespacedConfigMap({ name: 'limits', namespace: 'default' }));
    await policy(
      'param-limit',
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        variables: [{ name: 'count', expression: 'has(object.data) ? size(object.data) : 0' }],
        validations: [
          { expression: 'variables.count <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' keys'" },
        ],
        matchConditions: [{ name: 'not-the-params', expression: "object.metadata.name != 'limits'" }],
      },
      { paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' }, validationActions: ['Warn'] },
    );
    const res = await raw(
      c.server,
      'POST',
      '/api/v1/namespaces/default/configmaps',
      JSON.stringify({ metadata: { name: 'warned' }, data: { a: '1', b: '2' } }),
    );
    expect(res.status).to.equal(201);
    expect(String(res.headers.warning)).to.include(
      `Validation failed for ValidatingAdmissionPolicy 'param-limit' with binding 'param-limit-binding': at most 1 keys`,
    );
  });

  it('an expression error follows failurePolicy: Fail denies, Ignore admits', async () => {
    await policy('broken', { failurePolicy: 'Fail', validations: [{ expression: "object.data.missing == 'x'" }] });
    const { status } = await failure(cm('errs', { a: '1' }));
    expect(status.message).to.include(
      `ValidatingAdmissionPolicy 'broken' with binding 'broken-binding' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing`,
    );
    await admission.patchValidatingAdmissionPolicy(
      { name: 'broken', body: [{ op: 'replace', path: '/spec/failurePolicy', value: 'Ignore' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    await cm('errs', { a: '1' });
  });

  it("a binding's matchResources narrows the policy to namespaces its selector picks", async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'strict', labels: { policy: 'strict' } } } });
    await policy(
      'no-data',
      { validations: [{ expression: '!has(object.data)', message: 'no data here' }] },
      { matchResources: { namespaceSelector: { matchLabels: { policy: 'strict' } } } },
    );
    await cm('free', { a: '1' });
    expect((await failure(cm('strict', { a: '1' }, 'strict'))).status.message).to.include('no data here');
  });

  it('policies and bindings are validated when written: expressions compile, validations and validationActions required', async () => {
    const bad = await failure(
      admission.createValidatingAdmissionPolicy({
        body: {
          metadata: { name: 'bad' },
          spec: { matchConstraints: { resourceRules: configMapRules }, validations: [{ expression: 'object.nope(' }] },
        },
      }),
    );
    expect(bad.code).to.equal(422);
    expect(String(bad.status.message)).to.include(
      'spec.validations[0].expression: Invalid value: "object.nope(": compilation failed: ERROR: Syntax error',
    );
    const empty = await failure(
      admission.createValidatingAdmissionPolicy({
        body: { metadata: { name: 'empty' }, spec: { matchConstraints: { resourceRules: configMapRules } } },
      }),
    );
    expect(String(empty.status.message)).to.include(
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    );
    const binding = await failure(
      admission.createValidatingAdmissionPolicyBinding({
        body: { metadata: { name: 'b' }, spec: { policyName: 'x', validationActions: [] } },
      }),
    );
    expect(String(binding.status.message)).to.include('spec.validationActions: Required value: at least one validation action is required');
  });
});
