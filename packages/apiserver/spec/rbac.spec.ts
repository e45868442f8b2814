import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../src/index.js';
import { eventually, failure, kubectlAvailable, kubectlWith, raw, startWithClients, type Clients, tokenFor } from './helpers.js';

const SA = 'system:serviceaccount:default:op';

function rbacApi(kc: k8s.KubeConfig): k8s.RbacAuthorizationV1Api {
  return kc.makeApiClient(k8s.RbacAuthorizationV1Api);
}

/** A Role in `namespace` with `rules`, bound to ServiceAccount default/op. */
async function grant(kc: k8s.KubeConfig, name: string, rules: k8s.V1PolicyRule[], namespace = 'default'): Promise<void> {
  const rbac = rbacApi(kc);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'default' }],
    },
  });
}

describe('apiserver: RBAC with kubectl v1.32 (ServiceAccount tokens over HTTPS)', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let admin: string;
  let op: string;
  let kc: k8s.KubeConfig;

  const kubectl = kubectlWith;

  before(async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    // kubectl sends a bearer token over HTTPS only, so the server serves HTTPS (off loopback).
    server = await startApiServer({ host: '0.0.0.0', token: 'the-admin-token' });
    kc = server.kubeConfig();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-rbac-'));
    admin = join(dir, 'admin');
    op = join(dir, 'op');
    await server.writeKubeconfig(admin);
    expect((await kubectl(admin, 'create', 'serviceaccount', 'op')).code).to.equal(0);
    const token = await kubectl(admin, 'create', 'token', 'op');
    expect(token.out).to.match(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    await server.writeKubeconfig(op, { token: token.out });
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl auth whoami names the admin (system:masters) and the ServiceAccount with its groups (SelfSubjectReview v1)', async () => {
    const me = await kubectl(admin, 'auth', 'whoami', '-o', 'json');
    expect(JSON.parse(me.out)).to.deep.include({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    expect(JSON.parse(me.out).status.userInfo).to.deep.include({
      username: 'kubernetes-admin',
      groups: ['system:masters', 'system:authenticated'],
    });
    const sa = await kubectl(op, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}');
    expect(sa.out).to.equal(`${SA} ["system:serviceaccounts","system:serviceaccounts:default","system:authenticated"]`);
  });

  it('a ServiceAccount without bindings gets 403 in the real server wording (named object, list, cluster scope, subresource)', async () => {
    expect((await kubectl(op, 'get', 'deployment', 'x')).err).to.equal(
      `Error from server (Forbidden): deployments.apps "x" is forbidden: User "${SA}" cannot get resource "deployments" in API group "apps" in the namespace "default"`,
    );
    expect((await kubectl(op, 'get', 'configmaps')).err).to.equal(
      `Error from server (Forbidden): configmaps is forbidden: User "${SA}" cannot list resource "configmaps" in API group "" in the namespace "default"`,
    );
    expect((await kubectl(op, 'get', 'deployments', '-A')).err).to.equal(
      `Error from server (Forbidden): deployments.apps is forbidden: User "${SA}" cannot list resource "deployments" in API group "apps" at the cluster scope`,
    );
    expect((await kubectl(op, 'get', 'namespace', 'kube-system')).err).to.equal(
      `Error from server (Forbidden): namespaces "kube-system" is forbidden: User "${SA}" cannot get resource "namespaces" in API group "" in the namespace "kube-system"`,
    );
    expect((await kubectl(op, 'get', '--raw', '/metrics')).err).to.equal(
      `Error from server (Forbidden): forbidden: User "${SA}" cannot get path "/metrics"`,
    );
    // Discovery and the self reviews are every authenticated user's (system:discovery, system:basic-user).
    expect((await kubectl(op, 'api-versions')).out).to.contain('rbac.authorization.k8s.io/v1');
  });

  it('a bad token is 401 (kubectl: You must be logged in)', async () => {
    const r = await kubectl(admin, 'get', 'pods', '--token', 'not-a-token');
    expect(r.err).to.contain('error: You must be logged in to the server (Unauthorized)');
  });

  it('a Role + RoleBinding granting exactly one verb: kubectl auth can-i and the requests agree', async () => {
    await kubectl(admin, 'create', 'configmap', 'one', '--from-literal=k=v');
    expect((await kubectl(admin, 'create', 'role', 'get-cm', '--verb=get', '--resource=configmaps')).code).to.equal(0);
    expect((await kubectl(admin, 'create', 'rolebinding', 'get-cm', '--role=get-cm', '--serviceaccount=default:op')).code).to.equal(0);
    expect(await kubectl(op, 'auth', 'can-i', 'get', 'configmaps')).to.include({ code: 0, out: 'yes' });
    expect(await kubectl(op, 'auth', 'can-i', 'list', 'configmaps')).to.include({ code: 1, out: 'no' });
    expect(await kubectl(op, 'auth', 'can-i', 'get', 'configmaps', '-n', 'kube-system')).to.include({ out: 'no' });
    expect((await kubectl(op, 'get', 'configmap', 'one', '-o', 'jsonpath={.data.k}')).out).to.equal('v');
    expect((await kubectl(op, 'get', 'configmaps')).err).to.contain('cannot list resource "configmaps"');
    // The admin asks on the ServiceAccount's behalf (impersonation) and gets the same answers.
    expect((await kubectl(admin, 'auth', 'can-i', 'get', 'configmaps', '--as', SA)).out).to.equal('yes');
    expect((await kubectl(admin, 'auth', 'can-i', 'delete', 'configmaps', '--as', SA)).out).to.equal('no');
    const list = await kubectl(op, 'auth', 'can-i', '--list');
    expect(list.out).to.match(/^configmaps\s+\[\]\s+\[\]\s+\[get\]$/m);
    expect(list.out).to.match(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
  });

  it('resourceNames, subresources (deployments/scale, */status) and a ClusterRoleBinding for cluster scope', async () => {
    await grant(kc, 'named', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['allowed'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'patch'] },
      { apiGroups: ['*'], resources: ['*/status'], verbs: ['update'] },
    ]);
    await kubectl(admin, 'create', 'secret', 'generic', 'allowed', '--from-literal=a=b');
    await kubectl(admin, 'create', 'secret', 'generic', 'other', '--from-literal=a=b');
    expect((await kubectl(op, 'get', 'secret', 'allowed', '-o', 'name')).out).to.equal('secret/allowed');
    expect((await kubectl(op, 'get', 'secret', 'other')).err).to.contain(
      `secrets "other" is forbidden: User "${SA}" cannot get resource "secrets"`,
    );
    expect((await kubectl(op, 'auth', 'can-i', 'get', 'secret/allowed')).out).to.equal('yes');
    expect((await kubectl(op, 'auth', 'can-i', 'get', 'secrets')).out).to.equal('no');
    expect((await kubectl(op, 'auth', 'can-i', 'patch', 'deployments', '--subresource=scale')).out).to.equal('yes');
    expect((await kubectl(op, 'auth', 'can-i', 'patch', 'deployments')).out).to.equal('no');
    expect((await kubectl(op, 'auth', 'can-i', 'update', 'deployments', '--subresource=status')).out).to.equal('yes');
    await kubectl(admin, 'create', 'deployment', 'web', '--image=nginx:1.27');
    expect((await kubectl(op, 'scale', 'deployment', 'web', '--replicas=3')).err).to.contain(
      `deployments.apps "web" is forbidden: User "${SA}" cannot get resource "deployments" in API group "apps" in the namespace "default"`,
    );
    const apps = new k8s.KubeConfig();
    apps.loadFromFile(op);
    const scale = await apps.makeApiClient(k8s.AppsV1Api).readNamespacedDeploymentScale({ name: 'web', namespace: 'default' });
    expect(scale.spec?.replicas).to.equal(1);

    expect((await kubectl(op, 'get', 'namespaces')).err).to.contain(
      `namespaces is forbidden: User "${SA}" cannot list resource "namespaces" in API group "" at the cluster scope`,
    );
    await kubectl(admin, 'create', 'clusterrolebinding', 'op-view', '--clusterrole=view', '--serviceaccount=default:op');
    expect((await kubectl(op, 'get', 'namespaces', '-o', 'name')).out).to.contain('namespace/kube-system');
    expect((await kubectl(op, 'get', 'pods', '-n', 'kube-system')).code).to.equal(0);
    expect((await kubectl(op, 'auth', 'can-i', 'create', 'pods', '-n', 'kube-system')).out).to.equal('no');
  });

  it('a RoleBinding to a ClusterRole grants it in that namespace only', async () => {
    await kubectl(admin, 'create', 'namespace', 'team');
    await kubectl(admin, 'create', 'rolebinding', 'op-edit', '--clusterrole=edit', '--serviceaccount=default:op', '-n', 'team');
    expect((await kubectl(op, 'create', 'configmap', 'c', '-n', 'team')).code).to.equal(0);
    expect((await kubectl(op, 'create', 'configmap', 'c', '-n', 'default')).err).to.equal(
      `error: failed to create configmap: configmaps is forbidden: User "${SA}" cannot create resource "configmaps" in API group "" in the namespace "default"`,
    );
  });
});

describe('apiserver: RBAC objects, tokens and reviews (client-node)', function () {
  this.timeout(30_000);
  let c: Clients;
  let rbac: k8s.RbacAuthorizationV1Api;

  before(async () => {
    c = await startWithClients();
    rbac = rbacApi(c.kc);
  });
  after(() => c?.server.close());

  const asUser = (token: string) => c.server.kubeConfig({ token });

  it('validates Roles and bindings as the real server does (422 naming each field)', async () => {
    const badRole = await failure(
      rbac.createNamespacedRole({
        namespace: 'default',
        body: {
          metadata: { name: 'bad' },
          rules: [{ verbs: [] }, { verbs: ['get'], nonResourceURLs: ['/x'] }, { verbs: ['get'], apiGroups: [''] }],
        },
      }),
    );
    expect(badRole.code).to.equal(422);
    expect(badRole.status.message).to.equal(
      'Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource, rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs, rules[2].resources: Required value: resource rules must supply at least one resource]',
    );
    const badBinding = await failure(
      rbac.createClusterRoleBinding({
        body: {
          metadata: { name: 'bad' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' },
          subjects: [
            { kind: 'ServiceAccount', name: 'op' },
            { kind: 'Robot', name: 'r' },
          ],
        },
      }),
    );
    expect(badBinding.status.message).to.equal(
      'ClusterRoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]',
    );
    // apiGroup of roleRef and of User/Group subjects is defaulted; roleRef cannot change.
    const made = await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'rb' },
        roleRef: { kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'jane' }],
      },
    });
    expect(made.roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
    expect(made.subjects?.[0]?.apiGroup).to.equal('rbac.authorization.k8s.io');
    const changed = await failure(
      rbac.replaceNamespacedRoleBinding({
        name: 'rb',
        namespace: 'default',
        body: { ...made, roleRef: { ...made.roleRef, name: 'edit' } },
      }),
    );
    expect(changed.code).to.equal(422);
    expect(changed.status.message).to.match(
      /^RoleBinding\.rbac\.authorization\.k8s\.io "rb" is invalid: roleRef: Invalid value: .*: cannot change roleRef$/,
    );
  });

  it('serves the default ClusterRoles, and aggregates labelled ClusterRoles into view, edit and admin', async () => {
    const names = (await rbac.listClusterRole()).items.map((r) => r.metadata?.name);
    expect(names).to.include.members(['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user']);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
      },
    });
    for (const role of ['view', 'edit', 'admin']) {
      await eventually(
        async () => (await rbac.readClusterRole({ name: role })).rules?.some((r) => r.resources?.includes('widgets')),
        `widgets in ${role}`,
      );
    }
  });

  it('view and edit cover the workload kinds served: StatefulSets, ReplicaSets, ControllerRevisions, Jobs, CronJobs, claims, Endpoints, EndpointSlices', async () => {
    for (const role of ['view', 'edit']) {
      await rbac.createNamespacedRoleBinding({
        namespace: 'default',
        body: {
          metadata: { name: `${role}-workloads` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
          subjects: [{ kind: 'User', name: `${role}-user` }],
        },
      });
    }
    const authz = c.kc.makeApiClient(k8s.AuthorizationV1Api);
    const may = async (user: string, verb: string, group: string, resource: string, subresource = '') =>
      (
        await authz.createSubjectAccessReview({
          body: { spec: { user, resourceAttributes: { verb, group, resource, subresource, namespace: 'default' } } },
        })
      ).status?.allowed;
    const read: [string, string, string?][] = [
      ['apps', 'statefulsets'],
      ['apps', 'statefulsets', 'scale'],
      ['apps', 'replicasets'],
      ['apps', 'controllerrevisions'],
      ['batch', 'jobs'],
      ['batch', 'cronjobs', 'status'],
      ['', 'persistentvolumeclaims'],
      ['', 'endpoints'],
      ['discovery.k8s.io', 'endpointslices'],
    ];
    for (const [group, resource, sub] of read)
      expect(await may('view-user', 'list', group, resource, sub), `view: list ${resource}/${sub ?? ''}`).to.equal(true);
    const written: [string, string, string?][] = [
      ['apps', 'statefulsets'],
      ['apps', 'statefulsets', 'scale'],
      ['apps', 'replicasets'],
      ['batch', 'jobs'],
      ['batch', 'cronjobs'],
      ['', 'persistentvolumeclaims'],
    ];
    for (const [group, resource, sub] of written) {
      expect(await may('edit-user', 'create', group, resource, sub), `edit: create ${resource}`).to.equal(true);
      expect(await may('view-user', 'create', group, resource, sub), `view: create ${resource}`).to.equal(false);
    }
  });

  it('TokenRequest: defaults, limits, 404 for a missing ServiceAccount; the token stops working with its ServiceAccount', async () => {
    await c.core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'short' } } });
    const request = await c.core.createNamespacedServiceAccountToken({
      name: 'short',
      namespace: 'default',
      body: { spec: { audiences: [] } },
    });
    expect(request.spec?.expirationSeconds).to.equal(3600);
    expect(request.spec?.audiences).to.deep.equal(['https://kubernetes.default.svc.cluster.local']);
    const tooShort = await failure(
      c.core.createNamespacedServiceAccountToken({
        name: 'short',
        namespace: 'default',
        body: { spec: { audiences: [], expirationSeconds: 60 } },
      }),
    );
    expect(tooShort.status.message).to.equal(
      'TokenRequest.authentication.k8s.io "short" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    const missing = await failure(
      c.core.createNamespacedServiceAccountToken({ name: 'nobody', namespace: 'default', body: { spec: { audiences: [] } } }),
    );
    expect(missing).to.deep.include({ code: 404 });
    expect(missing.status.message).to.equal('serviceaccounts "nobody" not found');
    // A token for another audience is not for the API server.
    const other = await c.core.createNamespacedServiceAccountToken({
      name: 'short',
      namespace: 'default',
      body: { spec: { audiences: ['vault'] } },
    });
    expect((await raw(c.server, 'GET', '/api', undefined, { authorization: `Bearer ${other.status?.token}` })).status).to.equal(401);

    const token = request.status?.token as string;
    expect((await raw(c.server, 'GET', '/api', undefined, { authorization: `Bearer ${token}` })).status).to.equal(200);
    await c.core.deleteNamespacedServiceAccount({ name: 'short', namespace: 'default' });
    const after = await raw(c.server, 'GET', '/api', undefined, { authorization: `Bearer ${token}` });
    expect(after.status).to.equal(401);
    expect(after.json).to.deep.include({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized', code: 401 });
  });

  it('with a server token, a request without credentials is 401; the token is the admin', async () => {
    const server = await startApiServer({ token: 'secret', clientNode: false });
    try {
      expect((await raw(server, 'GET', '/api/v1/namespaces', undefined, { authorization: undefined })).status).to.equal(401);
      const review = await raw(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', '{}');
      expect(review.status).to.equal(201);
      expect(review.json).to.deep.include({
        status: { userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] } },
      });
    } finally {
      await server.close();
    }
  });

  it('SelfSubjectAccessReview and SubjectAccessReview answer with the reason; a binding to a missing role is named in the 403', async () => {
    const token = await tokenFor(c.core, 'reviewer');
    const review = (attrs: Record<string, unknown>) =>
      asUser(token)
        .makeApiClient(k8s.AuthorizationV1Api)
        .createSelfSubjectAccessReview({ body: { spec: attrs } });
    const before = await review({ resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } });
    expect(before.status).to.deep.equal({ allowed: false });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'reviewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'reviewer' }],
      },
    });
    const allowed = await review({ resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } });
    expect(allowed.status).to.deep.equal({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "reviewer/default" of ClusterRole "view" to ServiceAccount "reviewer/default"',
    });
    const path = await review({ nonResourceAttributes: { verb: 'get', path: '/version' } });
    expect(path.status?.allowed).to.equal(true);
    const neither = await failure(review({}));
    expect(neither.status.message).to.equal(
      'SelfSubjectAccessReview.authorization.k8s.io is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    // The admin asks about someone else.
    const sar = await c.kc.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
      body: {
        spec: {
          user: 'system:serviceaccount:default:reviewer',
          groups: ['system:serviceaccounts'],
          resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'default' },
        },
      },
    });
    expect(sar.status?.allowed).to.equal(false);
    // Only the admin may: the ServiceAccount gets 403 for it.
    const denied = await failure(
      asUser(token)
        .makeApiClient(k8s.AuthorizationV1Api)
        .createSubjectAccessReview({ body: { spec: { user: 'x', resourceAttributes: { verb: 'get' } } } }),
    );
    expect(denied.code).to.equal(403);
    expect(denied.status).to.deep.include({
      reason: 'Forbidden',
      details: { group: 'authorization.k8s.io', kind: 'subjectaccessreviews' },
    });

    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'dangling' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'missing' },
        subjects: [{ kind: 'ServiceAccount', name: 'reviewer' }],
      },
    });
    const forbidden = await failure(asUser(token).makeApiClient(k8s.CoreV1Api).deleteNamespacedPod({ name: 'p', namespace: 'default' }));
    expect(forbidden.status.message).to.equal(
      'pods "p" is forbidden: User "system:serviceaccount:default:reviewer" cannot delete resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "missing" not found',
    );
  });

  it('a list or watch with fieldSelector metadata.name=x is for the object x (resourceNames)', async () => {
    const token = await tokenFor(c.core, 'one-cm');
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: {
        metadata: { name: 'one-cm' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['mine'], verbs: ['list', 'watch'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'one-cm' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'one-cm' },
        subjects: [{ kind: 'ServiceAccount', name: 'one-cm' }],
      },
    });
    const list = (selector?: string) =>
      raw(
        c.server,
        'GET',
        `/api/v1/namespaces/default/configmaps${selector ? `?fieldSelector=${encodeURIComponent(selector)}` : ''}`,
        undefined,
        { authorization: `Bearer ${token}` },
      );
    expect((await list('metadata.name=mine')).status).to.equal(200);
    const other = await list('metadata.name=other');
    expect(other.status).to.equal(403);
    expect((other.json as { message: string }).message).to.match(/^configmaps "other" is forbidden: .* cannot list resource "configmaps"/);
    expect((await list()).status).to.equal(403);
  });

  it('a kubeconfig file with a token is refused over plain HTTP, where kubectl would drop the token and act as the admin', async () => {
    const error = await c.server.writeKubeconfig(join(tmpdir(), 'never-written'), { token: 'x' }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.match(/kubectl sends tokens over HTTPS only/);
    expect(() => c.server.kubeconfigYaml({ token: 'x' })).to.throw(/start the server with `tls` or off loopback/);
  });

  it('a server-side apply or a PUT that creates needs create as well as patch or update (as the real server authorizes it); one to an existing object does not', async () => {
    const token = await tokenFor(c.core, 'applier');
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: {
        metadata: { name: 'applier' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'applier' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'applier' },
        subjects: [{ kind: 'ServiceAccount', name: 'applier' }],
      },
    });
    const as = { authorization: `Bearer ${token}` };
    const apply = (name: string) =>
      raw(
        c.server,
        'PATCH',
        `/api/v1/namespaces/default/configmaps/${name}?fieldManager=applier`,
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } }),
        {
          ...as,
          'content-type': 'application/apply-patch+yaml',
        },
      );
    const refused = await apply('new');
    expect(refused.status).to.equal(403);
    expect((refused.json as { message: string }).message).to.equal(
      'configmaps "new" is forbidden: User "system:serviceaccount:default:applier" cannot create resource "configmaps" in API group "" in the namespace "default"',
    );
    expect(
      await c.core.readNamespacedConfigMap({ namespace: 'default', name: 'new' }).then(
        () => 'exists',
        () => 'absent',
      ),
      'nothing created',
    ).to.equal('absent');
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'there' } } });
    expect((await apply('there')).status, 'an apply to an existing object is a patch only').to.equal(200);
    // Leases are created by a PUT (createOnUpdate): the same rule.
    const put = (name: string) =>
      raw(
        c.server,
        'PUT',
        `/apis/coordination.k8s.io/v1/namespaces/default/leases/${name}`,
        JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name } }),
        as,
      );
    const putRefused = await put('l');
    expect(putRefused.status).to.equal(403);
    expect((putRefused.json as { message: string }).message).to.contain(
      'cannot create resource "leases" in API group "coordination.k8s.io"',
    );
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: {
        metadata: { name: 'applier-create' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'applier-create' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'applier-create' },
        subjects: [{ kind: 'ServiceAccount', name: 'applier' }],
      },
    });
    expect((await apply('new')).status, 'with create too').to.equal(201);
    expect((await put('l')).status).to.equal(201);
  });

  it('Impersonate-User needs the impersonate verb', async () => {
    const token = await tokenFor(c.core, 'imp');
    const r = await raw(c.server, 'GET', '/api/v1/namespaces/default/pods', undefined, {
      authorization: `Bearer ${token}`,
      'impersonate-user': 'jane',
    });
    expect(r.status).to.equal(403);
    expect((r.json as { message: string }).message).to.equal(
      'users "jane" is forbidden: User "system:serviceaccount:default:imp" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});
