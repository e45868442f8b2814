import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../src/index.js';
import { failure, kubectlAvailable, kubectlWith, tokenFor } from './helpers.js';

const RBAC = 'rbac.authorization.k8s.io';
const GROUPS = '["system:serviceaccounts" "system:serviceaccounts:default" "system:authenticated"]';

/** The real server's escalation message (pkg/registry/rbac/validation ConfirmNoEscalation). */
function notHeld(resource: string, name: string, sa: string, missing: string[]): string {
  return `${resource}.${RBAC} "${name}" is forbidden: user "system:serviceaccount:default:${sa}" (groups=${GROUPS}) is attempting to grant RBAC permissions not currently held:\n${missing.join('\n')}`;
}

const clusterRole = (name: string, rules: k8s.V1PolicyRule[], extra: Partial<k8s.V1ClusterRole> = {}): k8s.V1ClusterRole => ({
  metadata: { name },
  rules,
  ...extra,
});
const roleRef = (kind: 'Role' | 'ClusterRole', name: string): k8s.V1RoleRef => ({ apiGroup: RBAC, kind, name });

describe('apiserver: RBAC escalation prevention, as the real RBAC storage (ServiceAccount tokens)', function () {
  this.timeout(90_000);
  let server: ApiServer;
  let core: k8s.CoreV1Api;
  let admin: k8s.RbacAuthorizationV1Api;
  let dir: string;

  /** A ServiceAccount's RBAC client, and its kubeconfig file for kubectl. */
  async function serviceAccount(name: string): Promise<{ rbac: k8s.RbacAuthorizationV1Api; kubeconfig: string }> {
    const token = await tokenFor(core, name);
    const kc = server.kubeConfig({ token });
    const kubeconfig = join(dir, name);
    await server.writeKubeconfig(kubeconfig, { token });
    return { rbac: kc.makeApiClient(k8s.RbacAuthorizationV1Api), kubeconfig };
  }

  const subjects = (sa: string): k8s.RbacV1Subject[] => [{ kind: 'ServiceAccount', name: sa, namespace: 'default' }];

  /** Grants ServiceAccount default/`sa` `rules` everywhere (a ClusterRole and a ClusterRoleBinding, made by the admin). */
  async function grantCluster(sa: string, name: string, rules: k8s.V1PolicyRule[]): Promise<void> {
    await admin.createClusterRole({ body: clusterRole(name, rules) });
    await admin.createClusterRoleBinding({ body: { metadata: { name }, roleRef: roleRef('ClusterRole', name), subjects: subjects(sa) } });
  }

  /** Grants ServiceAccount default/`sa` `rules` in `namespace` (a Role and a RoleBinding, made by the admin). */
  async function grantIn(namespace: string, sa: string, name: string, rules: k8s.V1PolicyRule[]): Promise<void> {
    await admin.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
    await admin.createNamespacedRoleBinding({
      namespace,
      body: { metadata: { name }, roleRef: roleRef('Role', name), subjects: subjects(sa) },
    });
  }

  before(async function () {
    // kubectl sends a bearer token over HTTPS only, so the server serves HTTPS (off loopback).
    server = await startApiServer({ host: '0.0.0.0', token: 'the-admin-token' });
    core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    admin = server.kubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    dir = await mkdtemp(join(tmpdir(), 'rxkube-escalation-'));
    await core.createNamespace({ body: { metadata: { name: 'elsewhere' } } });
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a ClusterRole granting rights its author lacks with 403 naming them in the real wording, and allows it once held', async () => {
    await grantCluster('maker', 'maker', [
      { apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    const { rbac } = await serviceAccount('maker');
    const wanted = [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: ['get'] },
    ];
    const refused = await failure(rbac.createClusterRole({ body: clusterRole('reader', wanted) }));
    expect(refused.code).to.equal(403);
    expect(refused.status).to.deep.include({ reason: 'Forbidden', details: { name: 'reader', group: RBAC, kind: 'clusterroles' } });
    expect(refused.status.message).to.equal(
      notHeld('clusterroles', 'reader', 'maker', [
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["watch"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
        '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}',
        '{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["get"]}',
      ]),
    );
    expect((await failure(admin.readClusterRole({ name: 'reader' }))).code).to.equal(404);
    // Server-side apply creates through the same check.
    const applied = await failure(
      rbac.patchClusterRole(
        {
          name: 'reader',
          body: { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', ...clusterRole('reader', wanted) },
          fieldManager: 'test',
          force: true,
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
      ),
    );
    expect(applied.status.message).to.equal(refused.status.message);
    // A dry run is checked too; the rights it holds it may grant.
    expect((await failure(rbac.createClusterRole({ body: clusterRole('reader', wanted), dryRun: 'All' }))).code).to.equal(403);
    const held = await rbac.createClusterRole({
      body: clusterRole('reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'get'] }]),
    });
    expect(held.metadata?.uid).to.be.a('string');
  });

  it('a rule that breaks down into hundreds of thousands is refused naming the first 100 missing, or allowed at once when one held rule covers it whole', async () => {
    await grantCluster('wide', 'wide', [
      { apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create'] },
      { apiGroups: ['*'], resources: ['*'], verbs: ['get'] },
    ]);
    const { rbac } = await serviceAccount('wide');
    const many = (prefix: string) => Array.from({ length: 600 }, (_, i) => `${prefix}${i}`);
    // 600 groups × 600 resources: 360,000 rules broken down, none held for `list`.
    const refused = await failure(
      rbac.createClusterRole({ body: clusterRole('wide-list', [{ apiGroups: many('g'), resources: many('r'), verbs: ['list'] }]) }),
    );
    expect(refused.code).to.equal(403);
    const lines = String(refused.status.message).split('\n');
    expect(lines.length).to.equal(1 + 100 + 1);
    expect(lines[1]).to.match(/^\{APIGroups:\["g\d+"\], Resources:\["r\d+"\], Verbs:\["list"\]\}$/);
    expect(lines.at(-1)).to.equal('(and more, not listed)');
    const allowed = await rbac.createClusterRole({
      body: clusterRole('wide-get', [{ apiGroups: many('g'), resources: many('r'), verbs: ['get'] }]),
    });
    expect(allowed.metadata?.uid).to.be.a('string');
  });

  it('checks a Role against the rights held in its namespace: resourceNames and subresources rule by rule, `*` covering all', async () => {
    await grantCluster('ns-maker', 'ns-maker', [{ apiGroups: [RBAC], resources: ['roles'], verbs: ['create'] }]);
    await grantIn('default', 'ns-maker', 'ns-maker', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'b'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['*'], verbs: ['get'] },
    ]);
    const { rbac } = await serviceAccount('ns-maker');
    const create = (namespace: string, name: string, rules: k8s.V1PolicyRule[]) =>
      rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
    await create('default', 'cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
    await create('default', 'secret-a', [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['a'], verbs: ['get'] }]);
    await create('default', 'scale', [{ apiGroups: ['apps'], resources: ['deployments/scale', 'statefulsets'], verbs: ['get'] }]);
    const otherName = await failure(
      create('default', 'secret-c', [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'c'], verbs: ['get'] }]),
    );
    expect(otherName.status.message).to.equal(
      notHeld('roles', 'secret-c', 'ns-maker', ['{APIGroups:[""], Resources:["secrets"], ResourceNames:["c"], Verbs:["get"]}']),
    );
    const allSecrets = await failure(create('default', 'secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]));
    expect(allSecrets.status.message).to.equal(
      notHeld('roles', 'secrets', 'ns-maker', ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']),
    );
    // The same rules in a namespace where it holds nothing.
    const elsewhere = await failure(create('elsewhere', 'cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]));
    expect(elsewhere.status.message).to.equal(
      notHeld('roles', 'cm', 'ns-maker', ['{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}']),
    );
  });

  it('covers nonResourceURLs by prefix and refuses a wildcard rule that is wider than the one held', async () => {
    await grantCluster('wild', 'wild', [
      { apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create'] },
      { apiGroups: ['*'], resources: ['*'], verbs: ['get'] },
      { nonResourceURLs: ['/logs/*'], verbs: ['get'] },
    ]);
    const { rbac } = await serviceAccount('wild');
    await rbac.createClusterRole({
      body: clusterRole('narrow', [
        { apiGroups: ['example.com'], resources: ['widgets', 'widgets/status'], verbs: ['get'] },
        // /version from system:discovery, which every authenticated user holds.
        { nonResourceURLs: ['/logs/app', '/logs/*', '/version'], verbs: ['get'] },
      ]),
    });
    const wider = await failure(
      rbac.createClusterRole({
        body: clusterRole('wider', [
          { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
          { nonResourceURLs: ['/metrics'], verbs: ['get'] },
        ]),
      }),
    );
    expect(wider.status.message).to.equal(
      notHeld('clusterroles', 'wider', 'wild', [
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
      ]),
    );
  });

  it('the escalate verb lets a ServiceAccount write rules it lacks; with resourceNames only where the path names the role (not on create)', async () => {
    await grantCluster('escalator', 'escalator', [{ apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create', 'escalate'] }]);
    const escalator = await serviceAccount('escalator');
    await escalator.rbac.createClusterRole({
      body: clusterRole('all-secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }]),
    });

    await grantCluster('named-escalator', 'named-escalator', [
      { apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create', 'get', 'update'] },
      { apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: ['mine'], verbs: ['escalate'] },
    ]);
    const named = await serviceAccount('named-escalator');
    const secrets = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
    const created = await failure(named.rbac.createClusterRole({ body: clusterRole('mine', secrets) }));
    expect(created.status.message).to.equal(
      notHeld('clusterroles', 'mine', 'named-escalator', ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']),
    );
    await admin.createClusterRole({ body: clusterRole('mine', []) });
    const mine = await named.rbac.readClusterRole({ name: 'mine' });
    const replaced = await named.rbac.replaceClusterRole({ name: 'mine', body: { ...mine, rules: secrets } });
    expect(replaced.rules?.[0]?.resources).to.deep.equal(['secrets']);
    if (await kubectlAvailable()) {
      expect(await kubectlWith(named.kubeconfig, 'auth', 'can-i', 'escalate', 'clusterroles/mine')).to.include({ code: 0, out: 'yes' });
      expect(await kubectlWith(named.kubeconfig, 'auth', 'can-i', 'escalate', 'clusterroles/other')).to.include({ code: 1, out: 'no' });
    }
  });

  it('an aggregationRule takes every right: refused without cluster-admin even when the rules are held; system:masters is never checked', async () => {
    await grantCluster('aggregator', 'aggregator', [
      { apiGroups: [RBAC], resources: ['clusterroles'], verbs: ['create', 'get', 'update', 'patch'] },
    ]);
    const { rbac } = await serviceAccount('aggregator');
    const aggregating = clusterRole('gathers', [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/gather': 'true' } }] },
    });
    const refused = await failure(rbac.createClusterRole({ body: aggregating }));
    expect(refused).to.deep.include({ code: 403 });
    expect(refused.status.message).to.equal(
      `clusterroles.${RBAC} "gathers" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
    );
    await admin.createClusterRole({ body: aggregating });
    // Changing anything of an aggregating role but its owners and finalizers is checked the same way.
    const stored = await rbac.readClusterRole({ name: 'gathers' });
    const relabelled = await failure(
      rbac.patchClusterRole(
        { name: 'gathers', body: { metadata: { labels: { team: 'a' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      ),
    );
    expect(relabelled.status.message).to.equal(
      `clusterroles.${RBAC} "gathers" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
    );
    const finalized = await rbac.replaceClusterRole({
      name: 'gathers',
      body: { ...stored, metadata: { ...stored.metadata, finalizers: ['example.com/keep'] } },
    });
    expect(finalized.metadata?.finalizers).to.deep.equal(['example.com/keep']);
  });

  it('a binding needs every right of its role or the bind verb on it (resourceNames), checked in the binding namespace', async () => {
    await grantIn('default', 'binder', 'binder', [
      { apiGroups: [RBAC], resources: ['rolebindings'], verbs: ['create', 'get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
    ]);
    await grantCluster('binder', 'binder-crb', [{ apiGroups: [RBAC], resources: ['clusterrolebindings'], verbs: ['create'] }]);
    await admin.createNamespacedRole({
      namespace: 'default',
      body: { metadata: { name: 'cm-get' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
    });
    await admin.createClusterRole({ body: clusterRole('cm-get', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]) });
    await admin.createClusterRole({ body: clusterRole('secret-get', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]) });
    const { rbac } = await serviceAccount('binder');
    const bind = (name: string, ref: k8s.V1RoleRef) =>
      rbac.createNamespacedRoleBinding({ namespace: 'default', body: { metadata: { name }, roleRef: ref, subjects: subjects('someone') } });
    const bindCluster = (name: string, ref: k8s.V1RoleRef) =>
      rbac.createClusterRoleBinding({ body: { metadata: { name }, roleRef: ref, subjects: subjects('someone') } });

    await bind('to-role', roleRef('Role', 'cm-get'));
    await bind('to-clusterrole', roleRef('ClusterRole', 'cm-get'));
    const secret = await failure(bind('to-secret-get', roleRef('ClusterRole', 'secret-get')));
    expect(secret.status).to.deep.include({ reason: 'Forbidden', details: { name: 'to-secret-get', group: RBAC, kind: 'rolebindings' } });
    expect(secret.status.message).to.equal(
      notHeld('rolebindings', 'to-secret-get', 'binder', ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']),
    );
    const missing = await failure(bind('to-nothing', roleRef('Role', 'nope')));
    expect(missing).to.deep.include({ code: 404 });
    expect(missing.status.message).to.equal(`roles.${RBAC} "nope" not found`);
    // configmaps get is held in default only: a ClusterRoleBinding is checked at cluster scope.
    const clusterWide = await failure(bindCluster('cm-everywhere', roleRef('ClusterRole', 'cm-get')));
    expect(clusterWide.status.message).to.equal(
      notHeld('clusterrolebindings', 'cm-everywhere', 'binder', ['{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}']),
    );

    // bind on one ClusterRole, granted in default: that role may be bound there, no other, and not cluster-wide.
    await grantIn('default', 'binder', 'bind-secret-get', [
      { apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: ['secret-get'], verbs: ['bind'] },
    ]);
    await bind('to-secret-get', roleRef('ClusterRole', 'secret-get'));
    expect((await failure(bind('to-view', roleRef('ClusterRole', 'view')))).code).to.equal(403);
    expect((await failure(bindCluster('secret-get-everywhere', roleRef('ClusterRole', 'secret-get')))).code).to.equal(403);

    // An update that only touches owner references and finalizers is never checked; any other is.
    await admin.createNamespacedRoleBinding({
      namespace: 'default',
      body: { metadata: { name: 'admins' }, roleRef: roleRef('ClusterRole', 'admin'), subjects: subjects('someone') },
    });
    const stored = await rbac.readNamespacedRoleBinding({ name: 'admins', namespace: 'default' });
    const finalized = await rbac.replaceNamespacedRoleBinding({
      name: 'admins',
      namespace: 'default',
      body: { ...stored, metadata: { ...stored.metadata, finalizers: ['example.com/keep'] } },
    });
    const relabelled = await failure(
      rbac.replaceNamespacedRoleBinding({
        name: 'admins',
        namespace: 'default',
        body: { ...finalized, metadata: { ...finalized.metadata, labels: { team: 'a' } } },
      }),
    );
    expect(relabelled.status.message).to.match(
      /^rolebindings\.rbac\.authorization\.k8s\.io "admins" is forbidden: user "system:serviceaccount:default:binder" .* not currently held:\n/,
    );
  });

  it('kubectl v1.32: auth can-i bind, and create rolebinding --as a ServiceAccount refused until it may bind the role', async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    const adminConfig = join(dir, 'admin');
    await server.writeKubeconfig(adminConfig);
    const kubectl = (...args: string[]) => kubectlWith(adminConfig, ...args);
    const as = '--as=system:serviceaccount:default:kc';
    expect((await kubectl('create', 'serviceaccount', 'kc')).code).to.equal(0);
    expect((await kubectl('create', 'role', 'kc-bindings', '--verb=create', '--resource=rolebindings')).code).to.equal(0);
    expect((await kubectl('create', 'rolebinding', 'kc-bindings', '--role=kc-bindings', '--serviceaccount=default:kc')).code).to.equal(0);
    expect(await kubectl('auth', 'can-i', 'bind', 'clusterroles/view', as)).to.include({ code: 1, out: 'no' });

    const refused = await kubectl('create', 'rolebinding', 'kc-view', '--clusterrole=view', '--serviceaccount=default:kc', as);
    expect(refused.code).to.equal(1);
    expect(refused.err).to.match(
      /^error: failed to create rolebinding: rolebindings\.rbac\.authorization\.k8s\.io "kc-view" is forbidden: user "system:serviceaccount:default:kc" \(groups=\["system:serviceaccounts" "system:serviceaccounts:default" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/,
    );
    expect(refused.err).to.contain('\n{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list" "watch"]}\n');

    expect(
      (await kubectl('create', 'role', 'kc-bind-view', '--verb=bind', '--resource=clusterroles', '--resource-name=view')).code,
    ).to.equal(0);
    expect((await kubectl('create', 'rolebinding', 'kc-bind-view', '--role=kc-bind-view', '--serviceaccount=default:kc')).code).to.equal(0);
    expect(await kubectl('auth', 'can-i', 'bind', 'clusterroles/view', as)).to.include({ code: 0, out: 'yes' });
    expect(await kubectl('auth', 'can-i', 'bind', 'clusterroles/edit', as)).to.include({ code: 1, out: 'no' });
    expect(await kubectl('create', 'rolebinding', 'kc-view', '--clusterrole=view', '--serviceaccount=default:kc', as)).to.include({
      code: 0,
      out: 'rolebinding.rbac.authorization.k8s.io/kc-view created',
    });
    expect((await kubectl('create', 'rolebinding', 'kc-edit', '--clusterrole=edit', '--serviceaccount=default:kc', as)).err).to.contain(
      'is attempting to grant RBAC permissions not currently held',
    );
    // The admin (system:masters) is never checked.
    expect(
      (await kubectl('create', 'clusterrolebinding', 'kc-admin', '--clusterrole=cluster-admin', '--serviceaccount=default:kc')).code,
    ).to.equal(0);
  });
});
