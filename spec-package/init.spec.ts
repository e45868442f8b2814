/**
 * `rxkube init` as a new user meets it, against the packed tarball (not the repository path): the
 * new project installs, generates its manifests, and `npm ci && npm test` passes as it is; its
 * image recipe, replayed, runs the compiled operator and stops it with SIGTERM and exit 0.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { startApiServer } from '@rxkube/apiserver';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { freePort, NPM_ENV, replayRunStage, runUntilReadyThenTerm } from './dockerfile.js';
import { packOnce, packServerOnce, ROOT } from './tarball.js';

const run = promisify(execFile);

async function sh(file: string, args: readonly string[], cwd: string) {
  try {
    return await run(file, [...args], { cwd, env: NPM_ENV, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

describe('rxkube init: a new operator project on the packed tarball', function () {
  this.timeout(600_000);
  const work = mkdtempSync(join(tmpdir(), 'rxkube-init-'));
  const project = join(work, 'hello-operator');
  after(() => rmSync(work, { recursive: true, force: true }));

  it('init, npm ci and npm test pass out of the box; deploy/ holds the generated kustomize base', async () => {
    const [tarball, server] = await Promise.all([packOnce(), packServerOnce()]);
    const started = Date.now();
    const init = await sh(
      process.execPath,
      [join(ROOT, 'bin/rxkube.js'), 'init', project, '--rxkube', tarball.path, '--apiserver', server.path],
      work,
    );
    const initialized = Date.now();
    expect(init.stdout).to.include("wrote the Greeting operator 'hello-operator'");
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies['rxkube']).to.equal(`file:${tarball.path}`);
    expect(pkg.devDependencies['@rxkube/apiserver'], 'the embedded server is a dev dependency only').to.equal(`file:${server.path}`);
    expect(pkg.dependencies['@rxkube/apiserver']).to.equal(undefined);
    expect(existsSync(join(project, 'package-lock.json'))).to.equal(true);
    await sh('npm', ['ci', '--no-audit', '--no-fund'], project);
    const installed = Date.now();
    const test = await sh('npm', ['test'], project);
    const passed = Date.now();
    expect(test.stdout)
      .to.match(/ℹ pass 5\n/)
      .and.match(/ℹ fail 0\n/);
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `      rxkube init (with npm install and manifests) ${s(initialized - started)}, npm ci ${s(installed - initialized)}, npm test ${s(passed - installed)}: init to a passing test ${s(passed - started)}`,
    );

    const kustomization = readFileSync(join(project, 'deploy/kustomization.yaml'), 'utf8');
    expect(kustomization)
      .to.include('namespace: hello-operator-system')
      .and.include('namePrefix: hello-operator-')
      .and.include('- namespace.yaml')
      .and.include('- crds.yaml')
      .and.include('- rbac.yaml')
      .and.include('- deployment.yaml');
    const rbac = parseAllDocuments(readFileSync(join(project, 'deploy/rbac.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind: string; rules?: unknown[] },
    );
    expect(
      rbac.map((o) => o.kind),
      'with the Role of the leader election Lease',
    ).to.deep.equal(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
    expect(readFileSync(join(project, 'deploy/crds.yaml'), 'utf8'))
      .to.include('name: greetings.example.com')
      .and.not.include('x_kubernetes');
  });

  it('init --webhooks: npm ci and npm test pass (the webhooks and their round trip too); deploy/ registers them with cert-manager', async () => {
    const [tarball, server] = await Promise.all([packOnce(), packServerOnce()]);
    const hooks = join(work, 'hooks-operator');
    const init = await sh(
      process.execPath,
      [join(ROOT, 'bin/rxkube.js'), 'init', hooks, '--webhooks', '--rxkube', tarball.path, '--apiserver', server.path],
      work,
    );
    expect(init.stdout).to.include("wrote the Greeting operator 'hooks-operator'");
    await sh('npm', ['ci', '--no-audit', '--no-fund'], hooks);
    const test = await sh('npm', ['test'], hooks);
    expect(test.stdout)
      .to.match(/ℹ pass 7\n/)
      .and.match(/ℹ fail 0\n/);
    const webhooks = parseAllDocuments(readFileSync(join(hooks, 'deploy/webhooks.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string });
    expect(webhooks.map((o) => o.kind)).to.deep.equal(['Issuer', 'Certificate', 'ValidatingWebhookConfiguration']);
    expect(readFileSync(join(hooks, 'deploy/crds.yaml'), 'utf8'))
      .to.include('strategy: Webhook')
      .and.include('cert-manager.io/inject-ca-from');
  });

  it("the generated deploy/ goes into its new namespace with kubectl apply -k as it is (the project's npm run deploy), the sample after it", async function () {
    if (!existsSync(join(project, 'deploy/kustomization.yaml'))) this.skip();
    const cluster = await startApiServer({ port: 0 });
    try {
      const kubeconfig = join(work, 'deploy-kubeconfig');
      await cluster.writeKubeconfig(kubeconfig);
      const env = { ...NPM_ENV, KUBECONFIG: kubeconfig };
      const kubectl = (...args: string[]) => run('kubectl', args, { cwd: project, env });
      const deployed = await run('npm', ['run', 'deploy'], { cwd: project, env });
      expect(deployed.stdout)
        .to.include('namespace/hello-operator-system created')
        .and.include('deployment.apps/hello-operator-controller created');
      expect(
        (await kubectl('-n', 'hello-operator-system', 'get', 'serviceaccount,deployment,service,role,rolebinding', '-o', 'name')).stdout
          .split('\n')
          .filter((name) => name !== '' && name !== 'serviceaccount/default')
          .sort(),
      ).to.deep.equal([
        'deployment.apps/hello-operator-controller',
        'role.rbac.authorization.k8s.io/hello-operator-leader-election',
        'rolebinding.rbac.authorization.k8s.io/hello-operator-leader-election',
        'service/hello-operator-metrics',
        'serviceaccount/hello-operator-controller',
      ]);
      await kubectl('wait', '--for=condition=Established', 'crd/greetings.example.com', '--timeout=20s');
      expect((await kubectl('apply', '-f', 'samples/')).stdout).to.include('greeting.example.com/world created');
    } finally {
      await cluster.close();
    }
  });

  it("the project's Dockerfile, its run stage replayed: production dependencies only, the compiled operator, SIGTERM, exit 0", async function () {
    if (!existsSync(join(project, 'dist/src/main.js'))) this.skip();
    // The build stage's WORKDIR is /src: a directory whose src/ is the built project stands for it.
    const buildRoot = join(work, 'build-stage');
    mkdirSync(buildRoot);
    symlinkSync(project, join(buildRoot, 'src'));
    const app = join(work, 'app');
    mkdirSync(app);
    const replay = await replayRunStage(join(project, 'Dockerfile'), {
      context: project,
      workdir: app,
      stages: { build: buildRoot },
      env: NPM_ENV,
    });
    expect(replay.user).to.equal('node');
    expect(existsSync(join(app, 'node_modules/typescript')), 'no devDependencies').to.equal(false);
    expect(existsSync(join(app, 'node_modules/@rxkube/apiserver')), 'the embedded server is not in the production image').to.equal(false);
    // The image runs against a cluster named by KUBECONFIG: here an embedded server of this test's own.
    const cluster = await startApiServer({ port: 0 });
    try {
      const crds = parseAllDocuments(readFileSync(join(project, 'deploy/crds.yaml'), 'utf8')).map(
        (d) => d.toJS() as V1CustomResourceDefinition,
      );
      const extensions = cluster.kubeConfig().makeApiClient(ApiextensionsV1Api);
      for (const crd of crds) await extensions.createCustomResourceDefinition({ body: crd });
      const kubeconfig = join(work, 'cluster-kubeconfig');
      await cluster.writeKubeconfig(kubeconfig);
      const port = await freePort();
      const result = await runUntilReadyThenTerm([process.execPath, ...replay.entrypoint.slice(1)], {
        cwd: app,
        env: { PATH: process.env['PATH'] ?? '', ...replay.env, HEALTH_PORT: String(port), KUBECONFIG: kubeconfig },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
        timeoutMs: 60_000,
      });
      console.log(`      npm ci --omit=dev ${(replay.runs[0].ms / 1000).toFixed(1)} s; SIGTERM to exit ${result.stopMs} ms`);
      expect(result.code, result.output).to.equal(0);
      expect(result.output).to.include('operator stopped');
    } finally {
      await cluster.close();
    }
  });
});
