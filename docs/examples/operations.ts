// Logging, metrics, health, leader election and shutdown (docs/operations.md):
// `npx tsx docs/examples/operations.ts`.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { filter, firstValueFrom } from 'rxjs';
import { createLogger, Operator, UpdateControl, type Reconciler } from 'rxkube';
import { builtinResources, createKubeClient } from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';

const { configMap: CONFIGMAP, lease: LEASE } = builtinResources;

const audited: Reconciler = {
  reconcile(_configMap, ctx) {
    ctx.logger.info('audited'); // carries controller and resource.{apiVersion,kind,name,namespace,...}
    return UpdateControl.noUpdate();
  },
};

export function productionOperator(kubeConfig: KubeConfig, registry: Registry): Operator {
  const logger = createLogger({ name: 'audit-operator' }); // level: LOG_LEVEL, else 'info'
  return new Operator({
    kubeConfig,
    logger,
    registry, // rxkube_* metrics go here, and /metrics serves it
    health: { port: 8081, host: '0.0.0.0' }, // /healthz, /readyz, /metrics
    leaderElection: { leaseName: 'audit-operator', leaseNamespace: 'operators', logger },
    handleSignals: true, // SIGTERM or SIGINT: stop() gracefully
    stopTimeoutMs: 20_000, // below the pod's terminationGracePeriodSeconds (default 30 s)
  });
}

// The same, runnable here: the embedded server, a free local port, a lease in 'default'.
const server = await startApiServer();
const kubeConfig = server.kubeConfig();
const registry = new Registry();
const operator = new Operator({
  kubeConfig,
  logger: createLogger({ name: 'audit-operator', level: 'warn' }),
  registry,
  health: { port: 0, host: '127.0.0.1' },
  leaderElection: { leaseName: 'audit-operator', leaseNamespace: 'default' },
});
operator.register(audited, { resource: CONFIGMAP, name: 'audit', labelSelector: { audit: 'true' } });
await operator.start();
await firstValueFrom(operator.isLeader$.pipe(filter(Boolean)));

const configMaps = createKubeClient(kubeConfig).resource(CONFIGMAP);
await configMaps.create({ metadata: { name: 'audited', namespace: 'default', labels: { audit: 'true' } } });
await new Promise((resolve) => setTimeout(resolve, 300));

for (const path of ['/healthz', '/readyz']) {
  const answer = await fetch(`${operator.healthUrl}${path}`);
  console.log(`GET ${path} ${answer.status}\n${await answer.text()}`);
}
const metrics = await (await fetch(`${operator.healthUrl}/metrics`)).text();
console.log(
  metrics
    .split('\n')
    .filter((line) => line.startsWith('rxkube_') && !line.includes('_bucket'))
    .join('\n'),
);
const leases = createKubeClient(kubeConfig).resource<KubernetesObject & { spec?: { holderIdentity?: string } }>(LEASE);
const lease = await leases.get({ name: 'audit-operator', namespace: 'default' });
console.log(`lease held by ${lease.spec?.holderIdentity}`);

await operator.stop(); // runs finish, the lease is released, watches close
console.log(`after stop, holder: '${(await leases.get({ name: 'audit-operator', namespace: 'default' })).spec?.holderIdentity}'`);
await server.close();
