/**
 * The WebPage operator as it runs in a cluster (the image's entry point, demos/webpage/Dockerfile):
 * the in-cluster configuration (or KUBECONFIG), /healthz, /readyz and /metrics on HEALTH_PORT,
 * and a graceful stop on SIGTERM with exit code 0 (OB5). `--embedded` runs it against an embedded
 * API server instead, with the CRD installed and one page applied: the server is a dev dependency,
 * loaded only then, so the image (production dependencies only) runs without it.
 */
import { pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import type { ApiServer } from '@rxkube/apiserver';
import { createLogger, Operator } from '../../lib/index.js';
import { createKubeClient, errorMessage, installCustomResourceDefinition, loadKubeConfig } from '../../lib/kube.js';
import { parseFlags, UsageError } from '../cli.js';
import { WEBPAGE, webPage } from './model.js';
import { crds, operatorOptions, register } from './operator.js';

const FLAGS = { embedded: 'boolean', help: 'boolean' } as const;

export async function main(args: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(args, FLAGS);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`webpage operator: ${err.message}`);
    return 2;
  }
  if (flags.help) {
    console.log('usage: node dist/demos/webpage/run.js [--embedded]   (HEALTH_PORT: port of /healthz, /readyz, /metrics; default 8080)');
    return 0;
  }
  const logger = createLogger({ name: 'webpage-operator' });
  let server: ApiServer | undefined;
  try {
    if (flags.embedded) {
      const { startApiServer } = await import('@rxkube/apiserver');
      server = await startApiServer({ port: 0, simulate: { deployments: { readyAfterMs: 500 } } });
    }
    const kubeConfig = server ? server.kubeConfig() : loadKubeConfig();
    if (server) {
      const client = createKubeClient(kubeConfig);
      for (const crd of crds) await installCustomResourceDefinition(client, crd);
      await client
        .resource(WEBPAGE)
        .apply(webPage('hello', '<html><body>hello</body></html>'), { fieldManager: 'webpage-sample', force: true });
    }
    const operator = new Operator({
      ...operatorOptions,
      kubeConfig,
      logger,
      registry: new Registry(),
      health: { port: Number(process.env['HEALTH_PORT'] ?? operatorOptions.health?.port ?? 8080) },
      handleSignals: false, // stopped below, so that the embedded server closes after it
    });
    register(operator);
    const signal = new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    await operator.start();
    logger.info({ health: operator.healthUrl }, 'webpage operator running');
    logger.info({ signal: await signal }, 'stopping');
    await operator.stop();
    return 0;
  } catch (err) {
    logger.error({ err: errorMessage(err) }, 'webpage operator failed');
    return 1;
  } finally {
    await server?.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
