/**
 * `rxkube init` without installing: the files it writes and the mistakes it names. The project
 * itself (npm ci && npm test on the packed tarball) is proven by spec-package/init.spec.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { installHint, main as init } from '../../lib/cli/init.js';
import { guessPlural } from '../../lib/cli/plural.js';

async function quietly(args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = console.error = (...parts: unknown[]) => lines.push(parts.join(' '));
  try {
    return { code: await init(args), output: lines.join('\n') };
  } finally {
    Object.assign(console, { log, error });
  }
}

describe('rxkube init', () => {
  const work = mkdtempSync(join(tmpdir(), 'rxkube-init-spec-'));

  it('writes a project for the kind and group asked for, depending on rxkube as a package', async () => {
    const dir = join(work, 'Shop Operator');
    const { code, output } = await quietly([dir, '--kind', 'WebShop', '--group', 'shop.example.org', '--no-install']);
    expect(code, output).to.equal(0);
    expect(output).to.include("wrote the WebShop operator 'shop-operator'");
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
    expect(files.sort()).to.deep.equal(
      [
        '.dockerignore',
        '.gitignore',
        '.npmrc',
        'Dockerfile',
        'samples/webshop.yaml',
        'README.md',
        'package.json',
        'src/controller.ts',
        'src/main.ts',
        'src/operator.ts',
        'src/webshop.ts',
        'test/integration.test.ts',
        'test/scheduling.test.ts',
        'tsconfig.json',
      ].sort(),
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
    expect(pkg.name).to.equal('shop-operator');
    expect(pkg.dependencies['rxkube']).to.match(/^\^\d+\.\d+\.\d+/);
    expect(readFileSync(join(dir, 'src/webshop.ts'), 'utf8'))
      .to.include("group: 'shop.example.org'")
      .and.include('export const WEB_SHOP = WebShopResource.descriptor;');
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8'))
      .to.include('npm ci --omit=dev')
      .and.include('USER node')
      .and.include('ENTRYPOINT ["node", "dist/src/main.js"]');
  });

  it('plurals as Kubernetes forms them: Policy → policies, Proxy → proxies, Status → statuses, Ingress → ingresses, Endpoints → endpoints; --plural for another', async () => {
    const kinds = ['Policy', 'Proxy', 'Status', 'Ingress', 'Endpoints', 'Greeting', 'Gateway', 'Box', 'Match'];
    expect(kinds.map(guessPlural)).to.deep.equal([
      'policies',
      'proxies',
      'statuses',
      'ingresses',
      'endpoints',
      'greetings',
      'gateways',
      'boxes',
      'matches',
    ]);
    const policy = join(work, 'policy');
    expect((await quietly([policy, '--kind', 'NetworkPolicy', '--no-install'])).code).to.equal(0);
    const source = readFileSync(join(policy, 'src/networkpolicy.ts'), 'utf8');
    expect(source).to.include("plural: 'networkpolicies'");
    expect(readFileSync(join(policy, 'src/main.ts'), 'utf8')).to.include('get networkpolicies,configmaps');
    expect(readFileSync(join(policy, 'README.md'), 'utf8')).to.include('kubectl get networkpolicies');
    const octopus = join(work, 'octopus');
    expect((await quietly([octopus, '--kind', 'Octopus', '--plural', 'octopodes', '--no-install'])).code).to.equal(0);
    expect(readFileSync(join(octopus, 'src/octopus.ts'), 'utf8')).to.include("plural: 'octopodes'");
    const bad = await quietly([join(work, 'c'), '--kind', 'Octopus', '--plural', 'Octopi', '--no-install']);
    expect(bad.code).to.equal(2);
    expect(bad.output).to.include("--plural 'Octopi' must be lowercase");
  });

  it('after a failed npm install, the same command again resumes in the directory it wrote; the error says so and names --rxkube', async () => {
    const dir = join(work, 'resumed');
    // Offline, npm cannot find rxkube@^version (it is in no cache): the install fails as an E404 would.
    const offline = process.env['npm_config_offline'];
    process.env['npm_config_offline'] = 'true';
    let failed;
    try {
      failed = await quietly([dir]);
    } finally {
      if (offline === undefined) delete process.env['npm_config_offline'];
      else process.env['npm_config_offline'] = offline;
    }
    expect(failed.code, failed.output).to.equal(1);
    expect(failed.output)
      .to.include('run the same rxkube init command again: it resumes there')
      .and.include('--rxkube')
      .and.include(`cd ${dir} && npm install && npm run manifests`);
    const resumed = await quietly([dir, '--rxkube', '1.2.3', '--no-install']);
    expect(resumed.code, resumed.output).to.equal(0);
    expect(resumed.output).to.include('resumed');
    expect(
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['rxkube'],
    ).to.equal('1.2.3');
    // Finished: a third run finds a project, not an unfinished init.
    const again = await quietly([dir, '--no-install']);
    expect(again.code).to.equal(2);
    expect(again.output).to.include('exists and is not empty');
  });

  it('a rerun that gave --rxkube but fails on @rxkube/apiserver (E404) names --apiserver, the flag of the package npm could not fetch', async () => {
    const dir = join(work, 'unpublished-server');
    // npm as it answers when @rxkube/apiserver is not published (its words, verbatim).
    const bin = join(work, 'fake-npm');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'npm'),
      `#!/bin/sh\necho "npm error code E404" >&2\necho "npm error 404 Not Found - GET https://registry.npmjs.org/@rxkube%2fapiserver - Not found" >&2\necho "npm error 404  '@rxkube/apiserver@^0.1.0' is not in this registry." >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const path = process.env['PATH'];
    process.env['PATH'] = `${bin}:${path ?? ''}`;
    let failed;
    try {
      failed = await quietly([dir, '--rxkube', '/tmp/rxkube-0.1.0.tgz']);
    } finally {
      process.env['PATH'] = path;
    }
    expect(failed.code, failed.output).to.equal(1);
    expect(failed.output).to.include(
      'npm could not fetch @rxkube/apiserver@^0.1.0: give it with --apiserver (a version, or the path of a packed tarball: rxkube-apiserver-x.y.z.tgz).',
    );
  });

  it("the hint after a failed install reads npm's E404 for either package, and names the flags not given yet", () => {
    const e404 = (spec: string, url: string) =>
      `npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/${url} - Not found\nnpm error 404\nnpm error 404  '${spec}' is not in this registry.\n`;
    expect(installHint(e404('@rxkube/apiserver@^0.1.0', '@rxkube%2fapiserver'), { rxkube: '/tmp/rxkube-0.1.0.tgz' }, '0.1.0')).to.equal(
      ' npm could not fetch @rxkube/apiserver@^0.1.0: give it with --apiserver (a version, or the path of a packed tarball: rxkube-apiserver-x.y.z.tgz).',
    );
    expect(installHint(e404('rxkube@^0.1.0', 'rxkube'), {}, '0.1.0')).to.equal(
      ' npm could not fetch rxkube@^0.1.0: give it with --rxkube (a version, or the path of a packed tarball: rxkube-x.y.z.tgz). If @rxkube/apiserver is not published either, give --apiserver (a version, or the path of a packed tarball: rxkube-apiserver-x.y.z.tgz) too.',
    );
    expect(installHint('npm error code ECONNRESET', {}, '0.1.0'))
      .to.include('give --apiserver')
      .and.include('and --rxkube');
    expect(installHint('npm error code ECONNRESET', { rxkube: '1.0.0', apiserver: '1.0.0' }, '0.1.0')).to.equal('');
  });

  it('the scaffold runs one operator at a time (leader election), exports process metrics, and stops npm install on a Node older than it needs', async () => {
    const dir = join(work, 'ops');
    expect((await quietly([dir, '--no-install'])).code).to.equal(0);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    expect(read('src/operator.ts')).to.include(
      "leaderElection: { leaseName: 'ops', leaseNamespace: process.env['POD_NAMESPACE'] ?? 'default' }",
    );
    expect(read('test/integration.test.ts')).to.include('leaderElection');
    expect(read('src/main.ts')).to.include('collectDefaultMetrics({ register: registry })');
    expect(read('.npmrc')).to.equal('engine-strict=true\n');
    expect(JSON.parse(read('package.json')) as { type: string; engines: unknown; scripts: Record<string, string> }).to.deep.include({
      type: 'module',
      engines: { node: '>=22.19.0' },
    });
    expect((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts).to.include({
      deploy: 'kubectl apply -k deploy',
      undeploy: 'kubectl delete -k deploy --ignore-not-found',
    });
    expect(read('README.md')).to.not.include('kustomize edit');
  });

  it('--webhooks adds a v2 of the resource, a validating and a conversion webhook, their tests, and serves them with the operator', async () => {
    const dir = join(work, 'hooks');
    expect((await quietly([dir, '--webhooks', '--no-install'])).code).to.equal(0);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    expect(read('src/greeting.ts'))
      .to.include('v2: {')
      .and.include('storage: true')
      .and.include("export type GreetingV2 = ResourceOf<typeof GreetingResource, 'v2'>;");
    expect(read('src/webhooks.ts')).to.include("name: 'validate.greetings.example.com'").and.include("hub: 'v1'");
    expect(read('test/webhooks.test.ts')).to.include('checkRoundTrip(convertGreeting');
    expect(read('src/operator.ts')).to.include(
      "webhooks: { webhooks, tls: mountedCertificate(process.env['WEBHOOK_CERT_DIR']), port: Number(process.env['WEBHOOK_PORT'] ?? DEFAULT_WEBHOOK_PORT) }",
    );
    expect(read('src/main.ts')).to.include('tls: { development: true }');
    expect((JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies).to.include.keys(
      '@peculiar/x509',
      'reflect-metadata',
    );
    const plain = join(work, 'plain');
    expect((await quietly([plain, '--no-install'])).code).to.equal(0);
    expect(readFileSync(join(plain, 'src/operator.ts'), 'utf8')).to.not.include('webhooks');
  });

  it('names what is wrong: no directory, a non-empty directory, a bad kind or group (exit 2)', async () => {
    const busy = join(work, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'file'), '');
    for (const [args, message] of [
      [['--no-install'], 'give the directory of the new project first'],
      [[busy, '--no-install'], 'exists and is not empty'],
      [[join(work, 'a'), '--kind', 'webshop'], "--kind 'webshop' must be CamelCase"],
      [[join(work, 'b'), '--group', 'local'], "--group 'local' must be a lowercase domain with a dot"],
    ] as const) {
      const { code, output } = await quietly([...args]);
      expect(code, output).to.equal(2);
      expect(output).to.include(message);
    }
  });
});
