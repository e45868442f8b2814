/**
 * `rxkube dev` on a project `rxkube init` wrote, run as a user runs it (the compiled CLI in its
 * own process, kubectl against its cluster), without packing: the project's node_modules links
 * this repository's, with rxkube itself linked to the repository root (its built dist/).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startApiServer } from '@rxkube/apiserver';
import { expect } from 'chai';
import { main as init } from '../../lib/cli/init.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const ENV = { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}` };
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function quietly<T>(body: () => Promise<T>): Promise<T> {
  const { log, error } = console;
  console.log = console.error = () => {};
  try {
    return await body();
  } finally {
    Object.assign(console, { log, error });
  }
}

/** A project of `rxkube init`, its node_modules this repository's, compiled and with deploy/ generated. */
async function project(dir: string, args: readonly string[] = []): Promise<void> {
  expect(await quietly(() => init([dir, '--no-install', ...args]))).to.equal(0);
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules')).filter((e) => e !== '.bin'))
    symlinkSync(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  for (const entry of readdirSync(join(ROOT, 'node_modules/.bin')))
    symlinkSync(join(ROOT, 'node_modules/.bin', entry), join(dir, 'node_modules/.bin', entry));
  // As npm installs rxkube: the package, and its command in .bin (npm run dev runs `rxkube dev`).
  symlinkSync(ROOT, join(dir, 'node_modules/rxkube'));
  symlinkSync(join(ROOT, 'bin/rxkube.js'), join(dir, 'node_modules/.bin/rxkube'));
  await run(join(dir, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: dir, env: ENV });
  await run(process.execPath, [join(ROOT, 'bin/rxkube.js'), 'manifests', '--module', 'dist/src/operator.js', '--kustomize', 'deploy'], {
    cwd: dir,
    env: ENV,
  });
}

interface Dev {
  readonly child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, as a process manager sends it (npm: SIGINT to its group, as Ctrl-C); resolves with the exit code (npm's: null, it ends by the signal it got). */
  stop(): Promise<number | null>;
}

/** `rxkube dev`, or with `npm: true` the project's `npm run dev` in a process group of its own, stopped as Ctrl-C stops it (SIGINT to the group). */
function startDev(dir: string, args: readonly string[] = [], { npm = false } = {}): Dev {
  const child = npm
    ? spawn('npm', ['run', 'dev', ...(args.length > 0 ? ['--', ...args] : [])], {
        cwd: dir,
        env: ENV,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
    : spawn(process.execPath, [join(ROOT, 'bin/rxkube.js'), 'dev', ...args], { cwd: dir, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set<() => void>();
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const check of waiters) check();
    });
  }
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 180_000) {
      return new Promise((done, fail) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`rxkube dev did not print ${pattern} within ${timeoutMs} ms; it printed:\n${output}`));
        }, timeoutMs);
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          clearTimeout(timer);
          waiters.delete(check);
          done(match);
        };
        waiters.add(check);
        check();
        void exited.then(() =>
          setTimeout(
            () =>
              waiters.has(check) &&
              (clearTimeout(timer), waiters.delete(check), fail(new Error(`rxkube dev exited without printing ${pattern}:\n${output}`))),
            100,
          ),
        );
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        if (npm) process.kill(-child.pid!, 'SIGINT');
        else child.kill('SIGTERM');
      }
      return exited;
    },
  };
}

const kubectl = (dir: string, kubeconfig: string, ...args: string[]) =>
  run('kubectl', ['--kubeconfig', kubeconfig, ...args], { cwd: dir, env: ENV, timeout: 90_000 });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('cli: rxkube dev, the local loop of a project rxkube init wrote', function () {
  this.timeout(600_000);
  const work = mkdtempSync(join(tmpdir(), 'rxkube-dev-spec-'));
  const hello = join(work, 'hello');
  const running: Dev[] = [];
  const dev = (dir: string, args?: readonly string[], options?: { npm?: boolean }) => {
    const d = startDev(dir, args, options);
    running.push(d);
    return d;
  };

  before(async function () {
    // The project imports rxkube's entry points, which are the built dist/ (npm test builds it first).
    if (!existsSync(join(ROOT, 'dist/cli/dev.js'))) await run('npm', ['run', '-s', 'build'], { cwd: ROOT, env: ENV, timeout: 300_000 });
    const started = Date.now();
    await project(hello);
    console.log(`      init --no-install, tsc and manifests on linked node_modules: ${seconds(Date.now() - started)}`);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('init → npm run dev → kubectl apply -f samples/: the sample Ready, reconciled by the operator on this machine as its ServiceAccount; a saved change restarts it; Ctrl-C stops it all', async () => {
    const started = Date.now();
    const loop = dev(hello, [], { npm: true });
    const [, kubeconfig] = (await loop.waitFor(/export KUBECONFIG=(\S+)/)) as [string, string];
    await loop.waitFor(/rxkube dev: ready/);
    const output = loop.output();
    expect(output)
      .to.include('it runs no containers')
      .and.match(/not applied: Service\/hello-metrics, Deployment\/hello-controller/);
    expect(output).to.include('running: node --watch dist/src/main.js as ServiceAccount hello-system/hello-controller');
    expect(readFileSync(join(hello, '.rxkube/dev/operator.kubeconfig'), 'utf8')).to.include(
      '"as": "system:serviceaccount:hello-system:hello-controller"',
    );
    expect(
      (await kubectl(hello, kubeconfig, 'get', 'deployments', '-A', '-o', 'name')).stdout.trim(),
      'no Deployment pretending to run the operator',
    ).to.equal('');

    await kubectl(hello, kubeconfig, 'apply', '-f', 'samples/');
    await kubectl(hello, kubeconfig, 'wait', '--for=condition=Ready', 'greeting/world', '--timeout=120s');
    console.log(`      rxkube dev start to the first Ready sample: ${seconds(Date.now() - started)}`);
    expect((await kubectl(hello, kubeconfig, 'get', 'configmap', 'world-greeting', '-o', 'jsonpath={.data.message}')).stdout).to.equal(
      'Hello, world!',
    );
    const [, firstPid] = (await loop.waitFor(/"pid":(\d+)[^\n]*"msg":"operator running/)) as [string, string];

    // tsc --watch recompiles, node --watch restarts the operator, which reconciles again.
    const controller = join(hello, 'src/controller.ts');
    writeFileSync(controller, readFileSync(controller, 'utf8').replace("?? 'Hello'", "?? 'Howdy'"));
    const restarted = Date.now();
    for (;;) {
      const message = (await kubectl(hello, kubeconfig, 'get', 'greeting', 'world', '-o', 'jsonpath={.status.message}')).stdout;
      if (message === 'Howdy, world!') break;
      expect(Date.now() - restarted, `status.message is still ${message}`).to.be.below(120_000);
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(`      a saved change to the reconciler seen in status: ${seconds(Date.now() - restarted)}`);
    const pids = [...loop.output().matchAll(/"pid":(\d+)[^\n]*"msg":"operator running/g)].map((m) => Number(m[1]));
    expect(pids.length).to.be.at.least(2);
    expect(pids.at(-1)).to.not.equal(Number(firstPid));

    await loop.stop();
    expect(loop.output()).to.include('signal SIGINT: stopping').and.include('"msg":"operator stopped"');
    expect(pids.filter(alive), 'no operator left running').to.deep.equal([]);
    expect(alive(-loop.child.pid!), 'nothing of npm run dev left running').to.equal(false);
  });

  it('npm run deploy of the same deploy/ to the embedded server: accepted and rolled out, though no container runs (the time a newcomer waits)', async () => {
    const server = await startApiServer({ port: 0, simulate: { deployments: { readyAfterMs: 1000 } } });
    try {
      const kubeconfig = join(work, 'deploy-kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      const started = Date.now();
      await run('npm', ['run', 'deploy'], { cwd: hello, env: { ...ENV, KUBECONFIG: kubeconfig } });
      await kubectl(hello, kubeconfig, '-n', 'hello-system', 'rollout', 'status', 'deploy/hello-controller', '--timeout=60s');
      console.log(`      npm run deploy and rollout status on the embedded server: ${seconds(Date.now() - started)}`);
    } finally {
      await server.close();
    }
  });

  it('a rule missing from deploy/ is a 403 on the laptop, and rxkube dev names the rule', async () => {
    const rbac = join(hello, 'deploy/rbac.yaml');
    const original = readFileSync(rbac, 'utf8');
    // The ConfigMap rule without patch (server-side apply), as an operator whose RBAC lags behind its code would have it.
    const lagging = original.replace(/(resources:\n\s+- configmaps\n\s+verbs:\n(?:\s+- \w+\n)*?)\s+- patch\n/, '$1');
    expect(lagging, 'the generated rule for configmaps has patch').to.not.equal(original);
    writeFileSync(rbac, lagging);
    try {
      const loop = dev(hello);
      const [, kubeconfig] = (await loop.waitFor(/export KUBECONFIG=(\S+)/)) as [string, string];
      await loop.waitFor(/rxkube dev: ready/);
      // Before any request: the operator's own check at start finds the verb missing.
      await loop.waitFor(
        /rxkube dev: the operator's RBAC check at start: the operator's ServiceAccount hello-system\/hello-controller may not patch configmaps\. The RBAC of deploy\/ lacks this rule/,
        120_000,
      );
      await kubectl(hello, kubeconfig, 'apply', '-f', 'samples/');
      await loop.waitFor(/rxkube dev: 403 Forbidden/, 120_000);
      expect(loop.output()).to.include(
        "rxkube dev: 403 Forbidden: the operator's ServiceAccount hello-system/hello-controller may not patch configmaps in the namespace default. The RBAC of deploy/ lacks this rule, and the cluster would refuse it the same way:\n" +
          '    - apiGroups: [""]\n      resources: ["configmaps"]\n      verbs: ["patch"]\n',
      );
      expect(loop.output().match(/rxkube dev: 403 Forbidden/g), 'each missing rule named once').to.have.length(1);
    } finally {
      writeFileSync(rbac, original);
    }
  });

  it("--webhooks on a cluster named by --kubeconfig: a half-applied deploy's webhook is pointed at this machine, the API server calls it, and it is deleted on exit", async () => {
    const hooks = join(work, 'hooks');
    await project(hooks, ['--webhooks']);
    const server = await startApiServer({ port: 0 });
    try {
      const kubeconfig = join(work, 'hooks-kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      // kubectl apply -k deploy without cert-manager: all but the Issuer and Certificate land, the
      // webhook configuration with them, and it names a Service nothing serves.
      await kubectl(hooks, kubeconfig, 'apply', '-k', 'deploy').catch(() => undefined);
      const blocked = await kubectl(hooks, kubeconfig, 'apply', '-f', 'samples/').catch((err: { stderr: string }) => err.stderr);
      expect(blocked).to.include('service "hooks-webhook" not found');

      const loop = dev(hooks, ['--kubeconfig', kubeconfig]);
      await loop.waitFor(/rxkube dev: ready/);
      const output = loop.output();
      expect(output.indexOf(`rxkube dev: cluster: context "rxkube" (${server.url}) of ${kubeconfig}`), 'the cluster named first').to.equal(
        0,
      );
      expect(output).to.match(/webhooks: the configurations call https:\/\/127\.0\.0\.1:\d+ /);
      await loop.waitFor(/webhook server listening/);
      expect((await kubectl(hooks, kubeconfig, 'apply', '-f', 'samples/')).stdout).to.include('greeting.example.com/world created');
      const blank = join(work, 'blank.yaml');
      writeFileSync(blank, 'apiVersion: example.com/v1\nkind: Greeting\nmetadata:\n  name: blank\nspec:\n  name: "  "\n');
      const denied = await kubectl(hooks, kubeconfig, 'apply', '-f', blank).catch((err: { stderr: string }) => err.stderr);
      expect(denied).to.include('denied the request: spec.name must not be blank');
      // The conversion webhook too: v2 is served by converting the stored v1.
      expect(
        (await kubectl(hooks, kubeconfig, 'get', 'greetings.v2.example.com', 'world', '-o', 'jsonpath={.spec.recipient}')).stdout,
      ).to.equal('world');
      await kubectl(hooks, kubeconfig, 'wait', '--for=condition=Ready', 'greeting/world', '--timeout=120s');

      expect(await loop.stop()).to.equal(0);
      expect(loop.output()).to.match(/deleted ValidatingWebhookConfiguration\/\S+ \(they pointed at this machine\)/);
      expect((await kubectl(hooks, kubeconfig, 'get', 'validatingwebhookconfigurations', '-o', 'name')).stdout.trim()).to.equal('');
      expect((await kubectl(hooks, kubeconfig, 'apply', '-f', blank)).stdout, 'no webhook left blocking writes').to.include(
        'greeting.example.com/blank created',
      );
    } finally {
      await server.close();
    }
  });

  it('the scaffold compiles under its own strict settings (exactOptionalPropertyTypes) and with skipLibCheck off, @types/ws installed for it', async () => {
    const tsconfig = JSON.parse(readFileSync(join(hello, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    expect(tsconfig.compilerOptions).to.include({ strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true });
    const pkg = JSON.parse(readFileSync(join(hello, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies).to.include.keys('@types/ws');
    const result = await run(join(hello, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--noEmit', '--skipLibCheck', 'false'], {
      cwd: hello,
      env: ENV,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      () => '',
      (err: Error & { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(result.split('\n').filter((line) => line.includes('error TS'))).to.deep.equal([]);
  });

  it('names what is missing before starting anything: deploy/, the compiler, --context without --kubeconfig', async () => {
    const empty = join(work, 'empty');
    mkdirSync(empty);
    const fails = async (args: readonly string[]) =>
      run(process.execPath, [join(ROOT, 'bin/rxkube.js'), 'dev', ...args], { cwd: empty, env: ENV }).catch(
        (err: { code: number; stderr: string }) => err,
      );
    expect(await fails([]))
      .to.include({ code: 1 })
      .and.have.property('stderr')
      .that.includes('deploy/kustomization.yaml: no such file; generate deploy/ first: npm run manifests');
    expect(await fails(['--context', 'x']))
      .to.include({ code: 2 })
      .and.have.property('stderr')
      .that.includes('--context needs --kubeconfig');
  });
});
