/**
 * What a user gets from npm: the packed tarballs installed into empty projects with nothing
 * else — the toolkit alone, as an operator's production install has it, and with the embedded
 * API server beside it, as its tests have it — used from plain Node (each claimed version), from a
 * strict TypeScript project and as a command. Run by `npm run test:package` (CI runs it after
 * `npm test`).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { expect } from 'chai';
import { startApiServer } from '@rxkube/apiserver';
import { packOnce, packServerOnce, type PackedFile } from './tarball.js';

const run = promisify(execFile);
const ROOT = new URL('../', import.meta.url).pathname;
/** The floor of `engines` and the current LTS line; the repository itself runs on 24. */
const NODE_VERSIONS = (process.env['RXKUBE_CONSUMER_NODES'] ?? '22.19.0,26').split(',').filter(Boolean);
const ENTRY_POINTS = [
  'rxkube',
  'rxkube/pipeline',
  'rxkube/kube',
  'rxkube/testing',
  '@rxkube/apiserver',
  'rxkube/testing/cluster',
  'rxkube/webhooks',
];
/** The runtime dependencies of the server package, which an operator's production install must not download. */
const SERVER_ONLY = ['@rxkube/apiserver', '@bufbuild/cel', '@bufbuild/protobuf', '@peculiar/x509', 're2js', 'reflect-metadata'];

async function sh(file: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }) {
  try {
    return await run(file, [...args], { maxBuffer: 64 * 1024 * 1024, timeout: 240_000, ...options });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

function withNode(binDir: string): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${binDir}${delimiter}${process.env['PATH'] ?? ''}` };
}

const QUICKSTART = `
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
${ENTRY_POINTS.map((name, i) => `import * as entry${i} from '${name}';`).join('\n')}
const { Operator, UpdateControl } = entry0;
const { startApiServer } = entry4;
for (const [i, m] of [entry0, entry1, entry2, entry3, entry4, entry5].entries()) {
  if (Object.keys(m).length === 0) throw new Error('entry point ' + i + ' exports nothing');
}
// rxkube/operators, the deprecated old name of rxkube/pipeline, is the same module.
const operators = await import('rxkube/operators');
if (JSON.stringify(Object.keys(operators).sort()) !== JSON.stringify(Object.keys(entry1).sort()) || operators.reconcileEach !== entry1.reconcileEach) {
  throw new Error('rxkube/operators is not rxkube/pipeline');
}
const server = await startApiServer();
const kubeConfig = server.kubeConfig();
await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: {
  metadata: { name: 'greetings.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'greetings', singular: 'greeting', kind: 'Greeting' },
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }] },
} });
const operator = new Operator({ kubeConfig });
operator.register({ reconcile: (g) => UpdateControl.patchStatus({ ...g, status: { message: 'Hello, ' + g.spec.name + '!' } }) },
  { resource: { apiVersion: 'example.com/v1', kind: 'Greeting', plural: 'greetings' } });
await operator.start();
const greetings = kubeConfig.makeApiClient(CustomObjectsApi);
const where = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'greetings' };
await greetings.createNamespacedCustomObject({ ...where, body: { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'world' }, spec: { name: 'world' } } });
let status;
for (let i = 0; i < 400 && !status?.message; i++) {
  await new Promise((resolve) => setTimeout(resolve, 25));
  status = (await greetings.getNamespacedCustomObject({ ...where, name: 'world' })).status;
}
console.log(status?.message ?? 'no status');
await operator.stop();
await server.close();
`;

/** The quickstart as it runs in production: rxkube alone, against the cluster of a kubeconfig file. */
const PRODUCTION = `
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Operator, UpdateControl } from 'rxkube';
import { loadKubeConfig } from 'rxkube/kube';
import { testScheduler } from 'rxkube/testing';
testScheduler();
const kubeConfig = loadKubeConfig({ kubeconfigPath: process.argv[2] });
const operator = new Operator({ kubeConfig });
operator.register({ reconcile: (g) => UpdateControl.patchStatus({ ...g, status: { message: 'Hello, ' + g.spec.name + '!' } }) },
  { resource: { apiVersion: 'example.com/v1', kind: 'Greeting', plural: 'greetings' } });
await operator.start();
const greetings = kubeConfig.makeApiClient(CustomObjectsApi);
const where = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'greetings' };
await greetings.createNamespacedCustomObject({ ...where, body: { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'world' }, spec: { name: 'world' } } });
let status;
for (let i = 0; i < 400 && !status?.message; i++) {
  await new Promise((resolve) => setTimeout(resolve, 25));
  status = (await greetings.getNamespacedCustomObject({ ...where, name: 'world' })).status;
}
console.log(status?.message ?? 'no status');
await operator.stop();
`;

/** The production quickstart traced: the OpenTelemetry SDK as the docs install it, spans kept in memory and counted. */
const TRACED = `
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Operator, UpdateControl } from 'rxkube';
import { loadKubeConfig } from 'rxkube/kube';
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const kubeConfig = loadKubeConfig({ kubeconfigPath: process.argv[2] });
const operator = new Operator({ kubeConfig, tracing: true });
const tracer = trace.getTracer('consumer');
operator.register({ reconcile: (g) => tracer.startActiveSpan('user work', (span) => { span.end(); return UpdateControl.patchStatus({ ...g, status: { message: 'Hello, ' + g.spec.name + '!' } }); }) },
  { resource: { apiVersion: 'example.com/v1', kind: 'Greeting', plural: 'greetings' } });
await operator.start();
const greetings = kubeConfig.makeApiClient(CustomObjectsApi);
const where = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'greetings' };
await greetings.createNamespacedCustomObject({ ...where, body: { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'traced' }, spec: { name: 'traced' } } });
let status;
for (let i = 0; i < 400 && !status?.message; i++) {
  await new Promise((resolve) => setTimeout(resolve, 25));
  status = (await greetings.getNamespacedCustomObject({ ...where, name: 'traced' })).status;
}
await operator.stop();
const spans = exporter.getFinishedSpans();
const run = spans.find((s) => s.name === 'greetings.example.com');
const user = spans.find((s) => s.name === 'user work');
console.log(JSON.stringify({ message: status?.message, runs: spans.filter((s) => s.name === 'greetings.example.com').length, userUnderRun: user?.parentSpanContext?.spanId === run?.spanContext().spanId }));
`;

const GREETING_CRD: V1CustomResourceDefinition = {
  metadata: { name: 'greetings.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'greetings', singular: 'greeting', kind: 'Greeting' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

const TS_CONSUMER = `
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { Subject, lastValueFrom, toArray } from 'rxjs';
import { GenericRetry, Operator, UpdateControl, type Reconciler, type ResourceEvent } from 'rxkube';
import { reconcileEach, resourceEvent } from 'rxkube/pipeline';
import { builtinResources, createKubeClient } from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';
import { startTestCluster } from 'rxkube/testing/cluster';

interface Note extends KubernetesObject {
  spec: { text: string };
  status?: { length?: number };
}

const reconciler: Reconciler<Note> = {
  reconcile: (note) => UpdateControl.patchStatus({ ...note, status: { length: note.spec.text.length } }),
};

// The user's own rxjs Subject and client-node KubeConfig type-check against rxkube's.
const events = new Subject<ResourceEvent>();
const outcomes = lastValueFrom(events.pipe(reconcileEach(async () => ({}), { retry: GenericRetry.defaults() }), toArray()));
events.next(resourceEvent('a'));
events.complete();
const runs = await outcomes;

const server = await startApiServer();
const kubeConfig: KubeConfig = server.kubeConfig();
const operator = new Operator({ kubeConfig });
operator.register(reconciler, { resource: { apiVersion: 'example.com/v1', kind: 'Note', plural: 'notes' } });
const namespaces = await createKubeClient(kubeConfig).resource(builtinResources.namespace).list();
console.log(\`runs=\${runs.length} namespaces=\${namespaces.items.length > 0}\`);
await operator.stop();
await server.close();
const cluster = await startTestCluster();
console.log(\`test cluster at \${cluster.server.url.startsWith('http') ? 'an address' : 'nowhere'}\`);
await cluster.close();
`;

const TS_CONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noPropertyAccessFromIndexSignature: true,
    skipLibCheck: false,
    outDir: 'out',
    types: ['node'],
  },
  files: ['consumer.ts'],
};

describe('the npm package, installed into an empty project', function () {
  this.timeout(600_000);
  const work = mkdtempSync(join(tmpdir(), 'rxkube-package-'));
  const consumer = join(work, 'consumer');
  const production = join(work, 'production');
  let tarball = '';
  let packed: PackedFile[] = [];
  let serverPacked: PackedFile[] = [];
  let serverTarball = '';
  const nodeBins = new Map<string, string>();

  before(async () => {
    const [info, server] = await Promise.all([packOnce(), packServerOnce()]);
    tarball = info.path;
    packed = [...info.files];
    serverPacked = [...server.files];
    serverTarball = server.path;
    for (const t of [info, server]) {
      console.log(
        `      tarball ${t.filename}: ${(t.size / 1024).toFixed(0)} kB packed, ${(t.unpackedSize / 1024).toFixed(0)} kB unpacked, ${t.files.length} files`,
      );
    }
    const peers = ['rxjs@^7.8.2', '@kubernetes/client-node@^2.0.1'];
    mkdirSync(production);
    writeFileSync(join(production, 'package.json'), JSON.stringify({ name: 'production', private: true, type: 'module' }));
    await sh('npm', ['install', '--no-audit', '--no-fund', tarball, ...peers], { cwd: production });
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await sh(
      'npm',
      ['install', '--no-audit', '--no-fund', tarball, server.path, ...peers, 'typescript@^5.9.0', '@types/node@^22.19.0', '@types/ws@^8'],
      { cwd: consumer },
    );
    for (const dir of [production, consumer]) {
      const installed = await sh('du', ['-sk', join(dir, 'node_modules')], { cwd: dir });
      console.log(
        `      ${dir === production ? 'rxkube and its peers' : 'with the server, TypeScript and types'}: node_modules ${(Number(installed.stdout.split('\t')[0]) / 1024).toFixed(1)} MB`,
      );
    }
    for (const version of NODE_VERSIONS) {
      const dir = join(work, `node-${version}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), '{"private":true}');
      await sh('npm', ['install', '--no-audit', '--no-fund', `node@${version}`], { cwd: dir });
      nodeBins.set(version, join(dir, 'node_modules', '.bin'));
    }
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('the tarball holds dist/, bin/, README and LICENSE — no spec/, bench/, .ci/ and no TypeScript sources but .d.ts', () => {
    const paths = packed.map((f) => f.path);
    expect(paths).to.include.members(['package.json', 'README.md', 'LICENSE', 'bin/rxkube.js', 'dist/index.js', 'dist/index.d.ts']);
    const stray = paths.filter(
      (p) => !/^(dist\/|bin\/|README\.md$|LICENSE$|package\.json$)/.test(p) || (p.endsWith('.ts') && !p.endsWith('.d.ts')),
    );
    expect(stray).to.deep.equal([]);
  });

  it("the server's tarball holds its dist/, bin/, README and LICENSE only", () => {
    const paths = serverPacked.map((f) => f.path);
    expect(paths).to.include.members([
      'package.json',
      'LICENSE',
      'bin/rxkube-apiserver.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli.js',
    ]);
    const stray = paths.filter(
      (p) => !/^(dist\/|bin\/|README\.md$|LICENSE$|package\.json$)/.test(p) || (p.endsWith('.ts') && !p.endsWith('.d.ts')),
    );
    expect(stray).to.deep.equal([]);
  });

  it("an operator's production install (rxkube and its peers) downloads none of the server's dependencies, and runs the quickstart against a kubeconfig", async () => {
    const present = SERVER_ONLY.filter((name) => existsSync(join(production, 'node_modules', name)));
    expect(present).to.deep.equal([]);
    const server = await startApiServer({ port: 0 });
    try {
      await server.kubeConfig().makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: GREETING_CRD });
      const kubeconfig = join(work, 'production-kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      writeFileSync(join(production, 'quickstart.mjs'), PRODUCTION);
      const { stdout } = await sh(process.execPath, ['quickstart.mjs', kubeconfig], { cwd: production });
      expect(stdout.split('\n'), stdout).to.include('Hello, world!');
    } finally {
      await server.close();
    }
  });

  it("beside the OpenTelemetry SDK installed as the docs say, a traced operator's spans reach the provider the user registered, one copy of the API in the project", async () => {
    const traced = join(work, 'traced');
    mkdirSync(traced);
    writeFileSync(join(traced, 'package.json'), JSON.stringify({ name: 'traced', private: true, type: 'module' }));
    const otel = ['@opentelemetry/api@1.9', '@opentelemetry/sdk-trace-base@2', '@opentelemetry/context-async-hooks@2'];
    await sh('npm', ['install', '--no-audit', '--no-fund', tarball, 'rxjs@^7.8.2', '@kubernetes/client-node@^2.0.1', ...otel], {
      cwd: traced,
    });
    const copies = (await sh('npm', ['ls', '@opentelemetry/api', '--all', '--parseable'], { cwd: traced })).stdout
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(
      copies.map((c) => c.slice(traced.length)),
      'copies of @opentelemetry/api',
    ).to.deep.equal(['/node_modules/@opentelemetry/api']);
    const server = await startApiServer({ port: 0 });
    try {
      await server.kubeConfig().makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: GREETING_CRD });
      const kubeconfig = join(work, 'traced-kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      writeFileSync(join(traced, 'traced.mjs'), TRACED);
      const { stdout, stderr } = await sh(process.execPath, ['traced.mjs', kubeconfig], {
        cwd: traced,
        env: { ...process.env, LOG_LEVEL: 'warn' },
      });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { message?: string; runs: number; userUnderRun: boolean };
      expect(result.message, `${stdout}\n${stderr}`).to.equal('Hello, traced!');
      expect(result.runs).to.be.at.least(1);
      expect(result.userUnderRun).to.equal(true);
    } finally {
      await server.close();
    }
  });

  it('without the server package, rxkube apiserver says how to install it, and rxkube/testing/cluster loads but starting a cluster names the package and its install command', async () => {
    const cli = await sh(process.execPath, [join(production, 'node_modules/rxkube/bin/rxkube.js'), 'apiserver', '--help'], {
      cwd: production,
    }).catch((err: Error) => err);
    expect(String(cli instanceof Error ? cli.message : cli.stderr)).to.include('npm install --save-dev @rxkube/apiserver');
    writeFileSync(
      join(production, 'cluster.mjs'),
      "await import('rxkube/testing');\nconsole.log('marbles loaded');\nconst { startTestCluster } = await import('rxkube/testing/cluster');\nconsole.log('cluster helpers loaded');\nawait startTestCluster();\n",
    );
    const cluster = await sh(process.execPath, ['cluster.mjs'], { cwd: production }).catch((err: Error) => err);
    expect(cluster).to.be.instanceOf(Error);
    expect((cluster as Error).message)
      .to.include('marbles loaded\ncluster helpers loaded')
      .and.include(
        'rxkube/testing/cluster runs the embedded API server of the package @rxkube/apiserver, which is not installed: npm install --save-dev @rxkube/apiserver',
      );
  });

  it('publint finds nothing to fix in either package', async () => {
    for (const path of [tarball, (await packServerOnce()).path]) {
      const { stdout } = await sh(join(ROOT, 'node_modules/.bin/publint'), ['--strict', path], { cwd: ROOT });
      expect(stdout, path).to.not.match(/error|warning|suggestion/i);
    }
  });

  it('no source maps (they would point at sources not shipped), no install-time script, no dependency the code does not import', async () => {
    expect(packed.filter((f) => f.path.endsWith('.map')).map((f) => f.path)).to.deep.equal([]);
    const { stdout: index } = await sh('tar', ['-xzOf', tarball, 'package/dist/index.js'], { cwd: work });
    expect(index).to.not.include('sourceMappingURL');
    const { stdout } = await sh('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: work });
    const published = JSON.parse(stdout) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(
      Object.keys(published.scripts).filter((name) => ['prepare', 'preinstall', 'install', 'postinstall'].includes(name)),
    ).to.deep.equal([]);
    expect(published.dependencies).to.not.have.property('js-yaml');
  });

  it('@arethetypeswrong/cli resolves every entry point for ESM under node16 and bundler resolution', async () => {
    // attw exits non-zero on a problem the esm-only profile keeps; the JSON is checked as well.
    const { stdout } = await sh(join(ROOT, 'node_modules/.bin/attw'), [tarball, '--profile', 'esm-only', '--format', 'json'], {
      cwd: ROOT,
    });
    const report = JSON.parse(stdout) as {
      analysis: { entrypoints: Record<string, unknown> };
      problems: Record<string, { entrypoint: string; resolutionKind: string }[]>;
    };
    expect(Object.keys(report.analysis.entrypoints)).to.include.members([
      '.',
      ...ENTRY_POINTS.filter((name) => name.startsWith('rxkube/')).map((name) => `.${name.slice('rxkube'.length)}`),
    ]);
    const esmProblems = Object.values(report.problems)
      .flat()
      .filter((problem) => problem.resolutionKind === 'node16-esm' || problem.resolutionKind === 'bundler');
    expect(esmProblems).to.deep.equal([]);
  });

  it('a strict TypeScript consumer (nodenext, exactOptionalPropertyTypes, noUncheckedIndexedAccess, skipLibCheck false) compiles and runs', async () => {
    writeFileSync(join(consumer, 'consumer.ts'), TS_CONSUMER);
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(TS_CONFIG, null, 2));
    const started = Date.now();
    await sh(join(consumer, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: consumer });
    console.log(`      consumer tsc: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const { stdout } = await sh(process.execPath, ['out/consumer.js'], { cwd: consumer });
    expect(stdout.split('\n'), stdout).to.include('runs=1 namespaces=true').and.include('test cluster at an address');
  });

  it("getting-started's steps, as written, in a fresh npm init project (npm 11 writes type commonjs): the quickstart runs with plain node; CommonJS code can require('rxkube')", async () => {
    const page = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8');
    const section = page.slice(page.indexOf('## In your own project'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const commands = block
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    expect(commands, block).to.include('node quickstart.ts');
    const fresh = join(work, 'fresh');
    mkdirSync(fresh);
    writeFileSync(join(fresh, 'quickstart.ts'), readFileSync(join(ROOT, 'docs/examples/quickstart.ts'), 'utf8'));
    const env = withNode(dirname(process.execPath));
    let output = '';
    for (const command of commands) {
      // The packages from the tarballs, not the registry.
      const line = command
        .replace(/^npm install rxkube /, `npm install --no-audit --no-fund ${tarball} `)
        .replace(/^npm install --save-dev @rxkube\/apiserver$/, `npm install --no-audit --no-fund --save-dev ${serverTarball}`);
      output += (await sh('sh', ['-c', line], { cwd: fresh, env })).stdout;
    }
    expect(output.split('\n'), output).to.include('Hello, world!');
    writeFileSync(
      join(fresh, 'check.cjs'),
      "console.log(typeof require('rxkube').Operator, typeof require('rxkube/kube').createKubeClient);\n",
    );
    expect((await sh('node', ['check.cjs'], { cwd: fresh, env })).stdout.trim()).to.equal('function function');
  });

  for (const version of NODE_VERSIONS) {
    describe(`on Node ${version}`, () => {
      it('plain node imports every entry point and runs the quickstart to Hello, world!', async () => {
        writeFileSync(join(consumer, 'quickstart.mjs'), QUICKSTART);
        const env = withNode(nodeBins.get(version)!);
        const { stdout: v } = await sh('node', ['--version'], { cwd: consumer, env });
        expect(v.trim()).to.match(new RegExp(`^v${version.replace(/\./g, '\\.')}`));
        const { stdout } = await sh('node', ['quickstart.mjs'], { cwd: consumer, env });
        expect(stdout.split('\n'), stdout).to.include('Hello, world!');
      });

      it('the compiled TypeScript consumer runs', async function () {
        if (!existsSync(join(consumer, 'out/consumer.js'))) this.skip();
        const { stdout } = await sh('node', ['out/consumer.js'], { cwd: consumer, env: withNode(nodeBins.get(version)!) });
        expect(stdout.split('\n'), stdout).to.include('runs=1 namespaces=true');
      });

      it("npx rxkube apiserver (the server package through the toolkit's command) serves kubectl", async function () {
        const kubectl = await sh('kubectl', ['version', '--client'], { cwd: consumer }).catch(() => undefined);
        if (kubectl === undefined) {
          console.log('      kubectl is not on PATH: skipped');
          this.skip();
        }
        const kubeconfig = join(consumer, `kubeconfig-${version}`);
        const server = spawn('npx', ['rxkube', 'apiserver', '--port', '0', '--kubeconfig', kubeconfig], {
          cwd: consumer,
          env: withNode(nodeBins.get(version)!),
          stdio: 'pipe',
          detached: true,
        });
        let output = '';
        server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        try {
          const deadline = Date.now() + 60_000;
          while (!(existsSync(kubeconfig) && statSync(kubeconfig).size > 0)) {
            if (Date.now() > deadline || server.exitCode !== null) throw new Error(`no kubeconfig from rxkube apiserver:\n${output}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(readFileSync(kubeconfig, 'utf8')).to.include('server:');
          const { stdout } = await sh('kubectl', ['--kubeconfig', kubeconfig, 'get', 'namespaces', '-o', 'name'], { cwd: consumer });
          expect(stdout).to.include('namespace/default');
        } finally {
          // npx does not forward signals: stop the whole process group it started.
          if (server.pid !== undefined) process.kill(-server.pid, 'SIGTERM');
        }
      });
    });
  }
});
