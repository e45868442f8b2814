import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startApiServer } from '../src/index.js';

describe('apiserver: TLS and identity off loopback (startApiServer)', function () {
  this.timeout(30_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-tls-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with a generated CA when bound off loopback; client-node verifies it and sends the token', async () => {
    const server = await startApiServer({ host: '0.0.0.0', token: 'a-token-for-the-test' });
    try {
      expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      const kc = server.kubeConfig();
      expect(kc.getCurrentCluster()).to.include({ skipTLSVerify: false });
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'tls' } } });
      expect(cm.metadata?.name).to.equal('tls');
      // Without the token: 401, over the same verified connection.
      const anonymous = new k8s.KubeConfig();
      anonymous.loadFromOptions({
        clusters: [{ name: 'c', server: server.url, caData: kc.getCurrentCluster()?.caData, skipTLSVerify: false }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const code = await anonymous
        .makeApiClient(k8s.CoreV1Api)
        .listNamespace()
        .then(
          () => 200,
          (err: { code?: number }) => err.code,
        );
      expect(code).to.equal(401);
      expect(server.kubeconfigYaml()).to.contain('certificate-authority-data:').and.not.contain('insecure-skip-tls-verify');
    } finally {
      await server.close();
    }
  });

  it('keeps plain HTTP on loopback', async () => {
    const server = await startApiServer({ clientNode: false });
    try {
      expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.kubeconfigYaml()).to.contain('insecure-skip-tls-verify: true');
    } finally {
      await server.close();
    }
  });

  it('writes the kubeconfig 0600 through an exclusive temp file, never through a planted symlink', async () => {
    const server = await startApiServer({ clientNode: false, host: '0.0.0.0', token: 'secret-token' });
    try {
      const path = join(dir, 'kubeconfig');
      const victim = join(dir, 'victim');
      await writeFile(victim, 'untouched');
      // The temp name the kubeconfig writer used to take: predictable from the pid.
      await symlink(victim, `${path}.${process.pid}.tmp`);
      await server.writeKubeconfig(path);
      expect(await readFile(victim, 'utf8')).to.equal('untouched');
      expect((await stat(path)).mode & 0o777).to.equal(0o600);
      expect(await readFile(path, 'utf8'))
        .to.contain('secret-token')
        .and.contain('certificate-authority-data');
    } finally {
      await server.close();
    }
  });
});
