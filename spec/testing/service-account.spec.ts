import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import { GenericRetry } from '../../lib/processing/index.js';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { customResourceDefinition, descriptorOf } from '../../lib/kube/index.js';
import { createLogger } from '../../lib/observe/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

interface Gadget extends KubernetesObject {
  spec: { size: number };
  status?: { ready?: boolean };
}

const crd = customResourceDefinition({
  group: 'example.com',
  kind: 'Gadget',
  plural: 'gadgets',
  spec: { type: 'object', properties: { size: { type: 'integer' } } },
  status: { type: 'object', properties: { ready: { type: 'boolean' } } },
});
const GADGET = descriptorOf(crd);

const reconciler: Reconciler<Gadget> = {
  async reconcile(gadget) {
    return UpdateControl.patchStatus({ ...gadget, status: { ready: true } });
  },
};

/** What the operator's ServiceAccount may do: everything it needs but `patch` on gadgets/status. */
const RULES: k8s.V1PolicyRule[] = [
  { apiGroups: ['example.com'], resources: ['gadgets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

describe('testing: an operator under a ServiceAccount (startTestCluster kubeConfigFor, RBAC)', function () {
  this.timeout(30_000);
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [crd] });
  });
  afterEach(() => cluster.close());

  it('kubeConfigFor acts as the ServiceAccount: whoami, and 403 for what it is not granted', async () => {
    const kc = await cluster.kubeConfigFor({ serviceAccount: 'op', namespace: 'default' });
    const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).to.equal('system:serviceaccount:default:op');
    const err = await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedConfigMap({ namespace: 'default' })
      .then(
        () => undefined,
        (e: k8s.ApiException<string>) => e,
      );
    expect(err?.code).to.equal(403);
    expect((JSON.parse(err?.body ?? '{}') as { message?: string }).message).to.equal(
      'configmaps is forbidden: User "system:serviceaccount:default:op" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
  });

  it('an operator missing one verb fails with the 403 naming it in its log, and works once the verb is granted', async () => {
    const rbac = cluster.kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: 'gadget-operator' }, rules: RULES } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'gadget-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gadget-operator' },
        subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'default' }],
      },
    });
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const operator = cluster.operator({ kubeConfig: await cluster.kubeConfigFor({ serviceAccount: 'op' }), logger });
    operator.register(reconciler, {
      resource: GADGET,
      retry: GenericRetry.defaults().withInitialMs(50).withMaxMs(200).withMaxAttempts(1000),
    });
    await operator.start();
    await cluster.apply<Gadget>(GADGET, { metadata: { name: 'g', namespace: 'default' }, spec: { size: 1 } });

    const missing =
      'gadgets.example.com "g" is forbidden: User "system:serviceaccount:default:op" cannot patch resource "gadgets/status" in API group "example.com" in the namespace "default"';
    const errorsLogged = () => lines.map((l) => (JSON.parse(l) as { err?: { message?: string } }).err?.message ?? '');
    await eventually('the 403 in the operator log', () => errorsLogged().some((m) => m.endsWith(`403 Forbidden: ${missing}`)));

    await rbac.patchClusterRole({
      name: 'gadget-operator',
      body: [{ op: 'add', path: '/rules/-', value: { apiGroups: ['example.com'], resources: ['gadgets/status'], verbs: ['patch'] } }],
    });
    const gadgets = cluster.client.resource<Gadget>(GADGET);
    // The retries that follow succeed.
    await eventually(
      'status.ready once patch on gadgets/status is granted',
      async () => (await gadgets.get({ name: 'g', namespace: 'default' })).status?.ready,
    );
  });
});
