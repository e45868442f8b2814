import type { KubernetesObject } from '@kubernetes/client-node';
import {
  BehaviorSubject,
  combineLatest,
  filter,
  map,
  merge,
  mergeMap,
  type Observable,
  of,
  pairwise,
  Subject,
  type Subscription,
  takeUntil,
  tap,
} from 'rxjs';
import { ConfigurationError, describeError, isMarkedForDeletion, resourceKey, type ReconcileOutcome } from '../core/index.js';
import { classifyError, errorMessage, type KubeClient } from '../kube/index.js';
import { controllerLabels, errorLogLevel, EventRecorder, type ControllerLabels, resourceBindings, type HealthCheckResult, type Logger, type RxkubeMetrics } from '../observe/index.js';
import { generationChanged, reconcileEach, type RunFn, type RunResult } from '../processing/index.js';
import {
  InformerPool,
  ReadYourWritesCache,
  SecondarySource,
  toResourceEvents,
  type InformerLike,
  type ObjectTransform,
  type SharedInformerOptions,
} from '../sources/index.js';
import type { EventSourceRegistry } from '../workflow/index.js';
import { resolveNamespaces, resolveSecondary, type ResolvedControllerConfig, type ResolvedSecondary } from './config.js';
import { dispatcher } from './dispatch.js';
import { hasFinalizer, primaryWriter } from './primary-writes.js';
import { trackedClient, type TrackedClient } from './tracked-client.js';
import type { EventSourceInfo, Reconciler } from './types.js';

export interface ControllerEnvironment {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly metrics?: RxkubeMetrics | undefined;
  /** While false, events are kept but nothing runs (leader election, OB4). Default: always true. */
  readonly leading$?: Observable<boolean> | undefined;
  /** Where informers come from, shared with the other controllers of the pool (the Operator's). Default: a pool of this controller's own on `client`. */
  readonly informers?: InformerPool | undefined;
}

export const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/** OB2: counts a run as started when it starts (active gauge, retries), and its result and duration when it ends. */
function measured(run: (...args: Parameters<RunFn>) => Promise<RunResult | void>, metrics: RxkubeMetrics, labels: ControllerLabels): RunFn {
  return async (id, ctx) => {
    metrics.reconcileStarted(labels, { retry: ctx.cause.type === 'retry' });
    const started = performance.now();
    let result: 'success' | 'failure' = 'failure';
    try {
      const output = await run(id, ctx);
      result = 'success';
      return output;
    } finally {
      metrics.reconcileEnded(labels, result, (performance.now() - started) / 1000);
    }
  };
}

/**
 * One reconciler assembled with its sources: the primary informer behind a read-your-writes
 * cache, secondary sources, the generation filter and the scheduling core. It holds lifecycle
 * (start, stop, namespaces); every decision is made by the operators and the dispatcher.
 */
export class Controller<P extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  private readonly informerPool: InformerPool;
  private readonly primaryInformer: InformerLike<P>;
  private readonly primaries: ReadYourWritesCache<P>;
  private readonly secondaries = new Map<string, SecondarySource<KubernetesObject, P>>();
  private readonly secondaryClients = new Map<string, TrackedClient<KubernetesObject>>();
  /** Sources (static or registered at run time) that watch the primary's namespaces (ES6). */
  private readonly followingPrimary = new Set<string>();
  /** Sources registered at run time by activation conditions (WF5), with the dependents using them. */
  private readonly dynamicSources = new Map<string, { readonly users: Set<string>; readonly synced: Promise<void> }>();
  private readonly sourceAdded$ = new Subject<SecondarySource<KubernetesObject, P>>();
  private readonly outcomes = new Subject<ReconcileOutcome>();
  private readonly started$ = new BehaviorSubject(false);
  private readonly stopping$ = new Subject<void>();
  private readonly logger: Logger;
  private readonly events: EventRecorder;
  private subscription: Subscription | undefined;
  private drained: Promise<void> | undefined;
  /** Why processing died (a bug or a broken policy): nothing runs any more, see `liveness`. */
  private failure: unknown;
  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';

  constructor(
    private readonly reconciler: Reconciler<P>,
    private readonly config: ResolvedControllerConfig<P>,
    private readonly env: ControllerEnvironment,
  ) {
    this.name = config.name;
    this.logger = env.logger.child({ controller: config.name });
    this.events = new EventRecorder({
      client: env.client,
      reportingController: config.name,
      logger: this.logger,
      metrics: env.metrics,
      labels: controllerLabels(config.name, config.descriptor),
      scheduler: config.scheduling.scheduler,
    });
    this.informerPool = env.informers ?? new InformerPool({ client: env.client });
    this.primaryInformer = this.informerPool.acquire<P>({
      ...this.informerTuning(),
      resource: config.descriptor,
      name: config.name,
      namespaces: config.namespaces,
      labelSelector: config.config.labelSelector,
      fieldSelector: config.config.fieldSelector,
      bounded: config.config.informer?.bounded,
      // A transform keeps the object's kind: what it returns for a P is a P.
      transform: config.config.informer?.transform as ObjectTransform<P> | undefined,
    });
    this.primaries = new ReadYourWritesCache(this.primaryInformer);
    this.logFailures(this.primaryInformer);
    for (const source of config.sources) {
      source.errors$?.subscribe(({ source: name, error, id }) =>
        this.logger[errorLogLevel(error)]({ source: name, err: error, ...(id ? { resource: id } : {}) }, 'event source failed'),
      );
    }
    for (const secondary of config.secondaries) this.addSecondary(secondary);
  }

  /** WF5: activation conditions register and unregister their dependents' event sources here. */
  readonly eventSources: EventSourceRegistry = {
    register: async (dependent, eventSource) => {
      const resolved = resolveSecondary<P>(eventSource, `workflow.${dependent}.eventSource`);
      const registered = this.dynamicSources.get(resolved.name);
      if (registered) {
        // Registered by a run of another primary: this run, too, reads it only once it has synced.
        registered.users.add(dependent);
        return registered.synced;
      }
      if (this.secondaries.has(resolved.name)) return; // a static source of that name serves it
      const source = this.addSecondary(resolved);
      source.informer.start();
      this.sourceAdded$.next(source);
      const synced = source.informer.whenSynced({ timeoutMs: this.config.cacheSyncTimeoutMs, failOnError: false });
      this.dynamicSources.set(resolved.name, { users: new Set([dependent]), synced });
      await synced;
      this.logger.info({ source: resolved.name, dependent }, 'event source registered');
    },
    unregister: (dependent, eventSource) => {
      const name = resolveSecondary<P>(eventSource, `workflow.${dependent}.eventSource`).name;
      const users = this.dynamicSources.get(name)?.users;
      if (!users?.delete(dependent) || users.size > 0) return;
      this.dynamicSources.delete(name);
      const source = this.secondaries.get(name);
      this.secondaries.delete(name);
      this.secondaryClients.delete(name);
      this.followingPrimary.delete(name);
      source?.informer.stop();
      source?.cache.dispose();
      this.logger.info({ source: name, dependent }, 'event source unregistered');
    },
  };

  /** One outcome per run (hot). */
  get outcome$(): Observable<ReconcileOutcome> {
    return this.outcomes.asObservable();
  }

  get namespaces(): 'all' | readonly string[] {
    return this.primaryInformer.namespaces;
  }

  /** The event sources as they stand now (a copy: the registry itself changes only through WF5). */
  listEventSources(): readonly EventSourceInfo[] {
    const watching = (inf: InformerLike<KubernetesObject> | InformerLike<P>) => ({
      resource: { apiVersion: inf.resource.apiVersion, kind: inf.resource.kind },
      namespaces: inf.namespaces,
    });
    return [
      { name: this.name, type: 'primary', ...watching(this.primaryInformer) },
      ...[...this.secondaries].map(([name, source]): EventSourceInfo => {
        const users = this.dynamicSources.get(name)?.users;
        return { name, type: 'secondary', ...watching(source.informer), ...(users ? { registeredBy: [...users] } : {}) };
      }),
      ...this.config.sources.map((_source, i): EventSourceInfo => ({ name: `sources[${i}]`, type: 'custom' })),
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
    await this.events.stop();
    for (const inf of this.informers()) inf.stop();
    for (const source of this.config.sources) source.stop?.();
    this.primaries.dispose();
    for (const s of this.secondaries.values()) s.cache.dispose();
    this.outcomes.complete();
    this.logger.info('controller stopped');
  }

  /** ES6: the primary informer and the secondaries that follow it move to the new namespaces. */
  changeNamespaces(namespaces: 'all' | readonly string[]): void {
    const resolved = resolveNamespaces('namespaces', namespaces);
    if (!this.config.descriptor.namespaced && resolved !== 'all') {
      throw new ConfigurationError('namespaces', `controller ${this.name}: ${this.config.descriptor.kind} is cluster-scoped; namespaces must be 'all'`);
    }
    this.primaryInformer.setNamespaces(resolved);
    // Sources registered at run time (WF5) follow too, and later ones start on the new set.
    for (const name of this.followingPrimary) this.secondaries.get(name)?.informer.setNamespaces(resolved);
    this.logger.info({ namespaces: resolved }, 'namespaces changed');
  }

  /** OB3: ready when every cache has synced and every watch is healthy. */
  readiness(): HealthCheckResult {
    const alive = this.liveness();
    if (!alive.ok) return alive;
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

  private pipeline(): Observable<ReconcileOutcome> {
    const config = this.config;
    const primaryEvents$ = this.primaries.events$.pipe(toResourceEvents<P>(config.name));
    const filtered$ = config.generationAware
      ? primaryEvents$.pipe(
          generationChanged<P>({
            finalizerNeeded: (p) => config.usesFinalizer && !isMarkedForDeletion(p) && !hasFinalizer(p, config.finalizerName),
          }),
        )
      : primaryEvents$;
    const secondaryEvents$ = [...this.secondaries.values()].map((s) => s.events$);
    const registeredEvents$ = this.sourceAdded$.pipe(mergeMap((s) => s.events$));
    const labels = controllerLabels(config.name, config.descriptor);
    const customEvents$ = config.sources.map((s) => s.events$);
    const events$ = merge(filtered$, registeredEvents$, ...secondaryEvents$, ...customEvents$).pipe(takeUntil(this.stopping$));
    const active$ = combineLatest([this.started$, this.env.leading$ ?? of(true)]).pipe(map(([started, leading]) => started && leading));
    const writer = primaryWriter<P>({
      client: this.env.client.resource<P>(config.descriptor),
      cache: this.primaries,
      fieldManager: config.fieldManager,
      strategy: config.patchStrategy,
      finalizerName: config.finalizerName,
      usesFinalizer: config.usesFinalizer,
      observedGeneration: config.observedGeneration,
    });
    const run = dispatcher<P>({
      reconciler: this.reconciler,
      config,
      primaries: this.primaries,
      writer,
      secondaries: this.secondaries,
      secondaryClients: this.secondaryClients,
      eventSources: this.eventSources,
      client: this.env.client,
      logger: this.env.logger,
      events: this.events,
    });
    const metrics = this.env.metrics;
    const counted$ = metrics
      ? events$.pipe(
          tap((event) => {
            metrics.eventReceived(labels, event.source, event.action);
            const store = event.source === config.name ? this.primaryInformer.store : this.secondaries.get(event.source)?.informer.store;
            if (store) metrics.setCacheSize({ ...labels, source: event.source }, store.size);
          }),
        )
      : events$;
    return counted$.pipe(
      reconcileEach<unknown>(metrics ? measured(run, metrics, labels) : run, {
        ...config.scheduling,
        retry: config.scheduling.retry ?? false,
        // ES7: a bounded cache may have evicted a primary the informer still knows; the run fetches it.
        exists: (id) => this.primaryInformer.store.has(id) || this.primaries.get(id) !== undefined,
        active$,
        // OB4: leadership lost means runs in flight must stop acting before the lease can expire.
        abortRuns$: (this.env.leading$ ?? of(true)).pipe(pairwise(), filter(([was, is]) => was && !is)),
        probe: metrics ? (load) => metrics.setQueued(labels, load.queued) : undefined,
      }),
    );
  }

  private onOutcome(outcome: ReconcileOutcome): void {
    const config = this.config;
    // Runs are measured as they start and end (`measured`); a skipped one never ran.
    if (outcome.result === 'skipped') this.env.metrics?.recordOutcome(controllerLabels(config.name, config.descriptor), outcome);
    // OB1: the primary as the cache has it now (for a deleted one, what the id tells).
    const primary = this.primaries.get(outcome.id);
    const fields = {
      resource: primary ? resourceBindings(primary).resource : { name: outcome.id.name, namespace: outcome.id.namespace },
      result: outcome.result,
      durationMs: outcome.endedAt - outcome.startedAt,
      ...(outcome.retry ? { retry: outcome.retry } : {}),
      ...(outcome.reschedule ? { reschedule: outcome.reschedule } : {}),
    };
    if (outcome.result === 'failure') {
      // UP2: a conflict is optimistic concurrency doing its job: info, not error.
      const level = errorLogLevel(outcome.error);
      this.logger[level]({ ...fields, err: outcome.error, kind: classifyError(outcome.error) }, `run of ${resourceKey(outcome.id)} failed`);
      // One Event per distinct error (its repeats count in its series); a conflict is no news (UP2).
      if (primary && level !== 'info' && this.state === 'running') {
        const cleanup = isMarkedForDeletion(primary);
        this.events.record(primary, 'Warning', cleanup ? 'CleanupFailed' : 'ReconcileFailed', errorMessage(outcome.error), cleanup ? 'Cleanup' : 'Reconcile');
      }
    } else {
      this.logger.debug(fields, `run of ${resourceKey(outcome.id)}: ${outcome.result}`);
    }
    this.outcomes.next(outcome);
  }

  /** Failed lists and watches are retried by the informer; they are logged here so they are seen. */
  private logFailures(inf: InformerLike<KubernetesObject> | InformerLike<P>, source?: SecondarySource<KubernetesObject, P>): void {
    inf.errors$.subscribe(({ error, informer: name, namespace, phase, delayMs }) =>
      this.logger[errorLogLevel(error)]({ informer: name, namespace, phase, retryInMs: delayMs, err: error }, `${phase} failed; retrying`),
    );
    // An indexer or mapper that throws drops that object (from its index, from the triggers); logged once per version.
    inf.indexerErrors$.subscribe((error) => this.logger.error({ informer: inf.name, err: error }, 'an indexer failed; the object is left out of that index'));
    source?.errors$.subscribe(({ source: name, error, object }) =>
      this.logger.error({ source: name, err: error, object: resourceBindings(object).resource }, 'mapping a secondary to primaries failed'),
    );
  }

  private addSecondary(secondary: ResolvedSecondary<P>): SecondarySource<KubernetesObject, P> {
    const source = this.secondarySource(secondary);
    this.logFailures(source.informer, source);
    this.secondaries.set(secondary.name, source);
    if (secondary.followsPrimary) this.followingPrimary.add(secondary.name);
    this.secondaryClients.set(
      secondary.name,
      trackedClient(this.env.client.resource(source.informer.resource), source.cache, this.config.fieldManager),
    );
    return source;
  }

  private secondarySource(secondary: ResolvedSecondary<P>): SecondarySource<KubernetesObject, P> {
    const inf = this.informerPool.acquire<KubernetesObject>({
      ...this.informerTuning(),
      resource: secondary.descriptor,
      name: `${this.name}/${secondary.name}`,
      namespaces: secondary.followsPrimary ? this.primaryInformer.namespaces : (secondary.namespaces ?? 'all'),
      labelSelector: secondary.labelSelector,
      fieldSelector: secondary.fieldSelector,
      indexers: secondary.indexers,
    });
    return new SecondarySource<KubernetesObject, P>({
      informer: inf,
      name: secondary.name,
      primary: { apiVersion: this.config.descriptor.apiVersion, kind: this.config.descriptor.kind },
      toPrimaries: secondary.toPrimaries,
      toSecondaries: secondary.toSecondaries,
      primaryInformer: this.primaryInformer,
    });
  }

  private informerTuning(): Pick<SharedInformerOptions<KubernetesObject>, 'timeoutSeconds' | 'deadMarginMs' | 'listTimeoutMs' | 'backoff' | 'transform'> {
    const tuning = this.config.config.informer ?? {};
    return {
      transform: tuning.transform,
      timeoutSeconds: tuning.timeoutSeconds,
      deadMarginMs: tuning.deadMarginMs,
      listTimeoutMs: tuning.listTimeoutMs,
      backoff: tuning.backoff,
    };
  }

  private informers(): InformerLike<KubernetesObject>[] {
    return [this.primaryInformer as unknown as InformerLike<KubernetesObject>, ...[...this.secondaries.values()].map((s) => s.informer)];
  }
}
