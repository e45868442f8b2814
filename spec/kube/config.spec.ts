import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { loadKubeConfig } from '../../lib/kube/index.js';

function kubeconfig(cluster: string, server: string, contexts: string[] = [cluster]): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `current-context: ${contexts[0]}`,
    'clusters:',
    `- name: ${cluster}`,
    '  cluster:',
    `    server: ${server}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${cluster}-user`,
    '  user:',
    '    token: t',
    'contexts:',
    ...contexts.flatMap((c) => [`- name: ${c}`, '  context:', `    cluster: ${cluster}`, `    user: ${cluster}-user`]),
  ].join('\n');
}

describe('kube/loadKubeConfig', () => {
  let dir: string;
  let emptyHome: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-kc-'));
    emptyHome = join(dir, 'home-empty');
    mkdirSync(emptyHome);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('loads an explicit path and selects a context', () => {
    const file = write('a.yaml', kubeconfig('a', 'https://a.example:6443', ['first', 'second']));
    const kc = loadKubeConfig({ kubeconfigPath: file, context: 'second', env: {}, homeDir: emptyHome });
    expect(kc.getCurrentContext()).to.equal('second');
    expect(kc.getCurrentCluster()?.server).to.equal('https://a.example:6443');
  });

  it('fails on a missing explicit path instead of falling back', () => {
    expect(() => loadKubeConfig({ kubeconfigPath: join(dir, 'nope.yaml'), env: {} })).to.throw(
      /kubeconfigPath '.*nope.yaml' does not exist/,
    );
  });

  it('names the unknown context and the known ones', () => {
    const file = write('a.yaml', kubeconfig('a', 'https://a.example', ['first']));
    expect(() => loadKubeConfig({ kubeconfigPath: file, context: 'other', env: {} })).to.throw(
      /context 'other' not found.*contexts: first/,
    );
  });

  it('merges the existing files of KUBECONFIG, the first one deciding the current context', () => {
    const a = write('a.yaml', kubeconfig('a', 'https://a.example'));
    const b = write('b.yaml', kubeconfig('b', 'https://b.example'));
    const kc = loadKubeConfig({ env: { KUBECONFIG: [join(dir, 'missing'), a, b].join(delimiter) }, homeDir: emptyHome });
    expect(kc.getCurrentCluster()?.server).to.equal('https://a.example');
    expect(kc.getContexts().map((c) => c.name)).to.have.members(['a', 'b']);
  });

  it('falls back to ~/.kube/config', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), kubeconfig('h', 'https://home.example'));
    const kc = loadKubeConfig({ env: { KUBECONFIG: join(dir, 'missing') }, homeDir: home });
    expect(kc.getCurrentCluster()?.server).to.equal('https://home.example');
  });

  it('falls back to the in-cluster service account', () => {
    const root = join(dir, 'pod');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'token');
    writeFileSync(join(sa, 'namespace'), 'operators');
    const kc = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      homeDir: emptyHome,
      inClusterRoot: root,
    });
    expect(kc.getCurrentCluster()?.server).to.equal('https://10.0.0.1:443');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).to.equal('operators');
    expect(process.env['KUBERNETES_SERVICE_HOST']).to.not.equal('10.0.0.1');
  });

  it('names everything it tried when nothing works', () => {
    expect(() => loadKubeConfig({ env: { KUBECONFIG: join(dir, 'gone') }, homeDir: emptyHome })).to.throw(
      /no Kubernetes configuration found; tried kubeconfigPath option \(not given\), KUBECONFIG '.*gone' \(no such file\), '.*home-empty\/.kube\/config' \(no such file\), in-cluster \(KUBERNETES_SERVICE_HOST\/KUBERNETES_SERVICE_PORT unset\)/,
    );
  });
});
