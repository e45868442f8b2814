/**
 * `rxkube init <dir>`: a new operator project that depends on rxkube as a package, installed and
 * with its manifests generated, whose `npm test` passes as it is.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseFlags, UsageError } from './args.js';
import { guessPlural } from './plural.js';
import { templateFiles } from './template.js';

const USAGE = `usage: rxkube init <dir> [options]

Creates an operator project in <dir> (new or empty): a custom resource with its schema, a
reconciler with a managed dependent, a marble test and an integration test on the embedded API
server, the manifests (deploy/, a kustomize base), a sample, a Dockerfile and a README. Then
runs npm install and npm run manifests there. If that fails, run the same command again (with
other options if need be, e.g. --rxkube and --apiserver for packages not published): it resumes
in the directory it wrote.

options:
  --name NAME        package and operator name (default: the directory's name)
  --group GROUP      API group of the custom resource (default example.com)
  --kind KIND        kind of the custom resource (default Greeting)
  --plural PLURAL    its resource name in URLs and RBAC (default: the kind's plural as Kubernetes
                     guesses it, e.g. Policy → policies; give it for an irregular one)
  --rxkube SPEC      the rxkube dependency in package.json (default ^<this version>; a tarball path works)
  --apiserver SPEC   the @rxkube/apiserver dev dependency (default ^<this version>; a tarball path works)
  --webhooks         also a validating webhook, a second version of the resource (v2) with its
                     conversion webhook, their tests, and the webhooks in deploy/ (with cert-manager)
  --no-install       only write the files (then: npm install && npm run manifests)
  -h, --help         show this help`;

const FLAGS = {
  name: 'string',
  group: 'string',
  kind: 'string',
  plural: 'string',
  rxkube: 'string',
  apiserver: 'string',
  'no-install': 'boolean',
  webhooks: 'boolean',
  help: 'boolean',
} as const;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

function ownVersion(): string {
  // dist/cli/init.js and lib/cli/init.ts both sit two levels under the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Written before the files and removed once init has finished: a directory with it can be resumed. */
const PENDING = '.rxkube/init-pending';

/** A failed npm command, with what it wrote to stderr (which names the package it could not fetch). */
class NpmError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

function npm(args: readonly string[], cwd: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn('npm', [...args], { cwd, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderr += chunk.toString();
    });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done() : fail(new NpmError(`npm ${args.join(' ')} exited ${code} in ${cwd}`, stderr))));
  });
}

/** The packages init depends on that may be unpublished (a clone's own version), with the flag that gives each. */
const PACKAGE_FLAGS = [
  { name: '@rxkube/apiserver', flag: 'apiserver', tarball: 'rxkube-apiserver-x.y.z.tgz', named: /@rxkube(?:\/|%2f)apiserver/i },
  { name: 'rxkube', flag: 'rxkube', tarball: 'rxkube-x.y.z.tgz', named: /(?<![\w@/%-])rxkube@|\/rxkube(?![\w%/-])/ },
] as const;

/**
 * What to do after a failed npm install: npm stops at the first package it cannot fetch, so the
 * hint names that package's flag, and the flags not given yet for the other (unpublished too, likely).
 */
export function installHint(
  npmStderr: string,
  given: { readonly rxkube?: string | undefined; readonly apiserver?: string | undefined },
  version: string,
): string {
  const failed = PACKAGE_FLAGS.filter((p) => p.named.test(npmStderr));
  const missing = PACKAGE_FLAGS.filter((p) => given[p.flag] === undefined && !failed.includes(p));
  const how = (p: (typeof PACKAGE_FLAGS)[number]) => `--${p.flag} (a version, or the path of a packed tarball: ${p.tarball})`;
  if (failed.length === 0) {
    return missing.length === 0
      ? ''
      : ` If npm could not find ${missing.map((p) => `${p.name}@^${version}`).join(' or ')} (E404: not published), give ${missing.map(how).join(' and ')}.`;
  }
  const first = failed
    .map(
      (p) =>
        ` npm could not fetch ${p.name}${given[p.flag] === undefined ? `@^${version}` : ` (${given[p.flag]})`}: give it with ${how(p)}.`,
    )
    .join('');
  return (
    first +
    (missing.length === 0
      ? ''
      : ` If ${missing.map((p) => p.name).join(' and ')} is not published either, give ${missing.map(how).join(' and ')} too.`)
  );
}

export async function main(args: string[]): Promise<number> {
  let dir: string;
  let flags: ReturnType<typeof parseFlags<typeof FLAGS>>;
  try {
    const [first, ...rest] = args;
    const given = first !== undefined && !first.startsWith('-');
    flags = parseFlags(given ? rest : args, FLAGS);
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    if (!given) throw new UsageError('give the directory of the new project first: rxkube init <dir> [options]');
    dir = resolve(first);
    const name =
      flags.name ??
      basename(dir)
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '');
    if (name.length > 63 || !DNS_LABEL.test(name))
      throw new UsageError(`--name '${name}' must be a lowercase DNS label (letters, digits, '-')`);
    const group = flags.group ?? 'example.com';
    if (!GROUP.test(group)) throw new UsageError(`--group '${group}' must be a lowercase domain with a dot, like example.com`);
    const kind = flags.kind ?? 'Greeting';
    if (!KIND.test(kind)) throw new UsageError(`--kind '${kind}' must be CamelCase letters and digits, like Greeting`);
    const plural = flags.plural ?? guessPlural(kind);
    if (plural.length > 63 || !DNS_LABEL.test(plural) || !/^[a-z]/.test(plural))
      throw new UsageError(`--plural '${plural}' must be lowercase letters, digits and '-', starting with a letter, like greetings`);
    const resuming = existsSync(join(dir, PENDING));
    if (!resuming && existsSync(dir) && readdirSync(dir).length > 0) {
      throw new UsageError(`${dir} exists and is not empty (and no unfinished rxkube init is in it): give a new or empty directory`);
    }
    const dependency = (spec: string | undefined) =>
      spec === undefined ? `^${ownVersion()}` : /\.tgz$/.test(spec) ? `file:${resolve(spec)}` : spec;
    mkdirSync(dirname(join(dir, PENDING)), { recursive: true });
    writeFileSync(join(dir, PENDING), `${JSON.stringify({ args })}\n`);
    for (const [file, content] of Object.entries(
      templateFiles({
        name,
        group,
        kind,
        plural,
        rxkube: dependency(flags.rxkube),
        apiserver: dependency(flags.apiserver),
        webhooks: flags.webhooks === true,
      }),
    )) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), content);
    }
    console.log(`rxkube init: ${resuming ? 'resumed: wrote again' : 'wrote'} the ${kind} operator '${name}' to ${dir}`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`rxkube init: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (flags['no-install']) {
    rmSync(join(dir, PENDING));
    console.log(`next: cd ${dir} && npm install && npm run manifests && npm test`);
    return 0;
  }
  try {
    await npm(['install', '--no-audit', '--no-fund'], dir);
    await npm(['run', '-s', 'manifests'], dir);
  } catch (err) {
    const hint = installHint(err instanceof NpmError ? err.stderr : '', flags, ownVersion());
    console.error(
      `rxkube init: ${err instanceof Error ? err.message : String(err)}\n` +
        `The project's files are in ${dir}. Once the cause is fixed, run the same rxkube init command again: it resumes there.${hint}` +
        ` Or finish by hand: cd ${dir} && npm install && npm run manifests`,
    );
    return 1;
  }
  rmSync(join(dir, PENDING));
  console.log(`\nnext: cd ${dir} && npm test && npm run dev   (README.md: what runs where, and from here to a cluster)`);
  return 0;
}
