/**
 * `rxkube dev`: the project's operator running on this machine against a cluster (the embedded
 * API server, or a kubeconfig context named on the command line), as its ServiceAccount, so that
 * RBAC answers on the laptop as it will in the cluster; recompiled and restarted on change, its
 * webhooks served here and called by the API server.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { loadKubeConfig } from '../kube.js';
import { generateDevelopmentTls } from '../webhooks.js';
import { parseFlags, UsageError, waitForSignal } from './args.js';
import { conversionRepoints, devPlan, forbiddenRequests, missingRule, type DevPlan, type LocalWebhooks } from './dev-plan.js';

const USAGE = `usage: rxkube dev [options]

Runs the operator of the project in this directory on this machine (npm run dev):
  1. a cluster: the embedded API server (@rxkube/apiserver), its kubeconfig written to
     .rxkube/kubeconfig for kubectl; or the context given by --kubeconfig/--context, named
     before anything is written to it
  2. deploy/ applied there (kubectl kustomize): the Namespace, CRDs, ServiceAccount and RBAC,
     the webhook configurations pointed at this machine. Not the Deployment, Service or
     cert-manager objects: the embedded server runs no containers, and the operator runs here
  3. tsc --watch compiling the sources to dist/, and node --watch running the operator
     (dist/src/main.js), restarted when dist/ changes. It acts as deploy/'s ServiceAccount
     (impersonated: Impersonate-User system:serviceaccount:NS:NAME), so a request deploy/'s
     RBAC does not allow fails with the 403 it would meet in the cluster; rxkube dev names the
     rule that is missing
  4. with webhooks: a development certificate in .rxkube/dev/webhook-tls and a free port,
     given to the operator as WEBHOOK_CERT_DIR and WEBHOOK_PORT; the webhook configurations
     (and a CRD's conversion webhook) call https://127.0.0.1:PORT with that CA. On exit the
     webhook configurations are deleted, so none is left pointing at a server that is gone
Ctrl-C (or SIGTERM) stops the operator, then the server.

options:
  --kubeconfig FILE  a cluster of yours instead of the embedded server (with --context)
  --context NAME     the context of --kubeconfig (default: its current-context)
  --deploy DIR       the kustomize base to apply (default deploy)
  --main FILE        the compiled entry point of the operator (default dist/src/main.js)
  --tsconfig FILE    what tsc --watch compiles (default tsconfig.json)
  --port N           the embedded server's port (default: a free one)
  -h, --help         show this help`;

const FLAGS = {
  kubeconfig: 'string',
  context: 'string',
  deploy: 'string',
  main: 'string',
  tsconfig: 'string',
  port: 'number',
  help: 'boolean',
} as const;
const FIELD_MANAGER = 'rxkube-dev';
/** How long the operator has to stop before it is killed (its own stopTimeoutMs is usually 30 s). */
const STOP_GRACE_MS = 40_000;

const say = (message: string) => console.log(`rxkube dev: ${message}`);

function exec(file: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile(file, [...args], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const shown = args.filter((a, i) => a !== '--kubeconfig' && args[i - 1] !== '--kubeconfig').join(' ');
      if (err) fail(new Error(`${file} ${shown}: ${stderr.trim() || err.message}`, { cause: err }));
      else done(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Writes `content` readable by this user only (a kubeconfig or a key). */
function writePrivate(file: string, content: string): void {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** The kubeconfig the operator runs with: the chosen context only, its user impersonating `user`. */
function impersonatingKubeconfig(kubeconfigPath: string, context: string | undefined, user: string): string {
  interface Named {
    readonly name: string;
    readonly [key: string]: unknown;
  }
  const config = JSON.parse(loadKubeConfig({ kubeconfigPath, context }).exportConfig()) as {
    'current-context': string;
    contexts: Array<Named & { context: { cluster: string; user: string } }>;
    clusters: Named[];
    users: Array<Named & { user: Record<string, unknown> }>;
  };
  const current = config.contexts.find((c) => c.name === config['current-context']);
  return `${JSON.stringify(
    {
      ...config,
      contexts: config.contexts.filter((c) => c === current),
      clusters: config.clusters.filter((c) => c.name === current?.context.cluster),
      users: config.users.filter((u) => u.name === current?.context.user).map((u) => ({ ...u, user: { ...u.user, as: user } })),
    },
    null,
    2,
  )}\n`;
}

/** A child whose output lines go to ours, each shown to `onLine` too. */
function start(command: string, args: readonly string[], env: NodeJS.ProcessEnv, onLine: (line: string) => void): ChildProcess {
  const child = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const [stream, out] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: stream }).on('line', (line) => {
      out.write(`${line}\n`);
      onLine(line);
    });
  }
  return child;
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** Reports each rule the operator was refused once, in the words of a Role's rules. */
function forbiddenReporter(plan: DevPlan, deployDir: string): (line: string) => void {
  const seen = new Set<string>();
  const account = `system:serviceaccount:${plan.serviceAccount.namespace}:${plan.serviceAccount.name}`;
  return (line) => {
    for (const request of forbiddenRequests(line)) {
      if (request.user !== undefined && request.user !== account) continue;
      const rule = missingRule(request);
      // Once as the check at start finds it, once more when a request meets the 403.
      if (seen.has(`${request.seen} ${rule}`)) continue;
      seen.add(`${request.seen} ${rule}`);
      const resource = request.subresource === undefined ? request.resource : `${request.resource}/${request.subresource}`;
      console.error(
        `\nrxkube dev: ${request.seen === '403' ? '403 Forbidden' : "the operator's RBAC check at start"}: the operator's ServiceAccount ${plan.serviceAccount.namespace}/${plan.serviceAccount.name} may not ${request.verb} ${resource}` +
          `${request.apiGroup === '' ? '' : `.${request.apiGroup}`}${request.namespace === undefined ? '' : ` in the namespace ${request.namespace}`}. ` +
          `The RBAC of ${deployDir}/ lacks this rule, and the cluster would refuse it the same way:\n${rule.replace(/^/gm, '    ')}\n` +
          `  npm run manifests regenerates ${deployDir}/ from what the operator registers; writes through ctx.secondaryClient are declared on their secondary source (writes), other writes of your own (ctx.client) as extraRules of the operator module. Then restart rxkube dev.\n`,
      );
    }
  };
}

export async function main(args: string[]): Promise<number> {
  let flags: ReturnType<typeof parseFlags<typeof FLAGS>>;
  try {
    flags = parseFlags(args, FLAGS);
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    if (flags.context !== undefined && flags.kubeconfig === undefined)
      throw new UsageError('--context needs --kubeconfig: the file it is a context of');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`rxkube dev: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  const deployDir = flags.deploy ?? 'deploy';
  const mainFile = flags.main ?? 'dist/src/main.js';
  const tsconfig = flags.tsconfig ?? 'tsconfig.json';
  const tsc = resolve('node_modules/.bin/tsc');
  const stops: Array<() => Promise<void>> = [];
  const children: ChildProcess[] = [];
  const stopped = waitForSignal();
  try {
    if (!existsSync(join(deployDir, 'kustomization.yaml')))
      throw new Error(`${deployDir}/kustomization.yaml: no such file; generate deploy/ first: npm run manifests`);
    if (!existsSync(tsc)) throw new Error('node_modules/.bin/tsc: no such file; install the project first: npm install');

    // The cluster, named before anything is written to it.
    let kubeconfig: string;
    if (flags.kubeconfig !== undefined) {
      kubeconfig = resolve(flags.kubeconfig);
      const kc = loadKubeConfig({ kubeconfigPath: kubeconfig, context: flags.context });
      say(`cluster: context "${kc.getCurrentContext()}" (${kc.getCurrentCluster()?.server ?? '?'}) of ${kubeconfig}`);
    } else {
      let apiserver: typeof import('@rxkube/apiserver');
      try {
        apiserver = await import('@rxkube/apiserver');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
        throw new Error(
          'the embedded API server is the package @rxkube/apiserver: npm install --save-dev @rxkube/apiserver (or give a cluster of yours with --kubeconfig)',
          { cause: err },
        );
      }
      const server = await apiserver.startApiServer({ port: flags.port ?? 0 });
      stops.push(() => server.close());
      kubeconfig = resolve('.rxkube/kubeconfig');
      await server.writeKubeconfig(kubeconfig);
      say(
        `cluster: the embedded API server at ${server.url} (in this process, in memory: gone when rxkube dev stops). It stores objects and runs controllers; it runs no containers.`,
      );
      say(`kubectl: export KUBECONFIG=${kubeconfig}   (or kubectl --kubeconfig ${relative(process.cwd(), kubeconfig)} ...)`);
    }
    const kubectl = (extra: readonly string[], input?: string) =>
      exec('kubectl', ['--kubeconfig', kubeconfig, ...(flags.context === undefined ? [] : ['--context', flags.context]), ...extra], input);

    const rendered = parseAllDocuments(await exec('kubectl', ['kustomize', deployDir]))
      .map((d) => d.toJS() as KubernetesObject | null)
      .filter((o): o is KubernetesObject => o !== null && typeof o === 'object');
    let webhooks: (LocalWebhooks & { port: number; certDir: string }) | undefined;
    if (devPlan(rendered).hasWebhooks) {
      const port = await freePort();
      const tls = await generateDevelopmentTls();
      const certDir = resolve('.rxkube/dev/webhook-tls');
      writePrivate(join(certDir, 'tls.crt'), tls.cert);
      writePrivate(join(certDir, 'tls.key'), tls.key);
      webhooks = { url: `https://127.0.0.1:${port}`, caPem: tls.ca, port, certDir };
    }
    const plan = devPlan(rendered, webhooks);

    // deploy/ as the cluster would get it, less what runs the operator there.
    say(
      `applying ${deployDir}/ (server-side, field manager ${FIELD_MANAGER}): ${plan.apply.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')}`,
    );
    if (plan.skipped.length > 0)
      say(
        `not applied: ${plan.skipped.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')} — they run the operator in a cluster; here it runs on this machine`,
      );
    const deleteWebhookConfigurations = () =>
      Promise.all(
        plan.webhookConfigurations.map((obj) => kubectl(['delete', obj.kind!.toLowerCase(), obj.metadata!.name!, '--ignore-not-found'])),
      );
    if (plan.webhookConfigurations.length > 0) {
      // Those of an earlier deploy or dev loop go first: they may name a Service nothing serves here.
      await deleteWebhookConfigurations();
      stops.unshift(async () => {
        const deleted = await deleteWebhookConfigurations().then(
          () => 'deleted',
          (err: Error) => `could not delete (${err.message})`,
        );
        say(
          `${deleted} ${plan.webhookConfigurations.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')} (they pointed at this machine)`,
        );
      });
    }
    for (const { name: crd, patch } of conversionRepoints(plan.apply)) {
      await kubectl(['patch', 'crd', crd, '--type=merge', '-p', JSON.stringify(patch)]).catch((err: Error) => {
        if (!/NotFound|not found/.test(err.message)) throw err;
      });
    }
    process.stdout.write(
      await kubectl(
        ['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-f', '-'],
        plan.apply.map((o) => stringify(o)).join('---\n'),
      ),
    );
    const crds = plan.apply.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.metadata?.name}`);
    if (crds.length > 0) await kubectl(['wait', '--for=condition=Established', ...crds, '--timeout=60s']);
    if (webhooks)
      say(
        `webhooks: the configurations call ${webhooks.url} (the operator's webhook server, here) trusting the development CA in ${relative(process.cwd(), webhooks.certDir)}/`,
      );

    // The operator, as its ServiceAccount.
    const { namespace, name } = plan.serviceAccount;
    const user = `system:serviceaccount:${namespace}:${name}`;
    const operatorKubeconfig = resolve('.rxkube/dev/operator.kubeconfig');
    writePrivate(operatorKubeconfig, impersonatingKubeconfig(kubeconfig, flags.context, user));
    const reportForbidden = forbiddenReporter(plan, deployDir);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: operatorKubeconfig,
      POD_NAMESPACE: namespace,
      HEALTH_PORT: process.env['HEALTH_PORT'] ?? '0',
      ...(webhooks ? { WEBHOOK_CERT_DIR: webhooks.certDir, WEBHOOK_PORT: String(webhooks.port) } : {}),
    };
    say(`compiling: tsc --watch -p ${tsconfig}`);
    let compiled!: () => void;
    const firstBuild = new Promise<void>((done) => (compiled = done));
    const compiler = start(
      tsc,
      ['--watch', '--preserveWatchOutput', '-p', tsconfig],
      process.env,
      (line) => /Found \d+ errors?\./.test(line) && compiled(),
    );
    children.push(compiler);
    const compilerExit = new Promise<'exited'>((done) => compiler.once('exit', () => done('exited')));
    const first = await Promise.race([firstBuild.then(() => 'built' as const), compilerExit, stopped]);
    if (first === 'exited') throw new Error(`tsc --watch -p ${tsconfig} exited before its first build (its output is above)`);
    if (first !== 'built') return 0;
    if (!existsSync(mainFile)) throw new Error(`${mainFile}: no such file after tsc: give the compiled entry point with --main`);
    say(
      `running: node --watch ${mainFile} as ServiceAccount ${namespace}/${name} (impersonated: the RBAC of ${deployDir}/ decides what it may do); restarted when tsc rewrites dist/`,
    );
    children.push(start(process.execPath, ['--watch', '--watch-preserve-output', mainFile], env, reportForbidden));
    say(`ready: try kubectl apply -f samples/ in another terminal; Ctrl-C stops`);
    say(`signal ${await stopped}: stopping`);
    return 0;
  } catch (err) {
    console.error(`rxkube dev: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    // The operator first (it may still write), then what the dev loop set up, the server last.
    await Promise.all(children.reverse().map(stopChild));
    for (const stop of stops) await stop();
  }
}
