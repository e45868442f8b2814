/** The controllers' Prometheus metrics: runs, queues, caches and start-up, one series per controller and type. */
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';

// Loaded by the first `createMetrics`: an operator without a registry never needs prom-client.
let promClient: typeof import('prom-client') | undefined;
const metricTypes = (): typeof import('prom-client') =>
  (promClient ??= createRequire(import.meta.url)('prom-client') as typeof import('prom-client'));
import type { ReconcileOutcome, ReconcileResult } from '../core/index.js';
import { parseApiVersion } from '../kube/index.js';

/**
 * The labels of every controller metric. Deliberately no name, namespace or uid: OB2 says one
 * series per controller and resource type, never one per resource.
 */
export interface ControllerLabels {
  controller: string;
  group: string;
  version: string;
  kind: string;
}

/** A source's cache: the controller it serves, the source name and the cached type. */
export interface CacheLabels extends ControllerLabels {
  source: string;
}

/** Labels for a controller reconciling `apiVersion`/`kind`. */
export function controllerLabels(controller: string, resource: { apiVersion: string; kind: string }): ControllerLabels {
  if (typeof controller !== 'string' || controller === '') throw new Error('controllerLabels: controller name is required');
  const { group, version } = parseApiVersion(resource.apiVersion);
  return { controller, group, version, kind: resource.kind };
}

export interface MetricsOptions {
  /** Prefix of every metric name (default 'rxkube_'). */
  prefix?: string;
  /** Buckets of the reconcile duration histogram, in seconds. */
  durationBuckets?: number[];
  /** Buckets of the queue wait histogram, in seconds (default as the duration's). */
  queueBuckets?: number[];
}

/** Where a controller is in its start-up: its caches synced, its first run started. */
export type StartupPhase = 'caches_synced' | 'first_run';

/** The recorder the controller calls. Every method is cheap and never throws on valid labels. */
export interface RxkubeMetrics {
  readonly registry: Registry;
  /** A run starts: started++, active++, retries++ when the run is a retry, and its wait in the queue observed. */
  reconcileStarted(labels: ControllerLabels, info?: { retry?: boolean; queuedSeconds?: number }): void;
  /** A run passed its deadline (`runTimeoutMs`); its result is counted when it really ends. */
  runTimedOut(labels: ControllerLabels): void;
  /** The controller's `maxConcurrentReconciliations`. */
  setMaxConcurrent(labels: ControllerLabels, max: number): void;
  /** Seconds from the process start to a start-up phase of the controller (set once per phase). */
  startupPhase(labels: ControllerLabels, phase: StartupPhase, secondsSinceProcessStart: number): void;
  /** The run started with reconcileStarted ends: active--, the result's counter++, duration observed. */
  reconcileEnded(labels: ControllerLabels, result: ReconcileResult, seconds: number): void;
  /**
   * Records a whole run from the core's outcome (times in ms) when its start was not reported:
   * counters and histogram as reconcileStarted + reconcileEnded would, the active gauge untouched.
   * A `skipped` outcome counts only as skipped.
   */
  recordOutcome(labels: ControllerLabels, outcome: ReconcileOutcome): void;
  eventReceived(labels: ControllerLabels, source: string, action: string): void;
  setQueued(labels: ControllerLabels, count: number): void;
  setActive(labels: ControllerLabels, count: number): void;
  /** `held`: the objects a source's cache holds now; `known`: those its informer knows (more when the cache is bounded). */
  setCacheSize(labels: CacheLabels, held: number, known?: number): void;
  /** A controller's event source failed: its Observable errored, or it reported a failure (a fetch, a mapper). */
  sourceError(labels: CacheLabels): void;
  setLeader(isLeader: boolean): void;
  /** `ctx.events.normal/warning` was called (also when the write is then held back or fails). */
  eventRecorded(labels: ControllerLabels, type: 'Normal' | 'Warning'): void;
  /**
   * An event occurrence that never reached the API: `invalid` arguments, a `writeFailed`, or
   * `rateLimited` occurrences still held back when their series was forgotten or the recorder stopped.
   */
  eventDropped(labels: ControllerLabels, cause: 'invalid' | 'writeFailed' | 'rateLimited'): void;
  /** SH1–SH4: a sharded controller's live members as this replica sees them. */
  setShardMembers(labels: ControllerLabels, members: number): void;
  /** SH2: the primaries a sharded controller owns, counted by `count` at each scrape until the returned function is called. */
  countShardOwned(labels: ControllerLabels, count: () => number): () => void;
  /** SH3: a handover completed here (every member acknowledged a new view). */
  shardHandover(labels: ControllerLabels): void;
  /**
   * OB3: 1 while the controller is ready (caches synced, watches healthy, sources running), read
   * by `ready` at each scrape until the returned function is called.
   */
  countReady(labels: ControllerLabels, ready: () => boolean): () => void;
}

const CONTROLLER_LABELS = ['controller', 'group', 'version', 'kind'] as const;

interface GaugeReader {
  readonly labels: ControllerLabels;
  readonly count: () => number;
}
/** What each gauge read at a scrape reads, by the gauge (one gauge per registry, shared by its operators). */
const gaugeReaders = new WeakMap<object, Map<string, GaugeReader>>();
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * OB2: registers rxkube's metrics on the registry the caller passes (never prom-client's global
 * one). Calling it again with the same registry reuses the metrics already there, so several
 * controllers can share one registry.
 */
export function createMetrics(registry: Registry, options: MetricsOptions = {}): RxkubeMetrics {
  if (!registry || typeof registry.registerMetric !== 'function' || typeof registry.getSingleMetric !== 'function') {
    throw new Error('createMetrics: registry must be a prom-client Registry (pass new Registry(), not the global default)');
  }
  const { Counter, Gauge, Histogram } = metricTypes();
  const prefix = options.prefix ?? 'rxkube_';
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) throw new Error(`createMetrics: prefix '${prefix}' is not a valid metric name prefix`);

  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    reuse(registry, prefix + name, () => new Counter<L>({ name: prefix + name, help, labelNames, registers: [registry] }));
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    reuse(registry, prefix + name, () => new Gauge<L>({ name: prefix + name, help, labelNames, registers: [registry] }));

  const duration = reuse(
    registry,
    `${prefix}reconcile_duration_seconds`,
    () =>
      new Histogram<(typeof CONTROLLER_LABELS)[number] | 'result'>({
        name: `${prefix}reconcile_duration_seconds`,
        help: 'Duration of reconcile and cleanup runs, by result',
        labelNames: [...CONTROLLER_LABELS, 'result'],
        buckets: options.durationBuckets ?? DEFAULT_BUCKETS,
        registers: [registry],
      }),
  );
  const queueWait = reuse(
    registry,
    `${prefix}reconcile_queue_duration_seconds`,
    () =>
      new Histogram<(typeof CONTROLLER_LABELS)[number]>({
        name: `${prefix}reconcile_queue_duration_seconds`,
        help: 'Time a run waited in the queue between being owed (an event, a due retry) and starting',
        labelNames: CONTROLLER_LABELS,
        buckets: options.queueBuckets ?? options.durationBuckets ?? DEFAULT_BUCKETS,
        registers: [registry],
      }),
  );
  const timeouts = counter(
    'reconcile_timeouts_total',
    'Runs that passed their deadline (runTimeoutMs) and were aborted',
    CONTROLLER_LABELS,
  );
  const maxConcurrent = gauge(
    'max_concurrent_reconciliations',
    'The most runs a controller makes at once (maxConcurrentReconciliations)',
    CONTROLLER_LABELS,
  );
  const startup = gauge(
    'startup_seconds',
    "Seconds from the process start to a controller's caches synced and to its first run, by phase",
    [...CONTROLLER_LABELS, 'phase'],
  );
  const started = counter('reconciliations_started_total', 'Runs started', CONTROLLER_LABELS);
  const success = counter('reconciliations_success_total', 'Runs that succeeded', CONTROLLER_LABELS);
  const failure = counter('reconciliations_failure_total', 'Runs that failed', CONTROLLER_LABELS);
  const skipped = counter(
    'reconciliations_skipped_total',
    "Runs skipped because the primary was not in the cache (or, sharded, is not this replica's)",
    CONTROLLER_LABELS,
  );
  const retries = counter('reconciliations_retries_total', 'Runs that were retries of a failed run', CONTROLLER_LABELS);
  const active = gauge('reconciliations_active', 'Runs in progress', CONTROLLER_LABELS);
  const queued = gauge('reconciliations_queued', 'Resources waiting for a run', CONTROLLER_LABELS);
  const events = counter('events_received_total', 'Events received, by source and action', [...CONTROLLER_LABELS, 'source', 'action']);
  const cacheSize = gauge('cache_size', 'Objects a source cache holds (at most its bound when bounded)', [...CONTROLLER_LABELS, 'source']);
  const cacheKnown = gauge('cache_known_objects', 'Objects a source informer knows, held or evicted from a bounded cache', [
    ...CONTROLLER_LABELS,
    'source',
  ]);
  const sourceErrors = counter(
    'source_errors_total',
    'Failures of an event source (an error of its Observable, a failed fetch, a mapper that threw), by source',
    [...CONTROLLER_LABELS, 'source'],
  );
  const eventsRecorded = counter('events_recorded_total', 'Kubernetes Events recorded about primaries, by type', [
    ...CONTROLLER_LABELS,
    'type',
  ]);
  const eventsDropped = counter('events_dropped_total', 'Kubernetes Event occurrences that never reached the API, by cause', [
    ...CONTROLLER_LABELS,
    'cause',
  ]);
  const shardMembers = gauge('shard_members', 'Live members of a sharded controller, as this replica sees them', CONTROLLER_LABELS);
  // SH2: which primaries a replica owns changes with every primary created or deleted, not only
  // with the view, so the count is taken at each scrape (one pass over the cache), not kept.
  const shardOwned = collected(
    registry,
    `${prefix}shard_owned_resources`,
    'Primaries this replica owns in its current view of a sharded controller',
  );
  const ready = collected(
    registry,
    `${prefix}controller_ready`,
    '1 while a controller is ready: its caches synced, its watches healthy, its sources running',
  );
  const shardHandovers = counter(
    'shard_handovers_total',
    'Views of a sharded controller whose handover completed on this replica',
    CONTROLLER_LABELS,
  );
  const leader = gauge('leader', '1 while this instance leads (or runs without leader election), else 0', []);

  const ended = (labels: ControllerLabels, result: ReconcileResult, seconds: number) => {
    if (result === 'skipped') return skipped.inc(pick(labels));
    (result === 'success' ? success : failure).inc(pick(labels));
    duration.observe({ ...pick(labels), result }, Math.max(0, Number.isFinite(seconds) ? seconds : 0));
  };

  return {
    registry,
    reconcileStarted(labels, info) {
      const l = pick(labels);
      started.inc(l);
      active.inc(l);
      if (info?.retry) retries.inc(l);
      if (info?.queuedSeconds !== undefined && Number.isFinite(info.queuedSeconds)) queueWait.observe(l, Math.max(0, info.queuedSeconds));
    },
    runTimedOut(labels) {
      timeouts.inc(pick(labels));
    },
    setMaxConcurrent(labels, max) {
      maxConcurrent.set(pick(labels), max);
    },
    startupPhase(labels, phase, seconds) {
      startup.set({ ...pick(labels), phase }, seconds);
    },
    reconcileEnded(labels, result, seconds) {
      if (result !== 'skipped') active.dec(pick(labels));
      ended(labels, result, seconds);
    },
    recordOutcome(labels, outcome) {
      if (outcome.result !== 'skipped') {
        started.inc(pick(labels));
        const cause = outcome.cause.type === 'rateLimit' ? outcome.cause.postponed : outcome.cause;
        if (cause.type === 'retry') retries.inc(pick(labels));
      }
      ended(labels, outcome.result, (outcome.endedAt - outcome.startedAt) / 1000);
    },
    eventReceived(labels, source, action) {
      events.inc({ ...pick(labels), source, action });
    },
    setQueued(labels, count) {
      queued.set(pick(labels), count);
    },
    setActive(labels, count) {
      active.set(pick(labels), count);
    },
    setCacheSize(labels, held, known) {
      cacheSize.set({ ...pick(labels), source: labels.source }, held);
      if (known !== undefined) cacheKnown.set({ ...pick(labels), source: labels.source }, known);
    },
    sourceError(labels) {
      sourceErrors.inc({ ...pick(labels), source: labels.source });
    },
    setLeader(isLeader) {
      leader.set(isLeader ? 1 : 0);
    },
    eventRecorded(labels, type) {
      eventsRecorded.inc({ ...pick(labels), type });
    },
    eventDropped(labels, cause) {
      eventsDropped.inc({ ...pick(labels), cause });
    },
    setShardMembers(labels, members) {
      shardMembers.set(pick(labels), members);
    },
    countShardOwned(labels, count) {
      return shardOwned(labels, count);
    },
    countReady(labels, isReady) {
      return ready(labels, () => (isReady() ? 1 : 0));
    },
    shardHandover(labels) {
      shardHandovers.inc(pick(labels));
    },
  };
}

// Copies only the four bounded labels, so an object with extra fields (a ResourceID, say) can never add a series.
function pick(labels: ControllerLabels): ControllerLabels {
  return { controller: labels.controller, group: labels.group, version: labels.version, kind: labels.kind };
}

/**
 * A gauge whose value per controller is read at each scrape; adding a reader answers the function
 * that removes it (and its series).
 */
function collected(registry: Registry, name: string, help: string): (labels: ControllerLabels, read: () => number) => () => void {
  const { Gauge } = metricTypes();
  const gauge = reuse(registry, name, () => {
    const readers = new Map<string, GaugeReader>();
    const created = new Gauge<(typeof CONTROLLER_LABELS)[number]>({
      name,
      help,
      labelNames: CONTROLLER_LABELS,
      registers: [registry],
      collect() {
        for (const { labels, count } of readers.values()) this.set(labels, count());
      },
    });
    gaugeReaders.set(created, readers);
    return created;
  });
  const readers = gaugeReaders.get(gauge) ?? new Map<string, GaugeReader>();
  return (labels, read) => {
    const entry = { labels: pick(labels), count: read };
    const key = JSON.stringify(entry.labels);
    readers.set(key, entry);
    return () => {
      if (readers.get(key) !== entry) return;
      readers.delete(key);
      gauge.remove(entry.labels);
    };
  };
}

function reuse<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}
