// Every controller and operator option with its default spelled out (docs/configuration.md).
// Type-checked with the project; it only builds values: `npx tsx docs/examples/configuration.ts`.
import type { KubernetesObject } from '@kubernetes/client-node';
import { asyncScheduler } from 'rxjs';
import { compactManagedFields, GenericRetry, LinearRateLimiter, type ControllerConfig, type OperatorOptions } from 'rxkube';

export const everyControllerOption: ControllerConfig<KubernetesObject> = {
  resource: { apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', namespaced: true },
  name: 'widgets.example.com',
  namespaces: 'all',
  labelSelector: undefined,
  fieldSelector: undefined,
  secondaries: [],
  sources: [],
  sourceErrors: {
    resubscribe: true,
    backoff: { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 30_000 },
    affectsReadiness: false,
  },
  retry: GenericRetry.defaults(), // 5 retries: 2000, 2000, 3000, 4500, 6750 ms
  rateLimiter: undefined,
  maxReconciliationInterval: 10 * 60 * 60 * 1000,
  maxConcurrentReconciliations: 50,
  runTimeoutMs: 0, // no deadline
  generationAware: true,
  finalizerName: 'widgets.example.com/finalizer',
  patchStrategy: 'apply',
  fieldManager: 'widgets.example.com',
  observedGeneration: false,
  workflow: undefined,
  cacheSyncTimeoutMs: 2 * 60 * 1000,
  stopOnInformerErrorDuringStartup: true,
  informer: {
    timeoutSeconds: 290,
    deadMarginMs: 30_000,
    listTimeoutMs: 60_000,
    backoff: { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 30_000 },
    bounded: undefined,
    transform: compactManagedFields,
  },
  scheduler: asyncScheduler,
};

export const tuned: ControllerConfig<KubernetesObject> = {
  resource: { apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets' },
  namespaces: ['team-a', 'team-b'],
  labelSelector: { matchLabels: { tier: 'gold' }, matchExpressions: [{ key: 'paused', operator: 'DoesNotExist' }] },
  retry: GenericRetry.defaults()
    .withMaxAttempts(-1)
    .withInitialMs(1_000)
    .withFactor(2)
    .withMaxMs(5 * 60_000),
  rateLimiter: new LinearRateLimiter(5, 60_000), // at most 5 runs per resource per minute
  maxReconciliationInterval: 0, // no periodic safety-net runs
  maxConcurrentReconciliations: 10,
  patchStrategy: 'merge',
  informer: { bounded: { maxEntries: 5_000, timeToIdleMs: 15 * 60_000 } },
};

export const everyOperatorOption: OperatorOptions = {
  kubeConfig: undefined, // loadKubeConfig(): KUBECONFIG, ~/.kube/config, in-cluster
  name: 'operator', // its requests' User-Agent: rxkube/<version> (operator)
  logger: undefined, // createLogger({ name: 'rxkube' })
  registry: undefined, // no metrics
  leaderElection: undefined, // every instance processes
  health: undefined, // no health server; { port: 8081, host: '0.0.0.0' } when given as {}
  handleSignals: false,
  stopTimeoutMs: 30_000,
  tracing: undefined, // no traces, and no OpenTelemetry module loaded
  checkRbac: true, // a SelfSubjectAccessReview per verb it needs, at start
};
