/**
 * `operatorManifests` and `rxkube manifests` on the demos: the RBAC derived from what the
 * controllers were registered with (pinned), the CRD YAML as kubectl applies it, and the RBAC
 * proven against the requests the operator made on the embedded server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, type KubernetesObject, type V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import {
  createLogger,
  kustomizeBase,
  manifestsToYaml,
  Operator,
  operatorManifests,
  type OperatorManifests,
  type PolicyRule,
} from '../../lib/index.js';
import { main as manifestsCommand } from '../../lib/cli/manifests.js';
import { builtinResources, type ResourceDescriptor } from '../../lib/kube/index.js';
import { eventually } from '../../lib/testing/index.js';
import { rbacUsage, startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import * as webpageOperator from '../../demos/webpage/operator.js';
import * as tomcatOperator from '../../demos/tomcat/operator.js';
import { tomcat, webapp } from '../../demos/tomcat/model.js';
import { webPage, webPageCrd } from '../../demos/webpage/model.js';
import { variants } from '../../demos/webpage/variants.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

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

/** What `rxkube manifests --module` reads from an operator module. */
interface OperatorModule {
  register(operator: Operator): unknown;
  readonly crds: readonly unknown[];
  readonly extraRules?: readonly PolicyRule[];
}

function manifestsOf(module: OperatorModule, name: string, kubeConfig = offlineKubeConfig()) {
  const operator = new Operator({ kubeConfig, logger: createLogger({ level: 'silent' }) });
  module.register(operator);
  const extraRules = module.extraRules === undefined ? {} : { extraRules: module.extraRules };
  return { operator, manifests: operatorManifests(operator, { name, namespace: 'operators', crds: module.crds as never, ...extraRules }) };
}

const rule = (apiGroup: string, resource: string, ...verbs: string[]): PolicyRule => ({
  apiGroups: [apiGroup],
  resources: [resource],
  verbs,
});
const WRITE = ['get', 'list', 'watch', 'create', 'patch'];

const WEBPAGE_RULES: PolicyRule[] = [
  rule('sample.rxkube.dev', 'webpages', 'get', 'list', 'watch', 'patch'),
  rule('sample.rxkube.dev', 'webpages/status', 'patch'),
  rule('', 'configmaps', ...WRITE),
  rule('apps', 'deployments', ...WRITE),
  rule('', 'services', ...WRITE),
  // Only the Ingress has a reconcile precondition: the rest is garbage-collected, never deleted by the operator.
  rule('networking.k8s.io', 'ingresses', ...WRITE, 'delete'),
  rule('events.k8s.io', 'events', 'create', 'patch'),
];

const TOMCAT_RULES: PolicyRule[] = [
  rule('sample.rxkube.dev', 'tomcats', 'get', 'list', 'watch', 'patch'),
  rule('sample.rxkube.dev', 'tomcats/status', 'patch'),
  rule('apps', 'deployments', ...WRITE),
  rule('', 'services', ...WRITE),
  rule('sample.rxkube.dev', 'webapps', 'get', 'list', 'watch', 'patch'),
  rule('sample.rxkube.dev', 'webapps/status', 'patch'),
  rule('', 'configmaps', ...WRITE, 'delete'),
  rule('events.k8s.io', 'events', 'create', 'patch'),
];

describe('manifests of the demo operators', function () {
  this.timeout(60_000);

  it('the WebPage operator (managed dependents, all namespaces) gets a ClusterRole with exactly these rules', () => {
    const { manifests } = manifestsOf(webpageOperator, 'webpage-operator');
    expect(manifests.clusterWide).to.equal(true);
    expect(manifests.rules).to.deep.equal(WEBPAGE_RULES);
    expect(manifests.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).to.deep.equal([
      'CustomResourceDefinition/webpages.sample.rxkube.dev',
      'ServiceAccount/webpage-operator',
      'ClusterRole/webpage-operator',
      'ClusterRoleBinding/webpage-operator',
      'Deployment/webpage-operator',
      'Service/webpage-operator-metrics',
    ]);
  });

  it('the Tomcat operator (two controllers, one with a secondary source) gets the union of both, one rule per resource', () => {
    expect(manifestsOf(tomcatOperator, 'tomcat-operator').manifests.rules).to.deep.equal(TOMCAT_RULES);
  });

  it('a cleanup adds /finalizers; own-namespace controllers get a Role; leader election a Lease Role', () => {
    const operator = new Operator({
      kubeConfig: offlineKubeConfig(),
      leaderElection: { leaseName: 'op', leaseNamespace: 'operators' },
      stopTimeoutMs: 50_000,
    });
    operator.register(
      { reconcile: () => undefined, cleanup: () => undefined },
      { resource: { apiVersion: 'example.com/v1', kind: 'Thing', plural: 'things' }, namespaces: ['operators'] },
    );
    const manifests = operatorManifests(operator, { name: 'things', namespace: 'operators' });
    expect(manifests.clusterWide).to.equal(false);
    expect(manifests.rules).to.deep.include(rule('example.com', 'things/finalizers', 'update'));
    const byKind = (kind: string) => manifests.objects.filter((o) => o.kind === kind) as (KubernetesObject & Record<string, unknown>)[];
    expect(byKind('ClusterRole')).to.deep.equal([]);
    expect(byKind('Role').map((r) => [r.metadata?.name, r.metadata?.namespace, r['rules']])).to.deep.equal([
      ['things', 'operators', manifests.rules],
      ['things-leader-election', 'operators', [rule('coordination.k8s.io', 'leases', 'get', 'create', 'update', 'watch')]],
    ]);
    const pod = (byKind('Deployment')[0] as V1Deployment).spec?.template.spec;
    expect(pod?.terminationGracePeriodSeconds, 'longer than the stop timeout').to.equal(60);
  });

  it("SH1: a sharded controller gets a Role on leases (list, watch, create, update, delete too) where its member Leases live: its own sharding.namespace, else the operator's namespace", () => {
    const operator = new Operator({ kubeConfig: offlineKubeConfig(), sharding: {} });
    const things = { apiVersion: 'example.com/v1', kind: 'Thing', plural: 'things' } as const;
    operator.register({ reconcile: () => undefined }, { resource: things, namespaces: ['operators'] });
    operator.register(
      { reconcile: () => undefined },
      { resource: things, name: 'other', namespaces: ['operators'], sharding: { namespace: 'shards' } },
    );
    operator.register({ reconcile: () => undefined }, { resource: things, name: 'whole', namespaces: ['operators'], sharding: false });
    const manifests = operatorManifests(operator, { name: 'things', namespace: 'operators' });
    const byKind = (kind: string) => manifests.objects.filter((o) => o.kind === kind) as (KubernetesObject & Record<string, unknown>)[];
    const memberLeases = [rule('coordination.k8s.io', 'leases', 'get', 'list', 'watch', 'create', 'update', 'delete')];
    expect(byKind('Role').map((r) => [r.metadata?.name, r.metadata?.namespace, r['rules']])).to.deep.equal([
      ['things', 'operators', manifests.rules],
      ['things-sharding', 'operators', memberLeases],
      ['things-sharding', 'shards', memberLeases],
    ]);
    expect(
      byKind('RoleBinding').map((b) => [b.metadata?.name, b.metadata?.namespace, (b['roleRef'] as { name: string }).name]),
    ).to.deep.include(['things-sharding', 'shards', 'things-sharding']);
  });

  it('the Deployment runs non-root on a read-only root filesystem, probes /healthz and /readyz, and knows its namespace; the Service serves /metrics', () => {
    const { manifests } = manifestsOf(webpageOperator, 'webpage-operator');
    const deployment = manifests.objects.find((o) => o.kind === 'Deployment') as V1Deployment;
    const pod = deployment.spec?.template.spec;
    const container = pod?.containers[0];
    expect(pod?.serviceAccountName).to.equal('webpage-operator');
    expect(pod?.securityContext).to.include({ runAsNonRoot: true });
    expect(container?.securityContext).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(container?.livenessProbe?.httpGet).to.deep.equal({ path: '/healthz', port: 'health' });
    expect(container?.readinessProbe?.httpGet).to.deep.equal({ path: '/readyz', port: 'health' });
    expect(container?.ports).to.deep.equal([{ name: 'health', containerPort: 8080, protocol: 'TCP' }]);
    expect(container?.env?.[0]).to.deep.equal({ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
    expect(pod?.terminationGracePeriodSeconds, 'the 30 s stop timeout plus a margin').to.equal(40);
    const service = manifests.objects.find((o) => o.kind === 'Service') as KubernetesObject & { spec: { ports: unknown[] } };
    expect(service.spec.ports).to.deep.equal([{ name: 'metrics', port: 8080, targetPort: 'health', protocol: 'TCP' }]);
  });

  it('YAML with Kubernetes field names (x-kubernetes-preserve-unknown-fields, never client-node property names) and a kustomize base', () => {
    const operator = new Operator({ kubeConfig: offlineKubeConfig() });
    operator.register({ reconcile: () => undefined }, { resource: { apiVersion: 'example.com/v1', kind: 'Thing', plural: 'things' } });
    const crd = {
      ...webPageCrd,
      spec: {
        ...webPageCrd.spec,
        versions: webPageCrd.spec.versions.map((v) => ({
          ...v,
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        })),
      },
    };
    const manifests = operatorManifests(operator, { name: 'things', crds: [crd], image: 'registry.example.com/things:1.2.3' });
    const yaml = manifestsToYaml(manifests.objects);
    expect(yaml).to.include('x-kubernetes-preserve-unknown-fields: true').and.not.include('x_kubernetes');
    expect(parseAllDocuments(yaml).map((d) => (d.toJS() as KubernetesObject).kind)).to.deep.equal(manifests.objects.map((o) => o.kind));
    const files = kustomizeBase(manifests, { name: 'things', image: 'registry.example.com/things:1.2.3' });
    expect(Object.keys(files)).to.deep.equal(['crds.yaml', 'rbac.yaml', 'deployment.yaml', 'service.yaml', 'kustomization.yaml']);
    expect(files['kustomization.yaml'])
      .to.include('resources:\n  - crds.yaml')
      .and.include('name: registry.example.com/things\n    newTag: 1.2.3');
  });

  it("a secondary's declared writes are granted: apply as create and patch, update, patch, delete, status as update and patch of /status", () => {
    const operator = new Operator({ kubeConfig: offlineKubeConfig() });
    const cm = builtinResources.configMap;
    operator.register(
      { reconcile: () => undefined },
      {
        resource: { apiVersion: 'example.com/v1', kind: 'Thing', plural: 'things' },
        secondaries: [
          { resource: cm, writes: ['apply'] },
          { name: 'secrets', resource: builtinResources.secret, writes: ['create', 'update', 'patch', 'delete', 'status'] },
          { name: 'read-only', resource: builtinResources.service },
        ],
      },
    );
    const { rules } = operatorManifests(operator, { name: 'things' });
    expect(rules.filter((r) => r.apiGroups[0] === '')).to.deep.equal([
      rule('', 'configmaps', 'get', 'list', 'watch', 'create', 'patch'),
      rule('', 'secrets', 'get', 'list', 'watch', 'create', 'update', 'patch', 'delete'),
      rule('', 'secrets/status', 'update', 'patch'),
      rule('', 'services', 'get', 'list', 'watch'),
    ]);
    expect(() =>
      operator.register(
        { reconcile: () => undefined },
        {
          resource: { apiVersion: 'example.com/v1', kind: 'Other', plural: 'others' },
          secondaries: [{ resource: cm, writes: ['write' as never] }],
        },
      ),
    ).to.throw(`secondaries[0].writes[0]: must be one of 'apply', 'create', 'update', 'patch', 'delete', 'status', got "write"`);
  });

  it('a bad name is a ConfigurationError naming the option', () => {
    const operator = new Operator({ kubeConfig: offlineKubeConfig() });
    expect(() => operatorManifests(operator, { name: 'Not_A_Label' })).to.throw(/name: 'Not_A_Label' is not a valid name/);
    expect(() => operatorManifests(operator, { name: 'ok' })).to.throw(/operator: has no registered controllers/);
  });
});

describe('rxkube manifests (the command) on the embedded server', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-manifests-'));
    cluster = await startTestCluster();
    await cluster.server.writeKubeconfig(join(dir, 'kubeconfig'));
  });
  after(() => cluster.close());
  const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args], { cwd: dir });

  /** The command's main, in this process (spawning tsx costs seconds a run); stderr is captured. */
  async function manifests(...args: string[]): Promise<{ code: number; stderr: string }> {
    const errors: string[] = [];
    const original = console.error;
    console.error = (...parts: unknown[]) => errors.push(parts.join(' '));
    try {
      return { code: await manifestsCommand(args), stderr: errors.join('\n') };
    } finally {
      console.error = original;
    }
  }

  it('writes the demo CRD as kubectl applies it, and a WebPage with the documented fields is accepted with its spec kept', async () => {
    const { code, stderr } = await manifests(
      '--module',
      join(root, 'demos/webpage/operator.ts'),
      '--name',
      'webpage-operator',
      '--out',
      join(dir, 'all.yaml'),
    );
    expect(code, stderr).to.equal(0);
    expect(stderr).to.include('wrote 6 objects');
    const docs = readFileSync(join(dir, 'all.yaml'), 'utf8').split(/^---\n/m);
    writeFileSync(join(dir, 'crd.yaml'), docs[0]);
    await kubectl('apply', '-f', 'crd.yaml');
    await kubectl('wait', '--for=condition=Established', 'crd/webpages.sample.rxkube.dev', '--timeout=20s');
    writeFileSync(join(dir, 'page.yaml'), JSON.stringify(webPage('hello', '<html><body>hi</body></html>', { exposed: true })));
    await kubectl('apply', '-f', 'page.yaml');
    const page = JSON.parse((await kubectl('get', 'webpage', 'hello', '-o', 'json')).stdout) as KubernetesObject & { spec: unknown };
    expect(page.spec).to.deep.equal({ html: '<html><body>hi</body></html>', exposed: true });
  });

  it('a kustomize base goes into a new namespace with kubectl apply -k as it is: its Namespace, the namespace and a name prefix in its kustomization', async () => {
    const base = join(dir, 'webpage-base');
    const { code, stderr } = await manifests(
      '--module',
      join(root, 'demos/webpage/operator.ts'),
      '--name',
      'webpage-operator',
      '--kustomize',
      base,
    );
    expect(code, stderr).to.equal(0);
    const kustomization = parseAllDocuments(readFileSync(join(base, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as Record<string, unknown>;
    expect(kustomization).to.include({ namespace: 'webpage-operator-system', namePrefix: 'webpage-operator-' });
    const { stdout } = await kubectl('apply', '-k', base);
    expect(stdout)
      .to.include('namespace/webpage-operator-system created')
      .and.include('deployment.apps/webpage-operator-controller created');
    const account = JSON.parse(
      (await kubectl('-n', 'webpage-operator-system', 'get', 'serviceaccount', 'webpage-operator-controller', '-o', 'json')).stdout,
    ) as KubernetesObject;
    expect(account.metadata?.name).to.equal('webpage-operator-controller');
    const deployment = JSON.parse(
      (await kubectl('-n', 'webpage-operator-system', 'get', 'deployment', 'webpage-operator-controller', '-o', 'json')).stdout,
    ) as V1Deployment;
    expect(deployment.spec?.template.spec?.serviceAccountName).to.equal('webpage-operator-controller');
    const binding = JSON.parse((await kubectl('get', 'clusterrolebinding', 'webpage-operator-controller', '-o', 'json')).stdout) as {
      roleRef: { name: string };
      subjects: unknown[];
    };
    expect(binding.roleRef.name).to.equal('webpage-operator-controller');
    expect(binding.subjects).to.deep.equal([
      { kind: 'ServiceAccount', name: 'webpage-operator-controller', namespace: 'webpage-operator-system' },
    ]);
    await kubectl('-n', 'webpage-operator-system', 'get', 'service', 'webpage-operator-metrics');
    expect((await kubectl('get', 'crd', 'webpages.sample.rxkube.dev', '-o', 'name')).stdout.trim()).to.equal(
      'customresourcedefinition.apiextensions.k8s.io/webpages.sample.rxkube.dev',
    );
  });

  it("a module whose leader election Lease is in the operator's own namespace (POD_NAMESPACE) gets its Role there, in the kustomize base as in the YAML", async () => {
    const module = join(dir, 'leader-operator.mjs');
    writeFileSync(
      module,
      [
        "export const operatorOptions = { leaderElection: { leaseName: 'leader', leaseNamespace: process.env.POD_NAMESPACE ?? 'default' } };",
        "export function register(operator) { operator.register({ reconcile: () => undefined }, { resource: { apiVersion: 'example.com/v1', kind: 'Thing', plural: 'things' } }); }",
      ].join('\n'),
    );
    const base = join(dir, 'leader-base');
    expect(await manifests('--module', module, '--name', 'leader', '--kustomize', base)).to.include({ code: 0 });
    expect(process.env['POD_NAMESPACE'], 'left as it was').to.equal(undefined);
    const kustomization = parseAllDocuments(readFileSync(join(base, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as Record<string, unknown>;
    expect(kustomization['namespace']).to.equal('leader-system');
    const roles = parseAllDocuments(readFileSync(join(base, 'rbac.yaml'), 'utf8'))
      .map((d) => d.toJS() as KubernetesObject)
      .filter((o) => o.kind === 'Role');
    expect(roles.map((r) => [r.metadata?.name, r.metadata?.namespace])).to.deep.equal([['leader-election', undefined]]);
    // A copy: the command reads a module once per process, and this one runs in the test's.
    const copy = join(dir, 'leader-operator-copy.mjs');
    writeFileSync(copy, readFileSync(module, 'utf8'));
    expect(await manifests('--module', copy, '--name', 'leader', '--namespace', 'ops', '--out', join(dir, 'leader.yaml'))).to.include({
      code: 0,
    });
    const yaml = parseAllDocuments(readFileSync(join(dir, 'leader.yaml'), 'utf8')).map((d) => d.toJS() as KubernetesObject);
    expect(yaml.filter((o) => o.kind === 'Role').map((r) => r.metadata?.namespace)).to.deep.equal(['ops']);
  });

  it('writes a kustomize base; bad flags exit 2 and a module without register exits 1 naming it', async () => {
    expect(
      await manifests('--module', join(root, 'demos/tomcat/operator.ts'), '--name', 'tomcat-operator', '--kustomize', join(dir, 'base')),
    ).to.include({ code: 0 });
    expect(readFileSync(join(dir, 'base', 'kustomization.yaml'), 'utf8')).to.include('rbac.yaml');
    const bad = await manifests('--name', 'x');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('--module is required');
    const noRegister = await manifests('--module', join(root, 'demos/webpage/model.ts'), '--name', 'x');
    expect(noRegister.code).to.equal(1);
    expect(noRegister.stderr).to.include('exports no register(operator) function');
  });
});

/**
 * The test's own requests go through fetch with a user agent of their own: the server's request
 * log tells them from the operator's (client-node's, and undici's for watches).
 */
const SPEC_AGENT = 'rxkube-spec';

function clientOf(cluster: TestCluster) {
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${cluster.server.url}${path}`, {
      method,
      headers: { 'content-type': method === 'PATCH' ? 'application/apply-patch+yaml' : 'application/json', 'user-agent': SPEC_AGENT },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return res.status === 404
      ? undefined
      : ((await res.json()) as KubernetesObject & { status?: Record<string, unknown>; data?: Record<string, string> });
  };
  const path = (apiVersion: string, plural: string, name: string) =>
    `${apiVersion.includes('/') ? '/apis' : '/api'}/${apiVersion}/namespaces/default/${plural}/${name}`;
  return {
    apply: (plural: string, obj: KubernetesObject) =>
      send('PATCH', `${path(obj.apiVersion!, plural, obj.metadata!.name!)}?fieldManager=rxkube-spec&force=true`, obj),
    get: (apiVersion: string, plural: string, name: string) => send('GET', path(apiVersion, plural, name)),
    delete: (apiVersion: string, plural: string, name: string) => send('DELETE', path(apiVersion, plural, name)),
  };
}

function operatorRequests(cluster: TestCluster) {
  return cluster.server.requests
    .entries()
    .map((e) => e.request)
    .filter((r) => r.userAgent !== SPEC_AGENT);
}

function printRbac(title: string, manifests: OperatorManifests) {
  console.log(`      ${title}: ${manifests.clusterWide ? 'ClusterRole' : 'Role'}`);
  for (const r of manifests.rules) console.log(`        ${r.apiGroups[0] || 'core'} ${r.resources[0]}: ${r.verbs.join(', ')}`);
}

/**
 * Verbs the framework needs only on some paths, which a demo run does not take: `get` reads an
 * object the cache does not have (an evicted primary of a bounded cache, a re-read after a
 * conflict, a server-reading condition), and `patch` of the primary writes a `patchResource`
 * control or a finalizer — rxkube cannot tell from the registration whether `reconcile` returns one.
 * `create` of an Event comes with the first of a series (a failed run's Warning), `patch` with a
 * repeat of it.
 */
const PATH_DEPENDENT = (primaries: string[], secondaries: string[]) => [
  ...primaries.flatMap((p) => [`get ${p}`, `patch ${p}`]),
  ...secondaries.map((s) => `get ${s}`),
];
/**
 * The informers take their lists as watch-lists (a watch): `list` stays in the rules for a server
 * that refuses them, and the paged lists it then makes.
 */
const STREAMED_LISTS = (resources: string[]) => resources.map((r) => `list ${r}`);
const EVENT_SERIES = 'patch events.events.k8s.io';
const EVENT_VERBS = ['create events.events.k8s.io', EVENT_SERIES];

/**
 * The low-level and standalone WebPage variants write their secondaries themselves (through
 * `ctx.secondaryClient`, or a workflow the reconciler runs): rxkube sees only the sources it
 * watches, so the writes are declared, as a module's `extraRules` would declare them.
 */
const SECONDARY_WRITES: PolicyRule[] = [
  rule('', 'configmaps', 'create', 'patch'),
  rule('apps', 'deployments', 'create', 'patch'),
  rule('', 'services', 'create', 'patch'),
  rule('networking.k8s.io', 'ingresses', 'create', 'patch', 'delete'),
];

/** Where the RBAC objects of `operatorManifests` go on the server (the admin applies them). */
const RBAC_KINDS: Record<string, ResourceDescriptor> = {
  ServiceAccount: builtinResources.serviceAccount,
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
  },
  Role: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true },
  RoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
};

/**
 * The operator's log lines that carry a 403 (a failed list, a failed reconcile, a failed Event),
 * and a promise that rejects with the first, so a refused run fails at once, not at a timeout.
 */
function forbiddenLog() {
  const lines: string[] = [];
  const rbacWarnings: string[] = [];
  let refuse: (err: Error) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  const destination = {
    write(line: string) {
      if (line.includes('"RBAC: cannot')) rbacWarnings.push((JSON.parse(line) as { msg: string }).msg);
      if (!line.includes('forbidden')) return;
      lines.push(line);
      refuse(new Error(`the operator was refused: ${forbiddenMessages(lines).join('; ')}`));
    },
  };
  return { logger: createLogger({ level: 'debug', destination }), lines, rbacWarnings, refused };
}

/** The 403 messages in the captured JSON log lines: "... cannot patch resource "x" in API group "g" in the namespace "n"". */
function forbiddenMessages(lines: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const m of value.match(/[a-z.]+ (?:"[^"]*" )?is forbidden: User .*?(?:in the namespace "[^"]*"|cluster scope)/g) ?? [])
        found.add(m);
    } else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit);
  };
  for (const line of lines) visit(JSON.parse(line));
  return [...found];
}

/**
 * Runs `module`'s operator on the embedded server with only the generated ServiceAccount's token:
 * the admin applies the generated ServiceAccount, (Cluster)Role and binding (`edit` changes the
 * rules first, to prove a missing verb is caught), the operator gets a TokenRequest token for it.
 */
async function proveRbac(
  module: OperatorModule,
  name: string,
  scenario: (api: ReturnType<typeof clientOf>) => Promise<void>,
  edit: (rules: PolicyRule[]) => PolicyRule[] = (rules) => rules,
) {
  const cluster = await startTestCluster({ crds: module.crds as never, simulate: { deployments: { readyAfterMs: 50 } } });
  const log = forbiddenLog();
  let operator: Operator | undefined;
  try {
    const { manifests } = manifestsOf(module, name);
    await cluster.createNamespace('operators');
    for (const obj of manifests.objects) {
      const resource = RBAC_KINDS[obj.kind!];
      if (!resource) continue;
      const rules = (obj as { rules?: PolicyRule[] }).rules;
      await cluster.apply(
        resource,
        obj.kind === 'ClusterRole' || (obj.kind === 'Role' && rules === manifests.rules) ? { ...obj, rules: edit(rules!) } : obj,
      );
    }
    const kubeConfig = await cluster.kubeConfigFor({ serviceAccount: name, namespace: 'operators' });
    operator = new Operator({ kubeConfig, logger: log.logger, name });
    module.register(operator);
    cluster.server.requests.reset();
    await Promise.race([log.refused, operator.start().then(() => scenario(clientOf(cluster)))]);
    await operator.stop();
    const forbidden = forbiddenMessages(log.lines);
    if (forbidden.length > 0) throw new Error(`the operator was refused: ${forbidden.join('; ')}`);
    expect(log.rbacWarnings, 'the start-up RBAC check found nothing missing').to.deep.equal([]);
    // The documented call: the request log as it is, the operator's own requests by its user agent.
    const userAgent = operator.client.userAgent!;
    expect(userAgent).to.match(new RegExp(`^rxkube/\\d+\\.\\d+\\.\\d+\\S* \\(${name}\\)$`));
    const usage = rbacUsage(manifests.rules, cluster.server.requests.entries(), { userAgent });
    expect(
      operatorRequests(cluster).filter((r) => r.userAgent !== userAgent),
      "every request but the test's carries the operator's user agent, watches too",
    ).to.deep.equal([]);
    printRbac(name, manifests);
    const requests = operatorRequests(cluster).length;
    console.log(`        ${requests} distinct requests seen; not used in this run: ${usage.unused.join(', ') || 'none'}`);
    return usage;
  } finally {
    await operator?.stop();
    await cluster.close();
  }
}

describe('the generated RBAC proven against the requests the demo operators made', function () {
  this.timeout(60_000);
  const until = (what: string, check: () => Promise<boolean>) => eventually(what, check, 20_000);

  /** The WebPage demo's story: create, change (the Ingress goes), an invalid page, delete. */
  async function webpageScenario(api: ReturnType<typeof clientOf>) {
    await api.apply('webpages', webPage('site', '<html><body><h1>Hi</h1></body></html>', { exposed: true }));
    await until('site ready', async () => (await api.get('sample.rxkube.dev/v1', 'webpages', 'site'))?.status?.['ready'] === true);
    await api.apply('webpages', webPage('site', '<html><body><h1>Changed</h1></body></html>', { exposed: false }));
    await until('the Ingress deleted', async () => (await api.get('networking.k8s.io/v1', 'ingresses', 'site')) === undefined);
    await api.apply('webpages', webPage('broken', '<html><body><p>never closed</body></html>'));
    await until(
      'an error in status',
      async () => (await api.get('sample.rxkube.dev/v1', 'webpages', 'broken'))?.status?.['errorMessage'] !== undefined,
    );
    await api.delete('sample.rxkube.dev/v1', 'webpages', 'site');
    await until('site gone', async () => (await api.get('sample.rxkube.dev/v1', 'webpages', 'site')) === undefined);
  }
  const WEBPAGE_UNUSED = [
    ...PATH_DEPENDENT(['webpages.sample.rxkube.dev'], ['configmaps', 'deployments.apps', 'services', 'ingresses.networking.k8s.io']),
    ...STREAMED_LISTS(['webpages.sample.rxkube.dev', 'configmaps', 'deployments.apps', 'services', 'ingresses.networking.k8s.io']),
    // The invalid page's Warning was created once (no retry for invalid HTML, so no repeat).
    EVENT_SERIES,
  ];

  it('webpage: under only the generated ServiceAccount no request is refused, and every verb is used but the path-dependent ones', async () => {
    const usage = await proveRbac(webpageOperator, 'webpage-operator', webpageScenario);
    expect(usage.uncovered).to.deep.equal([]);
    expect(usage.unused).to.have.members(WEBPAGE_UNUSED);
  });

  it('webpage, low-level: the writes its reconciler makes through ctx.secondaryClient declared on its sources (writes), under exactly the generated RBAC no request is refused', async () => {
    const module: OperatorModule = {
      crds: webpageOperator.crds,
      register: (operator) => operator.register(variants['low-level'].reconciler, variants['low-level'].config),
    };
    const { manifests } = manifestsOf(module, 'webpage-operator');
    expect(manifests.rules).to.deep.include.members([
      rule('', 'configmaps', ...WRITE),
      rule('networking.k8s.io', 'ingresses', ...WRITE, 'delete'),
    ]);
    const usage = await proveRbac(module, 'webpage-operator', webpageScenario);
    expect(usage.uncovered).to.deep.equal([]);
    expect(usage.unused).to.have.members(WEBPAGE_UNUSED);
  });

  for (const variant of ['standalone'] as const) {
    it(`webpage, ${variant}: its own writes declared as extraRules, the same run under the ServiceAccount`, async () => {
      const module: OperatorModule = {
        crds: webpageOperator.crds,
        register: (operator) => operator.register(variants[variant].reconciler, variants[variant].config),
        extraRules: SECONDARY_WRITES,
      };
      const usage = await proveRbac(module, 'webpage-operator', webpageScenario);
      expect(usage.uncovered).to.deep.equal([]);
      expect(usage.unused).to.have.members(WEBPAGE_UNUSED);
    });
  }

  it('webpage without one generated verb (patch services): the run fails with the 403 naming verb, resource, group and namespace', async () => {
    const withoutServicePatch = (rules: PolicyRule[]) =>
      rules.map((r) => (r.resources[0] === 'services' ? { ...r, verbs: r.verbs.filter((v) => v !== 'patch') } : r));
    const run = proveRbac(
      webpageOperator,
      'webpage-operator',
      async (api) => {
        await api.apply('webpages', webPage('site', '<html><body><h1>Hi</h1></body></html>'));
        await until('site ready', async () => (await api.get('sample.rxkube.dev/v1', 'webpages', 'site'))?.status?.['ready'] === true);
      },
      withoutServicePatch,
    );
    const error = await run.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(error)).to.include(
      'services "site" is forbidden: User "system:serviceaccount:operators:webpage-operator" cannot patch resource "services" in API group "" in the namespace "default"',
    );
  });

  it('tomcat: under only the generated ServiceAccount no request is refused, and every verb is used but the path-dependent ones', async () => {
    const usage = await proveRbac(tomcatOperator, 'tomcat-operator', async (api) => {
      await api.apply('tomcats', tomcat('main', { version: '10.1', replicas: 1 }));
      await api.apply('webapps', webapp('shop', { tomcat: 'main', url: 'https://example.com/shop.war', contextPath: '/shop' }));
      await until('shop ready', async () => (await api.get('sample.rxkube.dev/v1', 'webapps', 'shop'))?.status?.['ready'] === true);
      await api.apply('webapps', webapp('shop', { tomcat: 'other', url: 'https://example.com/shop.war', contextPath: '/shop' }));
      await until(
        'the deployment ConfigMap deleted without its Tomcat',
        async () => (await api.get('v1', 'configmaps', 'shop-deployment')) === undefined,
      );
      await api.delete('sample.rxkube.dev/v1', 'webapps', 'shop');
      await until('shop gone', async () => (await api.get('sample.rxkube.dev/v1', 'webapps', 'shop')) === undefined);
    });
    expect(usage.uncovered).to.deep.equal([]);
    expect(usage.unused).to.have.members([
      ...PATH_DEPENDENT(['tomcats.sample.rxkube.dev', 'webapps.sample.rxkube.dev'], ['deployments.apps', 'services', 'configmaps']),
      ...STREAMED_LISTS(['tomcats.sample.rxkube.dev', 'webapps.sample.rxkube.dev', 'deployments.apps', 'services', 'configmaps']),
      // No run failed and nothing was cleaned up: no Event.
      ...EVENT_VERBS,
    ]);
  });
});
