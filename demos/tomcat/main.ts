/**
 * The Tomcat operator on the embedded API server: `npx tsx demos/tomcat/main.ts [--keep-running]`.
 * Applies one Tomcat and two Webapps deployed into it, prints each as it becomes ready, and
 * exits — or, with --keep-running, keeps serving (with a kubeconfig for kubectl) until Ctrl-C.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import { createLogger, type ResourceDescriptor } from '../../lib/index.js';
import { errorMessage } from '../../lib/kube.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { parseFlags, temporaryDirectory, UsageError, waitForSignal } from '../cli.js';
import { TOMCAT, tomcat, WEBAPP, webapp, type Tomcat, type Webapp } from './model.js';
import { crds, registerTomcatOperator } from './operator.js';

const FLAGS = { 'keep-running': 'boolean', 'ready-after-ms': 'number', help: 'boolean' } as const;
const USAGE = `usage: npx tsx demos/tomcat/main.ts [--keep-running] [--ready-after-ms MS]
  --keep-running      keep the operator and the API server running until Ctrl-C
  --ready-after-ms MS how long the simulated Deployments take to become ready (default 500)`;
const READY_TIMEOUT_MS = 30_000;

const SAMPLES = {
  tomcat: tomcat('main', { version: '10.1', replicas: 2 }),
  webapps: [
    webapp('shop', { tomcat: 'main', url: 'https://example.com/wars/shop.war', contextPath: '/shop' }),
    webapp('blog', { tomcat: 'main', url: 'https://example.com/wars/blog.war', contextPath: '/blog' }),
  ],
};

export interface DemoOptions {
  readonly keepRunning?: boolean;
  readonly readyAfterMs?: number;
  readonly print?: (line: string) => void;
}

export async function runDemo({ keepRunning = false, readyAfterMs = 500, print = console.log }: DemoOptions = {}): Promise<void> {
  const cluster = await startTestCluster({ crds, simulate: { deployments: { readyAfterMs } } });
  try {
    print(`embedded API server at ${cluster.server.url}`);
    const operator = cluster.operator({ logger: createLogger({ name: 'tomcat-demo', level: 'warn' }) });
    registerTomcatOperator(operator);
    await operator.start();

    const started = Date.now();
    const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    await cluster.apply(TOMCAT, SAMPLES.tomcat);
    for (const app of SAMPLES.webapps) await cluster.apply(WEBAPP, app);
    print(`applied tomcat/main (tomcat:10.1, 2 replicas) and webapps ${SAMPLES.webapps.map((w) => w.metadata?.name).join(', ')}`);

    await Promise.all([
      untilReady<Tomcat>(cluster, TOMCAT, 'main').then((t) =>
        print(`tomcat/main ready: ${t.status?.readyReplicas}/${t.spec.replicas} replicas after ${elapsed()}`),
      ),
      ...SAMPLES.webapps.map((w) =>
        untilReady<Webapp>(cluster, WEBAPP, w.metadata?.name ?? '').then((ready) =>
          print(
            `webapp/${ready.metadata?.name} ready at ${ready.status?.url} (deployed to tomcat/${ready.status?.deployedTo}) after ${elapsed()}`,
          ),
        ),
      ),
    ]);

    if (keepRunning) {
      const kubeconfig = join(temporaryDirectory('rxkube-tomcat-'), 'kubeconfig');
      await cluster.server.writeKubeconfig(kubeconfig);
      print(`running; try: kubectl --kubeconfig ${kubeconfig} get tomcats,webapps,deployments,configmaps`);
      print('Ctrl-C to stop');
      await waitForSignal();
    }
  } finally {
    await cluster.close();
  }
}

function untilReady<T extends KubernetesObject & { status?: { ready?: boolean } }>(
  cluster: TestCluster,
  resource: ResourceDescriptor,
  name: string,
): Promise<T> {
  return eventually(
    `${resource.kind} ${name} ready`,
    async () => {
      const current = await cluster.client.resource<T>(resource).find({ name, namespace: 'default' });
      return current?.status?.ready === true ? current : undefined;
    },
    READY_TIMEOUT_MS,
  );
}

/** The command line: exit code 0 on success, 1 on failure, 2 on bad flags. */
export async function main(args: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(args, FLAGS);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`tomcat demo: ${err.message}\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    await runDemo({ keepRunning: flags['keep-running'] ?? false, readyAfterMs: flags['ready-after-ms'] ?? 500 });
    return 0;
  } catch (err) {
    console.error(`tomcat demo: ${errorMessage(err)}`);
    return 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
