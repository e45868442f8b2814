/**
 * The WebPage demo (`npm start`): the operator against an embedded API server started for this
 * run, or against a real cluster only when --kubeconfig or --context names one (an exported
 * KUBECONFIG is never used by surprise). Installs the CRD, applies three pages, shows them
 * becoming ready, changes one, deletes one, and keeps running until Ctrl-C.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createLogger, Operator } from '../../lib/index.js';
import { informer } from '../../lib/pipeline.js';
import { createKubeClient, errorMessage, installCustomResourceDefinition, loadKubeConfig } from '../../lib/kube.js';
import { parseFlags, temporaryDirectory, UsageError, untilSignal } from '../cli.js';
import { StatusBoard } from '../status-board.js';
import { CONFIGMAP, webPage, webPageCrd, WEBPAGE, type WebPage } from './model.js';
import { DEFAULT_VARIANT, variants, type VariantName } from './variants.js';

const FLAGS = {
  kubeconfig: 'string',
  context: 'string',
  variant: 'string',
  port: 'number',
  'ready-after-ms': 'number',
  once: 'boolean',
  help: 'boolean',
} as const;

const USAGE = `usage: npm start -- [--kubeconfig FILE] [--context NAME] [--variant ${Object.keys(variants).join('|')}] [--port N] [--ready-after-ms MS] [--once]
  --kubeconfig FILE   run against the cluster of that kubeconfig (default: an embedded API server;
                      an exported KUBECONFIG is not used unless you pass it here)
  --context NAME      run against that context of --kubeconfig (or of ~/.kube/config)
  --variant NAME      how the operator is written (default ${DEFAULT_VARIANT})
  --port N            port of the embedded API server (default: a free one)
  --ready-after-ms MS how long the embedded server's simulated Deployments take to become ready (default 1000)
  --once              exit after the scripted changes instead of running until Ctrl-C`;

const SAMPLES: WebPage[] = [
  webPage('hello', '<html><body><h1>Hello from rxkube</h1></body></html>', { exposed: true }),
  webPage('about', '<html><body><p>Operators as RxJS streams.</p></body></html>'),
  webPage('docs', '<html><body><ul><li>docs/getting-started.md</li></ul></body></html>'),
];
const DEMO_MANAGER = 'rxkube-demo';
const READY_TIMEOUT_MS = 60_000;

interface Cluster {
  readonly kubeConfig: KubeConfig;
  readonly kubeconfigPath: string | undefined;
  readonly server: ApiServer | undefined;
  /** Which cluster, said before anything is written to it. */
  readonly description: string;
}

export async function main(args: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(args, FLAGS);
    if (flags.variant !== undefined && !(flags.variant in variants)) {
      throw new UsageError(`--variant must be one of ${Object.keys(variants).join(', ')}, got '${flags.variant}'`);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`webpage demo: ${err.message} (see npm start -- --help)`);
    return 2;
  }
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  const variantName = (flags.variant ?? DEFAULT_VARIANT) as VariantName;
  const workDir = temporaryDirectory('rxkube-demo-');
  const live = process.stdout.isTTY === true;
  const logFile = join(workDir, 'operator.log');
  // stdout is the demo's story: JSON logs go to a file on a terminal, to stderr otherwise.
  const logger = createLogger({ name: 'webpage-demo', destination: live ? createWriteStream(logFile, { flags: 'a' }) : process.stderr });

  let cluster: Cluster;
  try {
    cluster = await connect(flags, workDir);
  } catch (err) {
    console.error(`webpage demo: ${errorMessage(err)}`);
    return 1;
  }
  const client = createKubeClient(cluster.kubeConfig);
  const operator = new Operator({ kubeConfig: cluster.kubeConfig, logger });
  const pages = informer<WebPage>({ resource: WEBPAGE, kubeConfig: cluster.kubeConfig, namespaces: ['default'] });
  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      pages.stop();
      await operator.stop();
      await cluster.server?.close();
    })());

  try {
    const variant = variants[variantName];
    say(`webpage demo: the WebPage operator (${variantName}: ${variant.description})`);
    say(cluster.server ? `embedded API server at ${cluster.server.url}` : cluster.description);
    if (cluster.kubeconfigPath) say(`try: kubectl --kubeconfig ${cluster.kubeconfigPath} get webpages`);
    if (live) say(`operator log: ${logFile}`);
    await installCustomResourceDefinition(client, webPageCrd);
    operator.register(variant.reconciler, variant.config);
    await operator.start();
    pages.start();
    await pages.whenSynced();
    const board = new StatusBoard(pages, { live, describe, deleted: (name) => `webpage/${name.padEnd(8)} deleted` });

    const started = Date.now();
    for (const page of SAMPLES) await client.resource<WebPage>(WEBPAGE).apply(page, { fieldManager: DEMO_MANAGER, force: true });
    await board.until((all) => SAMPLES.every((s) => all.get(s.metadata!.name!)?.status?.ready === true), READY_TIMEOUT_MS);
    board.note(`${SAMPLES.length}/${SAMPLES.length} WebPages ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const changed = { ...SAMPLES[1], spec: { html: '<html><body><p>Changed at run time.</p></body></html>' } };
    await client.resource<WebPage>(WEBPAGE).apply(changed, { fieldManager: DEMO_MANAGER, force: true });
    const configMaps = client.resource(CONFIGMAP);
    await board.until(async () => {
      const cm = await configMaps.find({ name: 'about-html', namespace: 'default' });
      return (cm as { data?: Record<string, string> } | undefined)?.data?.['index.html']?.includes('Changed') === true;
    }, READY_TIMEOUT_MS);
    board.note('changed webpage/about: its ConfigMap has the new HTML');

    await client.resource<WebPage>(WEBPAGE).delete({ name: 'docs', namespace: 'default' });
    await board.until((all) => !all.has('docs'), READY_TIMEOUT_MS);
    board.note('deleted webpage/docs: Kubernetes garbage-collects its ConfigMap, Deployment and Service');

    if (flags.once) {
      board.close();
      await shutdown();
      return 0;
    }
    board.note('running; Ctrl-C to stop');
    await untilSignal();
    board.close();
    say('shutting down');
    await shutdown();
    return 0;
  } catch (err) {
    console.error(`webpage demo: ${errorMessage(err)}`);
    await shutdown().catch(() => undefined);
    return 1;
  }
}

async function connect(
  flags: { kubeconfig?: string; context?: string; port?: number; 'ready-after-ms'?: number },
  workDir: string,
): Promise<Cluster> {
  if (flags.kubeconfig !== undefined || flags.context !== undefined) {
    const kubeConfig = loadKubeConfig({
      ...(flags.kubeconfig !== undefined ? { kubeconfigPath: flags.kubeconfig } : {}),
      ...(flags.context !== undefined ? { context: flags.context } : {}),
    });
    const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
    const description = `cluster ${server}, context ${kubeConfig.getCurrentContext()}, from ${flags.kubeconfig ?? 'the default kubeconfig'}`;
    try {
      await createKubeClient(kubeConfig).request({ method: 'GET', path: '/version', signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new Error(`cannot reach the ${description}: ${errorMessage(err)}`);
    }
    return { kubeConfig, kubeconfigPath: flags.kubeconfig, server: undefined, description };
  }
  if (process.env['KUBECONFIG']) say(`KUBECONFIG is set but not used: pass --kubeconfig "$KUBECONFIG" to run against that cluster`);
  const server = await startApiServer({
    port: flags.port ?? 0,
    simulate: { deployments: { readyAfterMs: flags['ready-after-ms'] ?? 1000 } },
  });
  const kubeconfigPath = join(workDir, 'kubeconfig');
  await server.writeKubeconfig(kubeconfigPath);
  return { kubeConfig: server.kubeConfig(), kubeconfigPath, server, description: `embedded API server at ${server.url}` };
}

function say(line: string): void {
  console.log(line);
}

function describe(page: WebPage): string {
  const status = page.status;
  const state = status?.errorMessage ? `error: ${status.errorMessage}` : status?.ready ? 'ready' : 'reconciling';
  const marked = page.metadata?.deletionTimestamp ? ' (deleting)' : '';
  const cm = status?.htmlConfigMap ? ` configmap=${status.htmlConfigMap}` : '';
  return `webpage/${(page.metadata?.name ?? '').padEnd(8)} ${state}${cm}${page.spec?.exposed ? ' exposed' : ''}${marked}`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
