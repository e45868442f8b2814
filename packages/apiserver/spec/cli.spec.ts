import { expect } from 'chai';
import { spawn, execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { eventually, kubectlAvailable } from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = [join(ROOT, 'bin/rxkube-apiserver.js')];
const run = promisify(execFile);

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
}

/** Every server this spec starts, so a failing test cannot leave one running. */
const children = new Set<ChildProcessWithoutNullStreams>();

async function startCli(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  await eventually(() => out.includes('press Ctrl-C to stop'), 'the CLI to be ready', 20_000);
  const url = /listening on (\S+)/.exec(out)?.[1] ?? '';
  return { child, url, output: () => out };
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...CLI, ...args], { cwd: ROOT, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The certificate a TLS server presents (PEM), read without verifying it. */
function tlsCertificateOf(url: string): Promise<string> {
  const { hostname: host, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port), rejectUnauthorized: false }, () => {
      const der = socket.getPeerCertificate().raw;
      socket.end();
      resolve(`-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`);
    });
    socket.once('error', reject);
  });
}

describe('cli: the rxkube apiserver command', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-cli-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it('writes a kubeconfig, serves kubectl and client-node, stops on SIGTERM saving --data, and loads it again', async function () {
    const kubeconfig = join(dir, 'kubeconfig');
    const data = join(dir, 'data');
    const first = await startCli(['--port', '0', '--kubeconfig', kubeconfig, '--data', data]);
    expect(first.output()).to.contain(`kubectl --kubeconfig ${kubeconfig} get ns`);
    expect((await stat(kubeconfig)).mode & 0o777).to.equal(0o600);

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'persisted' }, data: { k: 'v' } } });
    if (await kubectlAvailable()) {
      const { stdout } = await run('kubectl', [
        '--kubeconfig',
        kubeconfig,
        '--cache-dir',
        join(dir, 'cache'),
        'get',
        'cm',
        'persisted',
        '-o',
        'jsonpath={.data.k}',
      ]);
      expect(stdout).to.equal('v');
    }
    first.child.kill('SIGTERM');
    expect(await exitOf(first.child)).to.equal(0);
    expect(first.output()).to.contain(`state kept in ${data}`);
    // JSON lines: a header, then one object a line.
    const saved = (await readFile(join(data, 'snapshot.json'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((l) => JSON.parse(l) as { object: { metadata: { name: string } } });
    expect(saved.map((o) => o.object.metadata.name)).to.include('persisted');

    const second = await startCli(['--port', '0', '--kubeconfig', kubeconfig, '--data', data]);
    try {
      const kc2 = new k8s.KubeConfig();
      kc2.loadFromFile(kubeconfig);
      const cm = await kc2.makeApiClient(k8s.CoreV1Api).readNamespacedConfigMap({ name: 'persisted', namespace: 'default' });
      expect(cm.data).to.deep.equal({ k: 'v' });
    } finally {
      second.child.kill('SIGINT');
      expect(await exitOf(second.child)).to.equal(0);
    }
  });

  it('off loopback (--host 0.0.0.0) serves HTTPS with a generated CA; the token is only in the 0600 kubeconfig, never on stdout; kubectl and client-node work', async function () {
    const kubeconfig = join(dir, 'remote.yaml');
    const server = await startCli(['--port', '0', '--host', '0.0.0.0', '--kubeconfig', kubeconfig]);
    expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await stat(kubeconfig)).mode & 0o777).to.equal(0o600);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const token = kc.getCurrentUser()?.token ?? '';
    expect(token).to.have.length.greaterThan(20);
    expect(server.output()).not.to.contain(token);
    const cluster = kc.getCurrentCluster();
    expect(cluster).to.include({ server: server.url, skipTLSVerify: false });
    const ca = Buffer.from(cluster?.caData ?? '', 'base64').toString();
    expect(ca).to.contain('BEGIN CERTIFICATE');
    // The certificate names the loopback addresses, localhost and the machine's own names.
    const cert = new X509Certificate(await tlsCertificateOf(server.url));
    expect(cert.verify(new X509Certificate(ca).publicKey)).to.equal(true);
    for (const name of ['IP Address:127.0.0.1', 'DNS:localhost', `DNS:${hostname()}`]) expect(cert.subjectAltName).to.contain(name);

    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'over-tls' }, data: { k: 'v' } } });
    // Plain HTTP is not served there: the port speaks TLS only.
    const plain = await fetch(server.url.replace('https:', 'http:') + '/api/v1/namespaces').then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).not.to.equal(200);
    if (await kubectlAvailable()) {
      const { stdout } = await run('kubectl', [
        '--kubeconfig',
        kubeconfig,
        '--cache-dir',
        join(dir, 'cache-tls'),
        'get',
        'cm',
        'over-tls',
        '-o',
        'jsonpath={.data.k}',
      ]);
      expect(stdout).to.equal('v');
    }
    server.child.kill('SIGTERM');
    expect(await exitOf(server.child)).to.equal(0);
  });

  it('fails at start, naming the path and the reason, when --data cannot be used', async () => {
    const file = join(dir, 'plain-file');
    await writeFile(file, 'x');
    const res = await runCli(['--port', '0', '--kubeconfig', join(dir, 'unused.yaml'), '--data', join(file, 'state')]);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.contain(join(file, 'state')).and.contain('ENOTDIR');
    expect(res.stdout).not.to.contain('listening');
  });

  it('exits 2 with a one-line error for bad flags', async () => {
    for (const args of [['--bogus'], ['--port', 'many'], ['--port'], ['--port', '70000']]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).to.equal(2);
      expect(res.stderr.trim().split('\n')).to.have.length(1);
      expect(res.stderr).to.match(/^rxkube-apiserver: /);
    }
  });

  it('refuses a simulation flag without --simulate (it would be ignored), naming both', async () => {
    const res = await runCli(['--port', '0', '--nodes', '5']);
    expect(res.code).to.equal(2);
    expect(res.stderr.trim()).to.equal('rxkube-apiserver: --nodes needs --simulate (without it nothing is simulated)');
  });

  it('prints usage for --help', async () => {
    const res = await runCli(['--help']);
    expect(res.code).to.equal(0);
    expect(res.stdout).to.contain('usage: rxkube-apiserver');
  });

  it('takes the token from --token-file (0600) or RXKUBE_APISERVER_TOKEN, so it is not in /proc/<pid>/cmdline; --help says to prefer them', async () => {
    const secret = 'file-token-' + 'x'.repeat(20);
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${secret}\n`, { mode: 0o600 });
    const kubeconfig = join(dir, 'token-file.yaml');
    const server = await startCli(['--port', '0', '--kubeconfig', kubeconfig, '--token-file', tokenFile]);
    const cmdline = await readFile(`/proc/${server.child.pid}/cmdline`, 'utf8');
    expect(cmdline).to.contain('--token-file').and.not.contain(secret);
    expect((await fetch(`${server.url}/api/v1/namespaces`)).status).to.equal(401);
    expect((await fetch(`${server.url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${secret}` } })).status).to.equal(200);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    expect(kc.getCurrentUser()?.token).to.equal(secret);
    server.child.kill('SIGTERM');
    await exitOf(server.child);

    const fromEnv = spawn(process.execPath, [...CLI, '--port', '0', '--kubeconfig', join(dir, 'env.yaml')], {
      cwd: ROOT,
      env: { ...process.env, RXKUBE_APISERVER_TOKEN: secret },
    });
    children.add(fromEnv);
    let out = '';
    fromEnv.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await eventually(() => out.includes('press Ctrl-C to stop'), 'the CLI to be ready', 20_000);
    const envUrl = /listening on (\S+)/.exec(out)?.[1] ?? '';
    expect((await fetch(`${envUrl}/api/v1/namespaces`)).status).to.equal(401);
    expect((await fetch(`${envUrl}/api/v1/namespaces`, { headers: { authorization: `Bearer ${secret}` } })).status).to.equal(200);
    fromEnv.kill('SIGTERM');
    await exitOf(fromEnv);

    await writeFile(join(dir, 'open-token'), secret, { mode: 0o644 });
    const open = await runCli(['--port', '0', '--token-file', join(dir, 'open-token')]);
    expect(open.code).to.equal(2);
    expect(open.stderr).to.contain('may be read by other users (mode 0644)');
    const both = await runCli(['--token', 'a', '--token-file', tokenFile]);
    expect(both.stderr.trim()).to.equal('rxkube-apiserver: --token and --token-file exclude each other: give one');
    expect((await runCli(['--help'])).stdout).to.match(
      /--token-file FILE[\s\S]*Prefer it[\s\S]*RXKUBE_APISERVER_TOKEN[\s\S]*process\s+list/,
    );
  });
});
