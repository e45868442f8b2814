/**
 * A child process for tracing-modules.spec.ts: runs the WebPage demo against the embedded API
 * server, with metrics, health and `tracing` as argv[2] says ('off' or 'on'), and prints, as its
 * last line, the OpenTelemetry packages that were entered, with who asked for each.
 */
import { registerHooks } from 'node:module';

const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    // Where an OpenTelemetry package is entered from outside it (its own inner imports left out).
    if (result.url.includes('/@opentelemetry/') && !context.parentURL?.includes('/@opentelemetry/'))
      resolved.push(`${specifier} from ${context.parentURL ?? '?'}`);
    return result;
  },
});

// Loaded after the hook, so that every import is seen.
const { Registry } = await import('prom-client');
const { eventually } = await import('../../lib/testing/index.js');
const { startTestCluster } = await import('../../lib/testing/cluster/index.js');
const { managedConfig, managedReconciler } = await import('../../demos/webpage/managed.js');
const { WEBPAGE, webPage, webPageCrd } = await import('../../demos/webpage/model.js');

const cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 50 } } });
const registry = new Registry();
const operator = cluster.operator({ registry, health: { port: 0 }, ...(process.argv[2] === 'on' ? { tracing: true } : {}) });
operator.register(managedReconciler, managedConfig);
await operator.start();
await cluster.apply(WEBPAGE, webPage('site', '<html><body><h1>Hi</h1></body></html>'));
await eventually(
  'site ready',
  async () =>
    (
      await cluster.client
        .resource<{ status?: { ready?: boolean } } & { metadata?: object }>(WEBPAGE)
        .find({ name: 'site', namespace: 'default' })
    )?.status?.ready === true,
);
const metrics = await registry.metrics();
await cluster.close();
console.log(JSON.stringify({ ready: true, runs: /rxkube_reconciliations_success_total\{[^}]*\} [1-9]/.test(metrics), resolved }));
