import { expect } from 'chai';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, isGone, kubectlAvailable, startWithClients, type Clients } from './helpers.js';

const run = promisify(execFile);

const CONFIGMAP = (value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  key: "${value}"
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa-web
spec:
  replicas: 2
  selector:
    matchLabels: {app: ssa-web}
  template:
    metadata:
      labels: {app: ssa-web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: webpages.sample.rxkube.dev
spec:
  group: sample.rxkube.dev
  scope: Namespaced
  names: {plural: webpages, singular: webpage, kind: WebPage, shortNames: [wp]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Title, type: string, jsonPath: .spec.title}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;

const WEBPAGE = (title: string) => `apiVersion: sample.rxkube.dev/v1
kind: WebPage
metadata:
  name: home
spec:
  title: ${title}
`;

describe('apiserver: kubectl v1.32', function () {
  let c: Clients;
  let dir: string;
  let kubeconfig: string;

  before(async function () {
    if (!(await kubectlAvailable())) {
      this.skip(); // kubectl is not on PATH: the kubectl specs need it
    }
    c = await startWithClients();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    await c.server.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    await c?.server.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 });
    return stdout;
  };
  const file = async (name: string, text: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('get ns lists the default namespaces (table output)', async () => {
    const out = await kubectl('get', 'ns');
    expect(out.split('\n')[0]).to.match(/^NAME\s+STATUS\s+AGE$/);
    expect(out).to.match(/^default\s+Active\s+\d+s$/m);
    expect(out).to.match(/^kube-system\s+Active/m);
  });

  it('apply -f twice: creates, then patches; a third apply is unchanged', async () => {
    expect(await kubectl('apply', '-f', await file('cm1.yaml', CONFIGMAP('one')))).to.contain('configmap/applied created');
    expect(await kubectl('apply', '-f', await file('cm2.yaml', CONFIGMAP('two')))).to.contain('configmap/applied configured');
    expect(await kubectl('apply', '-f', join(dir, 'cm2.yaml'))).to.contain('configmap/applied unchanged');
    const cm = await c.core.readNamespacedConfigMap({ name: 'applied', namespace: 'default' });
    expect(cm.data).to.deep.equal({ key: 'two' });
    expect(cm.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).to.contain('"two"');
  });

  it('apply --server-side records kubectl as an Apply manager', async () => {
    expect(await kubectl('apply', '--server-side', '-f', await file('deploy.yaml', DEPLOYMENT))).to.contain(
      'deployment.apps/ssa-web serverside-applied',
    );
    const d = await c.apps.readNamespacedDeployment({ name: 'ssa-web', namespace: 'default' });
    expect(d.spec?.replicas).to.equal(2);
    expect(d.metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`)).to.include('kubectl/Apply');
    const out = await kubectl('get', 'deploy', 'ssa-web');
    expect(out).to.match(/^ssa-web\s+0\/2\s+0\s+0\s+\d+s$/m);
  });

  it('create -f of a CRD, then apply and get of its objects by plural, short name and full name', async () => {
    expect(await kubectl('create', '-f', await file('crd.yaml', CRD))).to.contain(
      'customresourcedefinition.apiextensions.k8s.io/webpages.sample.rxkube.dev created',
    );
    expect(await kubectl('apply', '-f', await file('wp.yaml', WEBPAGE('Hello')))).to.contain('webpage.sample.rxkube.dev/home created');
    expect(await kubectl('apply', '-f', await file('wp2.yaml', WEBPAGE('World')))).to.contain('webpage.sample.rxkube.dev/home configured');
    const short = await kubectl('get', 'wp');
    expect(short.split('\n')[0]).to.match(/^NAME\s+TITLE$/);
    expect(short).to.match(/^home\s+World$/m);
    expect(await kubectl('get', 'webpages', '-o', 'name')).to.equal('webpage.sample.rxkube.dev/home\n');
    const json = JSON.parse(await kubectl('get', 'webpages.sample.rxkube.dev', 'home', '-o', 'json')) as {
      spec: unknown;
      metadata: { generation: number };
    };
    expect(json.spec).to.deep.equal({ title: 'World' });
    expect(json.metadata.generation).to.equal(2);
  });

  it('get -w sees a change', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'watched' }, data: { v: '1' } } });
    const child = spawn(
      'kubectl',
      [
        '--kubeconfig',
        kubeconfig,
        '--cache-dir',
        join(dir, 'cache'),
        'get',
        'configmap',
        'watched',
        '-w',
        '--output-watch-events',
        '-o',
        'custom-columns=EVENT:.type,VALUE:.object.data.v',
        '--no-headers',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    try {
      await eventually(() => /ADDED\s+1/.test(out), 'the initial event');
      await c.core.patchNamespacedConfigMap(
        { name: 'watched', namespace: 'default', body: { data: { v: '2' } } },
        (await import('@kubernetes/client-node')).setHeaderOptions('Content-Type', 'application/merge-patch+json'),
      );
      await eventually(() => /MODIFIED\s+2/.test(out), 'kubectl to print the change', 10_000);
    } finally {
      child.kill();
    }
  });

  it('delete -f returns once the object is deleted', async () => {
    expect(await kubectl('delete', '-f', join(dir, 'cm2.yaml'))).to.contain('configmap "applied" deleted');
    expect(await isGone(() => c.core.readNamespacedConfigMap({ name: 'applied', namespace: 'default' }))).to.equal(true);
    expect(await kubectl('delete', 'wp', 'home')).to.contain('webpage.sample.rxkube.dev "home" deleted');
  });

  it('imperative create commands (protobuf bodies), run, scale and namespace deletion', async () => {
    expect(await kubectl('create', 'namespace', 'imperative')).to.contain('namespace/imperative created');
    expect(await kubectl('-n', 'imperative', 'create', 'configmap', 'cm', '--from-literal=a=1')).to.contain('configmap/cm created');
    expect(await kubectl('-n', 'imperative', 'create', 'secret', 'generic', 'sec', '--from-literal=p=q')).to.contain('secret/sec created');
    expect(await kubectl('-n', 'imperative', 'create', 'serviceaccount', 'sa')).to.contain('serviceaccount/sa created');
    expect(await kubectl('-n', 'imperative', 'create', 'deployment', 'dep', '--image=nginx:1.27', '--replicas=2', '--port=80')).to.contain(
      'deployment.apps/dep created',
    );
    expect(await kubectl('-n', 'imperative', 'create', 'service', 'clusterip', 'svc', '--tcp=80:8080')).to.contain('service/svc created');
    expect(await kubectl('-n', 'imperative', 'run', 'pod', '--image=busybox', '--', 'sleep', '1')).to.contain('pod/pod created');
    const secret = await c.core.readNamespacedSecret({ name: 'sec', namespace: 'imperative' });
    expect(secret.data).to.deep.equal({ p: Buffer.from('q').toString('base64') });
    const svc = await c.core.readNamespacedService({ name: 'svc', namespace: 'imperative' });
    expect(svc.spec?.ports?.[0]).to.deep.include({ port: 80, targetPort: 8080, protocol: 'TCP' });
    expect(await kubectl('-n', 'imperative', 'scale', 'deployment', 'dep', '--replicas=5')).to.contain('deployment.apps/dep scaled');
    const dep = await c.apps.readNamespacedDeployment({ name: 'dep', namespace: 'imperative' });
    expect(dep.spec?.replicas).to.equal(5);
    expect(dep.spec?.template.spec?.containers[0]?.ports?.[0]?.containerPort).to.equal(80);
    expect(await kubectl('delete', 'namespace', 'imperative')).to.contain('namespace "imperative" deleted');
    expect(await isGone(() => c.core.readNamespace({ name: 'imperative' }))).to.equal(true);
  });

  it('reports server errors the way kubectl prints them', async () => {
    const err = await kubectl('get', 'configmap', 'missing').then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(err.trim()).to.equal('Error from server (NotFound): configmaps "missing" not found');
  });
});
