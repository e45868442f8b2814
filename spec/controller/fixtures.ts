/** The Widget custom resource and what the controller specs record, on `startTestCluster`. */
import { Writable } from 'node:stream';
import type { KubernetesObject } from '@kubernetes/client-node';
import { firstValueFrom, filter, timeout, type Observable } from 'rxjs';
import type { ReconcileOutcome } from '../../lib/core/index.js';
import { builtinResources, customResourceDefinition, descriptorOf, type ResourceClient } from '../../lib/kube/index.js';
import { createLogger, type Logger } from '../../lib/observe/index.js';
import { consistently, eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster, type TestClusterOptions } from '../../lib/testing/cluster/index.js';
import { GenericRetry } from '../../lib/processing/index.js';
import type { ControllerConfig, InformerTuning } from '../../lib/controller/index.js';

export interface Widget extends KubernetesObject {
  spec?: { value?: string; replicas?: unknown; uses?: string[] };
  status?: Record<string, unknown>;
}

export type ConfigMap = KubernetesObject & { data?: Record<string, string> };

export const widgetCrd = customResourceDefinition({ group: 'sample.rxkube.dev', kind: 'Widget', plural: 'widgets' });
export const WIDGET = descriptorOf(widgetCrd);
export const { configMap: CONFIGMAPS, secret: SECRETS } = builtinResources;
export const FINALIZER = 'widgets.sample.rxkube.dev/finalizer';

/** Fast informer timings: quick, deterministic reconnects after injected faults. */
export const FAST_INFORMER: InformerTuning = {
  timeoutSeconds: 30,
  deadMarginMs: 2_000,
  listTimeoutMs: 5_000,
  backoff: { initialMs: 20, maxMs: 200, factor: 2, jitter: 0, resetAfterMs: 120_000 },
};

/** Retries after 20, 20, 30, 45, 67 ms. */
export const FAST_RETRY = GenericRetry.defaults().withInitialMs(20);

/** The widget controller's configuration with the fast timings. */
export function widgetConfig(extra: Partial<ControllerConfig<Widget>> = {}): ControllerConfig<Widget> {
  return { resource: WIDGET, retry: FAST_RETRY, informer: FAST_INFORMER, ...extra };
}

/** The embedded cluster with the Widget CRD installed, and clients for the kinds the specs use. */
export interface Env extends TestCluster {
  readonly widgets: ResourceClient<Widget>;
  readonly configMaps: ResourceClient<ConfigMap>;
  readonly secrets: ResourceClient<KubernetesObject>;
}

export async function startEnv(options: TestClusterOptions = {}): Promise<Env> {
  const cluster = await startTestCluster({ ...options, crds: [widgetCrd, ...(options.crds ?? [])] });
  return {
    ...cluster,
    widgets: cluster.client.resource<Widget>(WIDGET),
    configMaps: cluster.client.resource<ConfigMap>(CONFIGMAPS),
    secrets: cluster.client.resource(SECRETS),
  };
}

export function widget(
  name: string,
  spec: Widget['spec'] = { value: 'a' },
  namespace = 'default',
  metadata: Partial<NonNullable<KubernetesObject['metadata']>> = {},
): Widget {
  return { apiVersion: WIDGET.apiVersion, kind: WIDGET.kind, metadata: { name, namespace, ...metadata }, spec };
}

export async function createWidget(env: Env, w: Widget): Promise<Widget> {
  return env.widgets.create(w);
}

export async function getWidget(env: Env, name: string, namespace = 'default'): Promise<Widget | undefined> {
  return env.widgets.find({ name, namespace });
}

export async function patchWidget(env: Env, name: string, patch: object, namespace = 'default'): Promise<Widget> {
  return env.widgets.mergePatch({ name, namespace }, patch);
}

export async function patchWidgetStatus(env: Env, name: string, patch: object, namespace = 'default'): Promise<Widget> {
  return env.widgets.mergePatchStatus({ name, namespace }, patch);
}

export async function deleteWidget(env: Env, name: string, namespace = 'default'): Promise<void> {
  await env.widgets.delete({ name, namespace });
}

export { consistently, eventually };

export function next<T>(source: Observable<T>, predicate: (v: T) => boolean, ms = 5000): Promise<T> {
  return firstValueFrom(source.pipe(filter(predicate), timeout(ms)));
}

/** Every outcome a controller reports, kept for assertions. */
export interface Outcomes {
  readonly all: ReconcileOutcome[];
  of(name: string, namespace?: string): ReconcileOutcome[];
  /** Resolves when `predicate` holds for the outcomes of `name` (polls). */
  until(
    name: string,
    predicate: (outcomes: ReconcileOutcome[]) => boolean,
    what: string,
    ms?: number,
    namespace?: string,
  ): Promise<ReconcileOutcome[]>;
}

export function recordOutcomes(outcome$: Observable<ReconcileOutcome>): Outcomes {
  const all: ReconcileOutcome[] = [];
  outcome$.subscribe((o) => all.push(o));
  const of = (name: string, namespace = 'default') => all.filter((o) => o.id.name === name && (o.id.namespace ?? '') === namespace);
  return {
    all,
    of,
    until: (name, predicate, what, ms = 5000, namespace = 'default') =>
      eventually(
        () => `${name}: ${what} (outcomes: ${JSON.stringify(of(name, namespace).map(brief))})`,
        () => predicate(of(name, namespace)) && of(name, namespace),
        ms,
      ),
  };
}

export function brief(o: ReconcileOutcome): string {
  const cause = o.cause.type === 'event' ? `event:${o.cause.source}` : o.cause.type;
  return `${cause}->${o.result}${o.retry ? `(retry ${o.retry.attempt})` : ''}`;
}

/** Counts runs per resource and records the most runs of one resource at the same time (EP1). */
export class RunTracker {
  readonly counts = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  maxConcurrentPerResource = 0;

  begin(obj: KubernetesObject): () => void {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const now = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, now);
    this.maxConcurrentPerResource = Math.max(this.maxConcurrentPerResource, now);
    return () => this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
  }

  count(name: string, namespace = 'default'): number {
    return this.counts.get(`${namespace}/${name}`) ?? 0;
  }
}

/** A pino logger whose JSON lines are kept in memory. */
export function capturingLogger(level: 'debug' | 'info' = 'debug'): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines };
}
