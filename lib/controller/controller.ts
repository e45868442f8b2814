/** The Controller: one primary type's informers, event sources, runs and metrics, with their start, readiness and stop. */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  BehaviorSubject,
  combineLatest,
  EMPTY,
  filter,
  map,
  merge,
  type Observable,
  of,
  pairwise,
  Subject,
  type Subscription,
  take,
  takeUntil,
  tap,
} from 'rxjs';
import {
  ConfigurationError,
  describeError,
  isMarkedForDeletion,
  resourceIdOf,
  resourceKey,
  RunTimeoutError,
  type ReconcileOutcome,
  type ResourceEvent,
  type ResourceID,
} from '../core/index.js';
import { classifyError, errorMessage, serverOf, wrapRequests, type KubeClient } from '../kube/index.js';
import {
  controllerLabels,
  errorLogLevel,
  EventBroadcaster,
  type ControllerLabels,
  resourceBindings,
  type HealthCheckResult,
  type Logger,
  type RxkubeMetrics,
  type Tracing,
} from '../observe/index.js';
import { reconcileEach, type RunFn, type RunResult } from '../processing/index.js';
import type { Shard } from '../sharding/index.js';
import { InformerPool, type InformerLike } from '../cache/index.js';
import { resolveNamespaces, type ResolvedControllerConfig } from './config.js';
import { containedSource } from './contained-source.js';
import { leaseGatedClient, type LeaseCheck } from './lease-gate.js';
import { controllerEvents } from './pipeline.js';
import { Primaries } from './primaries.js';
import { gainedResources, memberLost, reportedToShard, runnableOnly } from './sharded.js';
import { runOf } from './run.js';
import { RunTraces } from './run-traces.js';
import { controllerInformers, ControllerSources, logInformerFailures, watching } from './sources.js';
import type { EventSourceInfo, Reconciler } from './types.js';

export interface ControllerEnvironment {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly metrics?: RxkubeMetrics | undefined;
  /** While false, events are kept but nothing runs (leader election, OB4). Default: always true. */
  readonly leading$?: Observable<boolean> | undefined;
  /** Where informers come from, shared with the other controllers of the pool (the Operator's). Default: a pool of this controller's own on `client`. */
  readonly informers?: InformerPool | undefined;
  /** SH1–SH4: this replica's membership when the controller is sharded; it runs only the resources the shard gives it. */
  readonly shard?: Shard | undefined;
  /**
   * OB4 with leader election: whether this instance leads at this very moment, judged on the
   * clock (the elector's `holdsLease`); asked before each run starts and each write of a run.
   */
  readonly holdsLeadership?: LeaseCheck | undefined;
  /** Every run as a trace (the Operator's `tracing`). Default: none. */
  readonly tracing?: Tracing | undefined;
}

export const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/** OB2: counts a run as started when it starts (active gauge, retries), and its result and duration when it ends. */
function measured(
  run: (...args: Parameters<RunFn>) => Promise<RunResult | void>,
  metrics: RxkubeMetrics,
  labels: ControllerLabels,
): (...args: Parameters<RunFn>) => Promise<RunResult | void> {
  let first = true;
  return async (id, ctx) => {
    if (first) {
      first = false;
      metrics.startupPhase(labels, 'first_run', performance.now() / 1000);
    }
    metrics.reconcileStarted(labels, { retry: ctx.cause.type === 'retry', queuedSeconds: ctx.queuedMs / 1000 });
    const started = performance.now();
    let result: 'success' | 'failure' = 'failure';
    try {
      const output = await run(id, ctx);
      // EP14: a run that ends well after its deadline is still a timed-out one.
      result = ctx.signal.aborted && ctx.signal.reason instanceof RunTimeoutError ? 'failure' : 'success';
      return output;
    } finally {
      metrics.reconcileEnded(labels, result, (performance.now() - started) / 1000);
    }
  };
}

/**
 * One reconciler assembled with its sources: its `Primaries` (the primary informer, the
 * read-your-writes cache, the finalizer rule) and `controllerEvents` (those primaries' events
 * merged with the secondary and custom sources) piped into `reconcileEach(reconcilerRun(...))`,
 * all three taking the same primaries. The Controller adds lifecycle (start, stop, namespaces,
 * health), logs and metrics; every decision is made by those operators and the run.
 */
export class Controller<P extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  private readonly primaryInformer: InformerLike<P>;
  private readonly primaries: Primaries<P>;
  private readonly sources: ControllerSources<P>;
  private readonly outcomes = new Subject<ReconcileOutcome>();
  private readonly started$ = new BehaviorSubject(false);
  private readonly stopping$ = new Subject<void>();
  private readonly logger: Logger;
  private readonly events: EventBroadcaster;
  private subscription: Subscription | undefined;
  private drained: Promise<void> | undefined;
  /** Why processing died (a bug or a broken policy): nothing runs any more, see `liveness`. */
  private failure: unknown;
  /** User sources whose Observable errored and that are not subscribed again yet (or left stopped), with the error. */
  private readonly failedSources = new Map<string, unknown>();
  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';
  private readonly traces: RunTraces<P> | undefined;

  constructor(
    private readonly reconciler: Reconciler<P>,
    private readonly config: ResolvedControllerConfig<P>,
    private readonly env: ControllerEnvironment,
  ) {
    this.name = config.name;
    this.logger = env.logger.child({ controller: config.name });
    this.events = new EventBroadcaster({
      client: env.client,
      reportingController: config.name,
      logger: this.logger,
      metrics: env.metrics,
      labels: controllerLabels(config.name, config.descriptor),
      scheduler: config.scheduling.scheduler,
    });
    const informerFor = controllerInformers(env.informers ?? new InformerPool({ client: env.client }), config.informer);
    this.primaryInformer = informerFor<P>({
      resource: config.descriptor,
      name: config.name,
      namespaces: config.namespaces,
      labelSelector: config.labelSelector,
      fieldSelector: config.fieldSelector,
      bounded: config.informer.bounded,
    });
    this.primaries = new Primaries(this.primaryInformer, {
      name: config.name,
      finalizerName: config.usesFinalizer ? config.finalizerName : undefined,
      generationAware: config.generationAware,
    });
    logInformerFailures(this.logger, this.primaryInformer);
    const labels = controllerLabels(config.name, config.descriptor);
    for (const source of config.sources) {
      source.errors$?.subscribe(({ source: name, error, id }) => {
        env.metrics?.sourceError({ ...labels, source: source.name });
        this.logger[errorLogLevel(error)]({ source: name, err: error, ...(id ? { resource: id } : {}) }, 'event source failed');
      });
    }
    this.sources = new ControllerSources({ config, informerFor, logger: this.logger, primaryInformer: this.primaryInformer });
    this.traces = env.tracing ? new RunTraces(env.tracing, config.name, this.primaries) : undefined;
    env.metrics?.setMaxConcurrent(controllerLabels(config.name, config.descriptor), config.scheduling.maxConcurrentReconciliations);
  }

  /** One outcome per run (hot). */
  get outcome$(): Observable<ReconcileOutcome> {
    return this.outcomes.asObservable();
  }

  get namespaces(): 'all' | readonly string[] {
    return this.primaryInformer.namespaces;
  }

  /** The event sources as they stand now (a copy: the registry itself changes only through WF5). */
  listEventSources(): readonly EventSourceInfo[] {
    return [
      { name: this.name, type: 'primary', ...watching(this.primaryInformer) },
      ...this.sources.list(),
      ...this.config.sources.map((source): EventSourceInfo => ({ name: source.name, type: 'custom' })),
    ];
  }

  /**
   * Starts every informer and, once every cache has synced (ES2), processing. Events that arrive
   * before that are kept and processed then (EP12).
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`controller ${this.name}: start() was already called`);
    this.state = 'starting';
    this.drained = new Promise<void>((resolve) => {
      this.subscription = this.pipeline().subscribe({
        next: (outcome) => this.onOutcome(outcome),
        error: (err: unknown) => {
          this.failure = err;
          this.logger.fatal({ err }, 'processing pipeline failed');
          resolve();
        },
        complete: resolve,
      });
    });
    this.env.shard?.start();
    this.measureShard();
    const unready = this.env.metrics?.countReady(controllerLabels(this.config.name, this.config.descriptor), () => this.readiness().ok);
    if (unready) this.stopping$.pipe(take(1)).subscribe(unready);
    const informers = this.informers();
    for (const inf of informers) inf.start();
    const options = { timeoutMs: this.config.cacheSyncTimeoutMs, failOnError: this.config.stopOnInformerErrorDuringStartup };
    try {
      await Promise.all(informers.map((inf) => inf.whenSynced(options)));
    } catch (err) {
      await this.stop(0);
      throw new Error(`controller ${this.name}: caches did not sync: ${describeError(err)}`, { cause: err });
    }
    if (this.state !== 'starting') return;
    this.env.metrics?.startupPhase(controllerLabels(this.config.name, this.config.descriptor), 'caches_synced', performance.now() / 1000);
    this.state = 'running';
    this.started$.next(true);
    this.logger.info({ namespaces: this.namespaces }, 'controller started');
  }

  /**
   * OB5: stops taking events, lets runs in flight finish (up to `timeoutMs`, then aborts them)
   * and closes every watch.
   */
  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.started$.next(false);
    this.stopping$.next();
    if (this.drained) {
      let timeoutHandle: NodeJS.Timeout | undefined;
      const deadline = new Promise<boolean>((resolve) => (timeoutHandle = setTimeout(() => resolve(true), timeoutMs)));
      const timedOut = await Promise.race([this.drained.then(() => false), deadline]);
      clearTimeout(timeoutHandle); // a pending timer would keep the process alive after stop()
      if (timedOut) this.logger.warn({ timeoutMs }, 'runs still in flight at shutdown were aborted');
    }
    this.subscription?.unsubscribe();
    // SH3: leave the group only once no run is in flight, so that whoever takes over runs alone.
    await this.env.shard?.stop();
    await this.events.stop();
    for (const inf of this.informers()) inf.stop();
    for (const source of this.config.sources) source.stop?.();
    this.primaries.dispose();
    this.sources.dispose();
    this.traces?.dispose();
    this.outcomes.complete();
    this.logger.info('controller stopped');
  }

  /** ES6: the primary informer and the secondaries that follow it move to the new namespaces. */
  changeNamespaces(namespaces: 'all' | readonly string[]): void {
    const resolved = resolveNamespaces('namespaces', namespaces);
    if (!this.config.descriptor.namespaced && resolved !== 'all') {
      throw new ConfigurationError(
        'namespaces',
        `controller ${this.name}: ${this.config.descriptor.kind} is cluster-scoped; namespaces must be 'all'`,
      );
    }
    this.primaryInformer.setNamespaces(resolved);
    // Sources registered at run time (WF5) follow too, and later ones start on the new set.
    this.sources.setNamespaces(resolved);
    this.logger.info({ namespaces: resolved }, 'namespaces changed');
  }

  /** OB3: ready when every cache has synced and every watch is healthy. */
  readiness(): HealthCheckResult {
    const alive = this.liveness();
    if (!alive.ok) return alive;
    if (this.config.sourceErrors.affectsReadiness && this.failedSources.size > 0) {
      const [name, error] = this.failedSources.entries().next().value as [string, unknown];
      return { ok: false, reason: `${this.name}: event source ${name} failed: ${describeError(error)}` };
    }
    if (this.env.shard && !this.env.shard.isMember)
      return { ok: false, reason: `${this.name}: not a member of its shard group (its member Lease is not renewed)` };
    for (const inf of this.informers()) {
      if (!inf.hasSynced()) return { ok: false, reason: `${this.name}: ${inf.name} has not synced` };
      if (!inf.isHealthy()) return { ok: false, reason: `${this.name}: the watch of ${inf.name} is failing` };
    }
    return { ok: true };
  }

  /** OB3: false once processing has died, so that a restart can bring the controller back. */
  liveness(): HealthCheckResult {
    if (this.failure === undefined) return { ok: true };
    return { ok: false, reason: `processing stopped: ${describeError(this.failure)}` };
  }

  /** The assembly: the event side, then the run side in the scheduling core. */
  private pipeline(): Observable<ReconcileOutcome> {
    const { config, env } = this;
    const labels = controllerLabels(config.name, config.descriptor);
    const events$ = controllerEvents(this.primaries, {
      sources: [this.sources.events$, ...config.sources.map((s) => this.contained(s))],
    }).pipe(
      takeUntil(this.stopping$),
      // ES5: a per-resource source stops following a primary once it is deleted, as JOSDK's polling sources do.
      tap((event) => {
        if (event.primary && event.action === 'deleted') for (const source of config.sources) source.untrack?.(event.id);
      }),
      tap((event) => {
        this.traces?.eventArrived(event);
        if (!env.metrics) return;
        env.metrics.eventReceived(labels, event.source, event.action);
        const store = event.source === config.name ? this.primaryInformer.store : this.sources.get(event.source)?.informer.store;
        if (store) env.metrics.setCacheSize({ ...labels, source: event.source }, store.held, store.size);
      }),
    );
    const shard = env.shard;
    // A sharded controller runs on every member, leader or not: membership replaces leadership,
    // so one operator can have a leader for cluster-wide controllers and shards for the others.
    const holdsLease = shard ? () => shard.holdsLease() : env.holdsLeadership;
    const tracing = env.tracing;
    const client = tracing ? wrapRequests(env.client, (request) => tracing.requests(request, serverOf(env.client))) : env.client;
    const run = runOf(this.reconciler, config, {
      client: holdsLease ? leaseGatedClient(client, holdsLease) : client,
      tracing,
      holdsLease,
      primaries: this.primaries,
      secondaries: this.sources,
      eventSources: this.sources,
      logger: env.logger,
      events: this.events,
    });
    const leading$ = shard ? of(true) : (env.leading$ ?? of(true));
    const tracedRun = this.traces ? this.traces.wrap(run) : run;
    const measuredRun = env.metrics ? measured(tracedRun, env.metrics, labels) : tracedRun;
    const sharded$ = shard
      ? merge(
          events$.pipe(runnableOnly(shard)),
          gainedResources(shard, () => this.primaryInformer.store.list(), 'sharding').pipe(takeUntil(this.stopping$)),
        )
      : events$;
    // SH1: a member that could not renew its Lease stops acting, as a leader does (OB4).
    const memberLost$ = shard ? memberLost(shard) : EMPTY;
    return sharded$.pipe(
      reconcileEach<unknown>(shard ? reportedToShard(shard, measuredRun) : measuredRun, {
        ...config.scheduling,
        retry: config.scheduling.retry ?? false,
        primaries: this.primaries,
        // SH3: a due run (retry, reschedule) of a resource this member may no longer run is skipped.
        exists: shard ? (id) => shard.runnable(id) : undefined,
        active$: combineLatest([this.started$, leading$]).pipe(map(([started, leading]) => started && leading)),
        // OB4: judged on the clock as each run starts; a leader past its renew deadline steps down here (active$ turns false).
        mayStart: shard ? undefined : env.holdsLeadership,
        // OB4: leadership lost means runs in flight must stop acting before the lease can expire.
        abortRuns$: merge(
          leading$.pipe(
            pairwise(),
            filter(([was, is]) => was && !is),
          ),
          memberLost$,
        ),
        probe: env.metrics ? (load) => env.metrics?.setQueued(labels, load.queued) : undefined,
        onRunTimeout: (id, timeoutMs) => this.onRunTimeout(id, timeoutMs),
      }),
    );
  }

  /** ES5: a user source that errors is reported and subscribed again after a backoff (or left stopped); the controller goes on. */
  private contained(source: ResolvedControllerConfig<P>['sources'][number]): Observable<ResourceEvent> {
    const { config, env } = this;
    const labels = { ...controllerLabels(config.name, config.descriptor), source: source.name };
    return containedSource(source.events$, {
      policy: config.sourceErrors,
      scheduler: config.scheduling.scheduler,
      onError: (error, attempt, retryInMs) => {
        this.failedSources.set(source.name, error);
        env.metrics?.sourceError(labels);
        const message =
          retryInMs === undefined ? 'event source failed; left stopped' : 'event source failed; subscribing again after a backoff';
        this.logger.error({ source: source.name, err: error, attempt, ...(retryInMs === undefined ? {} : { retryInMs }) }, message);
      },
      onResubscribe: () => {
        this.failedSources.delete(source.name);
        this.logger.info({ source: source.name }, 'event source subscribed again');
      },
    });
  }

  /** SH1–SH4 metrics: members at each change of the shard, handovers as they complete, owned primaries at each scrape. */
  private measureShard(): void {
    const { shard, metrics } = this.env;
    if (!shard || !metrics) return;
    const labels = controllerLabels(this.config.name, this.config.descriptor);
    let handovers = 0;
    const update = () => {
      const status = shard.status;
      metrics.setShardMembers(labels, status.members.length);
      for (; handovers < status.handovers; handovers++) metrics.shardHandover(labels);
    };
    shard.status$.pipe(takeUntil(this.stopping$)).subscribe(update);
    const uncount = metrics.countShardOwned(labels, () => {
      let owned = 0;
      for (const object of this.primaryInformer.store.list()) if (shard.owns(resourceIdOf(object))) owned++;
      return owned;
    });
    this.stopping$.pipe(take(1)).subscribe(uncount);
  }

  /** EP14: counted and logged when the deadline passes; the run's outcome comes when it really ends. */
  private onRunTimeout(id: ResourceID, timeoutMs: number): void {
    const labels = controllerLabels(this.config.name, this.config.descriptor);
    this.env.metrics?.runTimedOut(labels);
    this.traces?.timedOut(id, timeoutMs);
    this.logger.warn(
      { resource: { name: id.name, namespace: id.namespace }, timeoutMs },
      `run of ${resourceKey(id)} passed its deadline; its signal is aborted`,
    );
  }

  private onOutcome(outcome: ReconcileOutcome): void {
    const config = this.config;
    const traceIds = this.traces?.ended(outcome);
    // Runs are measured as they start and end (`measured`); a skipped one never ran.
    if (outcome.result === 'skipped') this.env.metrics?.recordOutcome(controllerLabels(config.name, config.descriptor), outcome);
    // A run that went well is a debug line: with debug off, nothing of it is built.
    if (outcome.result !== 'failure' && !this.logger.isLevelEnabled('debug')) {
      this.outcomes.next(outcome);
      return;
    }
    // OB1: the primary as the cache has it now (for a deleted one, what the id tells).
    const primary = this.primaries.get(outcome.id);
    const fields = {
      resource: primary ? resourceBindings(primary).resource : { name: outcome.id.name, namespace: outcome.id.namespace },
      result: outcome.result,
      durationMs: outcome.endedAt - outcome.startedAt,
      ...(outcome.retry ? { retry: outcome.retry } : {}),
      ...(outcome.reschedule ? { reschedule: outcome.reschedule } : {}),
      ...traceIds,
    };
    if (outcome.result === 'failure') {
      // UP2: a conflict is optimistic concurrency doing its job: info, not error.
      const level = errorLogLevel(outcome.error);
      // EP14: a run that went on after its signal aborted is named for it: it does not watch ctx.signal.
      const overran = outcome.error instanceof RunTimeoutError && outcome.error.overrunMs > 0;
      const message = overran
        ? `run of ${resourceKey(outcome.id)} overran its deadline by ${outcome.error.overrunMs} ms (it does not stop when ctx.signal aborts)`
        : `run of ${resourceKey(outcome.id)} failed`;
      this.logger[level]({ ...fields, err: outcome.error, kind: classifyError(outcome.error) }, message);
      // One Event per distinct error (its repeats count in its series); a conflict is no news (UP2).
      if (primary && level !== 'info' && this.state === 'running') {
        const cleanup = isMarkedForDeletion(primary);
        this.events.record(
          primary,
          'Warning',
          cleanup ? 'CleanupFailed' : 'ReconcileFailed',
          errorMessage(outcome.error),
          cleanup ? 'Cleanup' : 'Reconcile',
        );
      }
    } else {
      this.logger.debug(fields, `run of ${resourceKey(outcome.id)}: ${outcome.result}`);
    }
    this.outcomes.next(outcome);
  }

  private informers(): InformerLike<KubernetesObject>[] {
    return [this.primaryInformer, ...this.sources.informers()];
  }
}
