import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Observable, Subscription } from 'rxjs';
import type { ApiServer, ApiServerOptions } from '@rxkube/apiserver';
import type { ResourceClient } from '../../lib/kube/index.js';
import { informer, type Informer, type InformerEvent, type InformerOptions } from '../../lib/cache/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

export const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;
export const SECRETS = { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' } as const;

/** Fast timings for tests: short watches, quick and deterministic reconnects. */
export const FAST = {
  timeoutSeconds: 5,
  deadMarginMs: 2_000, // also the time a watch request or list page may take to answer: room for a loaded machine
  listTimeoutMs: 5_000,
  backoff: { initialMs: 20, maxMs: 200, factor: 2, jitter: 0, resetAfterMs: 120_000 },
} as const;

export interface Cluster {
  server: ApiServer;
  kubeConfig: KubeConfig;
  configMaps: ResourceClient<KubernetesObject & { data?: Record<string, string> }>;
  secrets: ResourceClient<KubernetesObject>;
  /** A fresh namespace per call, so tests do not see each other's objects. */
  namespace(): Promise<string>;
  informers: Informer<KubernetesObject>[];
  subscriptions: Subscription[];
}

/** Registers before/after hooks that start one test cluster (`startTestCluster`) for the describe block. */
export function useCluster(options: ApiServerOptions = {}): Cluster {
  const cluster = { informers: [], subscriptions: [] } as unknown as Cluster;
  let n = 0;
  let testCluster: TestCluster | undefined;
  before(async () => {
    testCluster = await startTestCluster(options);
    cluster.server = testCluster.server;
    cluster.kubeConfig = testCluster.kubeConfig;
    cluster.configMaps = testCluster.client.resource(CONFIGMAPS);
    cluster.secrets = testCluster.client.resource(SECRETS);
    cluster.namespace = () => testCluster!.createNamespace(`t${process.pid % 1000}-${++n}`);
  });
  afterEach(() => {
    for (const s of cluster.subscriptions.splice(0)) s.unsubscribe();
    for (const i of cluster.informers.splice(0)) i.stop();
    cluster.server.faults.clear();
  });
  after(async () => {
    await testCluster?.close();
  });
  return cluster;
}

/** A started-later informer with the fast test timings, stopped after the test. */
export function testInformer<T extends KubernetesObject = KubernetesObject>(
  cluster: Cluster,
  options: Partial<InformerOptions<T>> = {},
): Informer<T> {
  const inf = informer<T>({ kubeConfig: cluster.kubeConfig, resource: CONFIGMAPS, ...FAST, random: () => 0, ...options });
  cluster.informers.push(inf as unknown as Informer<KubernetesObject>);
  return inf;
}

export interface Recorded<T> {
  readonly events: T[];
  /** Resolves when `predicate` holds for the events so far; rejects after `ms` naming what was seen. */
  until(predicate: (events: T[]) => boolean, ms?: number): Promise<T[]>;
}

/** Collects everything a stream emits (unsubscribed after the test). */
export function record<T>(cluster: Cluster, stream$: Observable<T>): Recorded<T> {
  const events: T[] = [];
  cluster.subscriptions.push(stream$.subscribe((e) => events.push(e)));
  return {
    events,
    until: (predicate, ms = 5_000) =>
      waitFor(
        () => predicate(events),
        ms,
        () => JSON.stringify(events.map(brief)),
      ).then(() => events),
  };
}

/** Waits (polling every 5 ms) until the condition holds; the error says what was last seen. */
export async function waitFor(condition: () => boolean, ms = 5_000, seen: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms; seen: ${seen()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `added a 12` for an informer event, the value itself otherwise. */
export function brief(e: unknown): unknown {
  const ev = e as Partial<InformerEvent<KubernetesObject>>;
  if (ev && typeof ev === 'object' && 'type' in ev && ev.object) {
    return `${ev.type} ${ev.object.metadata?.name} ${ev.object.metadata?.resourceVersion}`;
  }
  return e;
}

export const names = (events: InformerEvent<KubernetesObject>[]): string[] => events.map((e) => `${e.type} ${e.object.metadata?.name}`);

export function configMap(
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  metadata: Partial<NonNullable<KubernetesObject['metadata']>> = {},
) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...metadata }, data };
}
