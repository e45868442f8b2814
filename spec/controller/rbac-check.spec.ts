/**
 * The operator's RBAC checked at start (one SelfSubjectAccessReview per verb it needs), on the
 * embedded server under a ServiceAccount: a missing rule is a warning naming verb, resource and
 * the rule to add, and a failing `rbac` readiness check, until it is granted.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { RbacCheck, rbacNeeds } from '../../lib/controller/rbac-check.js';
import { resolveControllerConfig, type ResolvedControllerConfig } from '../../lib/controller/config.js';
import { builtinResources, createKubeClient, customResourceDefinition, descriptorOf } from '../../lib/kube/index.js';
import { createLogger } from '../../lib/observe/index.js';
import { GenericRetry } from '../../lib/processing/index.js';
import { eventually } from '../../lib/testing/index.js';
import { rbacUsage, startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

interface Note extends KubernetesObject {
  spec: { text: string };
}
type ConfigMap = V1ConfigMap & KubernetesObject;

const noteCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Note',
  plural: 'notes',
  spec: { type: 'object', properties: { text: { type: 'string' } } },
});
const NOTE = descriptorOf(noteCrd);

const notes: Reconciler<Note> = {
  async reconcile(note, ctx) {
    await ctx.secondaryClient<ConfigMap>('configmaps').apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${note.metadata!.name}-note`, namespace: note.metadata!.namespace! },
      data: { text: note.spec.text },
    });
    return UpdateControl.noUpdate();
  },
};
const config = { resource: NOTE, secondaries: [{ resource: builtinResources.configMap, writes: ['apply' as const] }] };

/** What a hand-written Role might give the Note operator: everything but `create` on ConfigMaps. */
const WITHOUT_CREATE: k8s.V1PolicyRule[] = [
  { apiGroups: ['example.com'], resources: ['notes'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: ['example.com'], resources: ['notes/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];
const MISSING = `cannot create resource "configmaps" in API group "" at the cluster scope: add the rule { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] } to the operator's ClusterRole`;

describe('the operator checks its RBAC at start (SelfSubjectAccessReview per verb)', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let rbac: k8s.RbacAuthorizationV1Api;

  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [noteCrd] });
    rbac = cluster.kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api);
    await grant('notes', WITHOUT_CREATE);
  });
  afterEach(() => cluster.close());

  async function grant(name: string, rules: k8s.V1PolicyRule[]) {
    await rbac.createClusterRole({ body: { metadata: { name }, rules } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name: 'notes', namespace: 'default' }],
      },
    });
  }
  const captured = () => {
    const lines: { level: number; msg: string; err?: { message?: string } }[] = [];
    return {
      lines,
      logger: createLogger({
        level: 'info',
        destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
      }),
    };
  };

  it('a Role without one verb the registration needs: started anyway, a warning naming verb, resource and rule, /readyz failing on rbac; the run then meets the 403', async () => {
    const log = captured();
    const operator = cluster.operator({
      kubeConfig: await cluster.kubeConfigFor({ serviceAccount: 'notes' }),
      logger: log.logger,
      name: 'notes',
      health: { port: 0, host: '127.0.0.1' },
    });
    operator.register(notes, { ...config, retry: GenericRetry.defaults().withInitialMs(50).withMaxMs(100).withMaxAttempts(2) });
    await operator.start();

    const warnings = log.lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).to.deep.equal([`RBAC: ${MISSING}`]);
    const ready = await fetch(`${operator.healthUrl}/readyz`);
    expect(ready.status).to.equal(503);
    expect(await ready.text())
      .to.include(`[-]rbac failed: RBAC: ${MISSING}`)
      .and.include('[+]notes.example.com ok');

    // What the warning foretold: a server-side apply that creates needs create, as on a real cluster.
    await cluster.apply<Note>(NOTE, { metadata: { name: 'n', namespace: 'default' }, spec: { text: 't' } });
    await eventually('the 403 of the apply in the log', () =>
      log.lines.some((l) =>
        (l.err?.message ?? '').includes(
          'configmaps "n-note" is forbidden: User "system:serviceaccount:default:notes" cannot create resource "configmaps"',
        ),
      ),
    );
    // The request log has the refused create too, so rbacUsage lists the 403 the operator met.
    const rules = WITHOUT_CREATE.map((r) => ({ apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], verbs: r.verbs }));
    expect(rbacUsage(rules, cluster.server.requests.entries(), { userAgent: operator.client.userAgent }).uncovered).to.deep.equal([
      'create configmaps in default',
    ]);
  });

  it('under rules that grant everything it registered: no warning and /readyz ok; checkRbac: false asks nothing', async () => {
    await grant('notes-create', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }]);
    const log = captured();
    const operator = cluster.operator({
      kubeConfig: await cluster.kubeConfigFor({ serviceAccount: 'notes' }),
      logger: log.logger,
      name: 'notes',
      health: { port: 0, host: '127.0.0.1' },
    });
    operator.register(notes, config);
    cluster.server.requests.reset();
    await operator.start();
    expect(log.lines.filter((l) => l.level >= 40)).to.deep.equal([]);
    const ready = await fetch(`${operator.healthUrl}/readyz`);
    expect(await ready.text()).to.include('[+]rbac ok');
    // One per verb: notes get, list, watch, patch; notes/status patch; configmaps get, list, watch, create, patch; events create, patch.
    expect(cluster.server.requests.count({ verb: 'create', resource: 'selfsubjectaccessreviews' })).to.equal(12);

    const unchecked = cluster.operator({
      kubeConfig: await cluster.kubeConfigFor({ serviceAccount: 'notes' }),
      checkRbac: false,
      health: { port: 0, host: '127.0.0.1' },
    });
    unchecked.register(notes, { ...config, name: 'unchecked' });
    cluster.server.requests.reset();
    await unchecked.start();
    expect(cluster.server.requests.count({ resource: 'selfsubjectaccessreviews' })).to.equal(0);
    expect(await (await fetch(`${unchecked.healthUrl}/readyz`)).text()).not.to.include('rbac');
  });

  it('readiness asks again for what was missing, at most every 30 s: a binding applied after the start makes it ready, logged once', async () => {
    const log = captured();
    let now = 0;
    const client = createKubeClient(await cluster.kubeConfigFor({ serviceAccount: 'notes' }));
    const check = new RbacCheck(
      client,
      rbacNeeds({ controllers: [resolveControllerConfig(notes, config) as unknown as ResolvedControllerConfig<KubernetesObject>] }),
      log.logger,
      () => now,
    );
    expect((await check.run()).map((n) => `${n.verb} ${n.resource}`)).to.deep.equal(['create configmaps']);
    await grant('notes-create', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }]);
    now = 29_999;
    expect(await check.readiness(), 'not asked again yet').to.deep.include({ ok: false });
    now = 30_000;
    expect(await check.readiness()).to.deep.equal({ ok: true });
    expect(log.lines.map((l) => l.msg)).to.deep.equal([`RBAC: ${MISSING}`, 'RBAC: now allowed to create configmaps']);
  });
});
