/** One run of a reconciler for one primary: its Context, cleanup or reconcile, the error status and the written outcome. */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ConfigurationError,
  describeValue,
  isMarkedForDeletion,
  NoRetryError,
  requireKnownKeys,
  resourceIdOf,
  resourceKey,
  type ResourceID,
} from '../core/index.js';
import { abortingWith, wrapRequests, type KubeClient } from '../kube/index.js';
import { createLogger, errorLogLevel, loggerFor, type EventRecorder, type Logger, type TraceIds, type Tracing } from '../observe/index.js';
import type { RunContext, RunFn, RunResult } from '../processing/index.js';
import type { SecondarySource } from '../sources/index.js';
import { ManagedWorkflowInvocation, type EventSourceRegistry } from '../workflow/index.js';
import { defaultFinalizerName, resolveRunConfig, type ResolvedRunConfig, type RunConfig } from './config.js';
import { DeleteControl, ErrorStatusUpdateControl, UpdateControl } from './controls.js';
import { primaryWriter, type PrimaryWriter } from './primary-writes.js';
import { Primaries } from './primaries.js';
import { requireLease, type LeaseCheck } from './lease-gate.js';
import { trackedClient, type TrackedClient } from './tracked-client.js';
import type { Context, ControllerConfig, Reconciler } from './types.js';

/** The secondary sources a run reads by name (`ctx.getSecondaryResource(s)`, `ctx.secondaryClient`). */
export interface SecondaryLookup<P extends KubernetesObject = KubernetesObject> {
  get(name: string): SecondarySource<KubernetesObject, P> | undefined;
  keys(): Iterable<string>;
}

/**
 * `reconcilerRun`'s options: the run-side part of `ControllerConfig`, and what a run reads and
 * writes through (a registered controller passes its own).
 */
export interface ReconcilerRunOptions<P extends KubernetesObject = KubernetesObject> extends Pick<
  ControllerConfig<P>,
  'resource' | 'name' | 'patchStrategy' | 'fieldManager' | 'observedGeneration' | 'workflow'
> {
  readonly client: KubeClient;
  /**
   * The controller's primaries (`primaries(informer, { finalizerName })`): a run reads the latest
   * primary there (EP3), records the framework's writes there (UP3, ES4) and keeps their
   * finalizer (FZ1) — the same object `controllerEvents` and `reconcileEach` take.
   */
  readonly primaries: Primaries<P>;
  /** Secondary sources by name, or a list of them (their names must differ). Default none. */
  readonly secondaries?: SecondaryLookup<P> | readonly SecondarySource<KubernetesObject, P>[];
  /** Where activation conditions register their dependents' event sources (WF5). Default: registering fails. */
  readonly eventSources?: EventSourceRegistry;
  /** Default: an info-level logger named rxkube. Every run's lines carry the primary's bindings (OB1). */
  readonly logger?: Logger;
  /** Where `ctx.events` records Events about the primary (a registered controller's recorder). Default: Events are dropped. */
  readonly events?: { about(regarding: KubernetesObject, action: string): EventRecorder };
  /**
   * SH1, OB4: asked right before the reconciler is called; false fails the run with a
   * LeaseLostError instead (pass a client gated on it too: `leaseGatedClient`). Default: always held.
   */
  readonly holdsLease?: () => boolean;
}

const RUN_OPTIONS = {
  resource: true,
  name: true,
  patchStrategy: true,
  fieldManager: true,
  observedGeneration: true,
  workflow: true,
  client: true,
  primaries: true,
  secondaries: true,
  eventSources: true,
  logger: true,
  events: true,
  holdsLease: true,
} as const satisfies Record<keyof ReconcilerRunOptions, true>;

/** What a run works with, besides its configuration; a registered controller's runs may be traced. */
type RunDependencies<P extends KubernetesObject> = Omit<ReconcilerRunOptions<P>, keyof RunConfig<P>> & {
  readonly tracing?: Tracing | undefined;
};

/**
 * The run side of a controller as a `RunFn` for `reconcileEach`: for one ResourceID, read the
 * latest primary, then add the finalizer (FZ2), or clean up (FZ3, FZ4, WF4), or run the managed
 * workflow and `reconcile` (WF4), write what the control asks for (UP1, UP3) and let
 * `updateErrorStatus` see an error (UP4). The options are validated here (ConfigurationError).
 */
export function reconcilerRun<P extends KubernetesObject>(reconciler: Reconciler<P>, options: ReconcilerRunOptions<P>): RunFn {
  requireKnownKeys('', options, RUN_OPTIONS);
  if (options.primaries !== undefined && !(options.primaries instanceof Primaries)) {
    throw new ConfigurationError(
      'primaries',
      `must be the controller's primaries (primaries(informer, { finalizerName })), got ${describeValue(options.primaries)}`,
    );
  }
  const config = resolveRunConfig(reconciler, { ...options, finalizerName: options.primaries?.finalizerName });
  if (options.client === undefined || options.primaries === undefined) {
    throw new ConfigurationError(options.client === undefined ? 'client' : 'primaries', 'is required');
  }
  requireSameFinalizer(config, options.primaries);
  return runOf(reconciler, config, options);
}

/** FZ1: the primaries keep a finalizer exactly when the reconciler needs one, so the event side and the run agree on it. */
function requireSameFinalizer<P extends KubernetesObject>(config: ResolvedRunConfig<P>, primaries: Primaries<P>): void {
  if (config.usesFinalizer && primaries.finalizerName === undefined) {
    throw new ConfigurationError(
      'primaries',
      `the reconciler has cleanup or a dependent its workflow deletes, so it keeps a finalizer: give its primaries one (finalizerName: '${defaultFinalizerName(config.descriptor)}' is the usual name)`,
    );
  }
  if (!config.usesFinalizer && primaries.finalizerName !== undefined) {
    throw new ConfigurationError(
      'primaries.finalizerName',
      'the reconciler has no cleanup and its workflow deletes no dependent, so it keeps no finalizer; leave finalizerName out',
    );
  }
}

/** `reconcilerRun` with a configuration resolved already (the Controller's). */
export function runOf<P extends KubernetesObject>(
  reconciler: Reconciler<P>,
  config: ResolvedRunConfig<P>,
  deps: RunDependencies<P>,
): (id: ResourceID, run: RunContext) => Promise<RunResult | void> {
  const run: Run<P> = {
    reconciler,
    config,
    primaries: deps.primaries,
    client: deps.client,
    secondaries: lookupOf(deps.secondaries),
    secondaryClients: new WeakMap(),
    eventSources: deps.eventSources ?? noEventSources(config.name),
    logger: deps.logger ?? createLogger({ name: 'rxkube' }),
    events: deps.events ?? { about: () => NO_EVENTS },
    holdsLease: deps.holdsLease ?? (() => true),
    tracing: deps.tracing,
    writer: primaryWriter<P>({
      client: deps.client.resource<P>(config.descriptor),
      primaries: deps.primaries,
      fieldManager: config.fieldManager,
      strategy: config.patchStrategy,
      observedGeneration: config.observedGeneration,
    }),
  };
  return async (id, runContext) => {
    // EP3: the latest version; a bounded cache (ES7) reads an evicted one from the API.
    const primary = run.primaries.get(id) ?? (await run.primaries.fetch(id));
    if (!primary) return undefined;
    const ctx = createContext(run, primary, runContext);
    if (isMarkedForDeletion(primary)) {
      if (!run.primaries.hasFinalizer(primary)) return undefined; // FZ4
      return cleanup(run, primary, ctx);
    }
    if (run.primaries.needsFinalizer(primary)) {
      // FZ2: the finalizer goes on in a call of its own; the run right after it reconciles.
      await written(run, 'add finalizer', () => run.writer.addFinalizer(primary, ctx.signal));
      ctx.logger.debug({ finalizer: config.finalizerName }, 'finalizer added');
      return { rescheduleAfter: 0 };
    }
    try {
      return await reconcile(run, primary, ctx);
    } catch (error) {
      throw await handleReconcileError(run, primary, ctx, error);
    }
  };
}

/** Everything one controller's runs share. */
interface Run<P extends KubernetesObject> {
  readonly reconciler: Reconciler<P>;
  readonly config: ResolvedRunConfig<P>;
  readonly primaries: Primaries<P>;
  readonly client: KubeClient;
  readonly secondaries: SecondaryLookup<P>;
  readonly secondaryClients: WeakMap<SecondarySource<KubernetesObject, P>, TrackedClient<KubernetesObject>>;
  readonly eventSources: EventSourceRegistry;
  readonly logger: Logger;
  readonly events: NonNullable<ReconcilerRunOptions<P>['events']>;
  readonly writer: PrimaryWriter<P>;
  readonly holdsLease: LeaseCheck;
  readonly tracing: Tracing | undefined;
}

/** A write of the framework's own, as a span of the run when it is traced. */
function written<P extends KubernetesObject, T>(run: Run<P>, what: string, write: () => Promise<T>): Promise<T> {
  // Without tracing, no attributes are built for a span that is not made.
  const span = run.tracing?.span;
  return span ? span(what, { 'rxkube.controller': run.config.name }, write) : write();
}

async function reconcile<P extends KubernetesObject>(run: Run<P>, primary: P, ctx: Context<P>): Promise<RunResult | void> {
  const result = await ctx.workflow?.beforeReconcile();
  if (result && !run.reconciler.handlesWorkflowErrors) result.throwIfErrors();
  requireLease(run.holdsLease, () => `reconcile of ${resourceKey(resourceIdOf(primary))}`);
  const control = (await run.reconciler.reconcile(primary, ctx)) ?? UpdateControl.noUpdate<P>();
  if (!(control instanceof UpdateControl)) {
    throw new TypeError(`${run.config.name}: reconcile must return an UpdateControl or nothing, got ${typeof control}`);
  }
  let current = primary;
  if (control.write === 'resource' || control.write === 'resourceAndStatus') {
    const resource = requireResource(control.resource, run.config.name);
    current = await written(run, 'write resource', () => run.writer.patchResource(current, resource, ctx.signal));
  }
  if (control.write === 'status' || control.write === 'resourceAndStatus') {
    const resource = requireResource(control.resource, run.config.name);
    await written(run, 'write status', () => run.writer.patchStatus(current, resource, ctx.signal));
  }
  return control.rescheduleAfterMs === undefined ? undefined : { rescheduleAfter: control.rescheduleAfterMs };
}

async function cleanup<P extends KubernetesObject>(run: Run<P>, primary: P, ctx: Context<P>): Promise<RunResult | void> {
  const { reconciler, config } = run;
  // FZ3: a cache that lags may still show an object deleted and re-created under its name since;
  // cleaning up for it would act on its successor (and strip its finalizer). The API says which is live.
  if (!(await run.writer.isLive(primary, ctx.signal))) {
    ctx.logger.info({ uid: primary.metadata?.uid }, 'cleanup skipped: the object is gone or was re-created under its name');
    return undefined;
  }
  const workflowResult = await ctx.workflow?.beforeCleanup(reconciler.cleanup !== undefined);
  if (workflowResult && !reconciler.handlesWorkflowErrors) workflowResult.throwIfErrors();
  let control = DeleteControl.defaultDelete();
  if (reconciler.cleanup) {
    requireLease(run.holdsLease, () => `cleanup of ${resourceKey(resourceIdOf(primary))}`);
    const returned = await reconciler.cleanup(primary, ctx);
    if (returned !== undefined && !(returned instanceof DeleteControl)) {
      throw new TypeError(`${config.name}: cleanup must return a DeleteControl or nothing`);
    }
    control = returned ?? control;
  }
  // WF4: dependents whose delete post-condition is not met yet keep the primary alive.
  const dependentsGone = workflowResult?.allDeleted() ?? true;
  if (control.removeFinalizer && dependentsGone) {
    ctx.events.normal('CleanedUp', 'cleanup complete');
    await written(run, 'remove finalizer', () => run.writer.removeFinalizer(primary, ctx.signal));
    ctx.logger.debug({ finalizer: config.finalizerName }, 'finalizer removed');
    ctx.events.normal('FinalizerRemoved', `removed finalizer ${config.finalizerName}`, { action: 'RemoveFinalizer' });
    return undefined;
  }
  return control.rescheduleAfterMs === undefined ? undefined : { rescheduleAfter: control.rescheduleAfterMs };
}

/**
 * UP4: `updateErrorStatus` sees every reconcile error and may patch status and stop retries.
 * Its own failures are logged, never thrown: the original error is what the run failed with.
 */
async function handleReconcileError<P extends KubernetesObject>(
  run: Run<P>,
  primary: P,
  ctx: Context<P>,
  error: unknown,
): Promise<unknown> {
  if (!run.reconciler.updateErrorStatus) return error;
  // A reconciler that threw NoRetryError itself: the handler sees what went wrong, and no retry stays no retry.
  const cause = error instanceof NoRetryError ? error.cause : error;
  let control: ErrorStatusUpdateControl<P> | void;
  try {
    control = await run.reconciler.updateErrorStatus(primary, ctx, cause);
  } catch (handlerError) {
    ctx.logger.error({ err: handlerError }, 'updateErrorStatus threw; the reconcile error is retried as usual');
    return error;
  }
  if (control === undefined) return error;
  if (!(control instanceof ErrorStatusUpdateControl)) {
    ctx.logger.error('updateErrorStatus must return an ErrorStatusUpdateControl or nothing; ignored');
    return error;
  }
  if (control.resource !== undefined) {
    try {
      const resource = control.resource;
      await written(run, 'write error status', () => run.writer.patchStatus(primary, resource, ctx.signal));
    } catch (patchError) {
      ctx.logger[errorLogLevel(patchError)]({ err: patchError }, 'error status patch failed');
    }
  }
  if (!control.noRetry) return error;
  return new NoRetryError(cause, {
    rescheduleAfter: control.rescheduleAfterMs ?? (error instanceof NoRetryError ? error.rescheduleAfter : undefined),
  });
}

function createContext<P extends KubernetesObject>(run: Run<P>, primary: P, runContext: RunContext): Context<P> {
  const ctx = new RunContextOf(run, primary, runContext);
  const workflow = run.config.workflow;
  if (workflow)
    ctx.workflow = new ManagedWorkflowInvocation(workflow, primary, ctx, { eventSources: run.eventSources, span: run.tracing?.span });
  return ctx;
}

/**
 * The Context of one run. A class, so that its lazy parts (Events, client, logger, signal) are
 * getters of the prototype rather than new closures and an object shape of their own per run;
 * the methods stay own arrow functions, callable without their object as before.
 */
class RunContextOf<P extends KubernetesObject> implements Context<P> {
  readonly controller: string;
  readonly fieldManager: string;
  readonly eventSources: EventSourceRegistry;
  readonly retry: RunContext['retry'];
  readonly cause: RunContext['cause'];
  workflow: ManagedWorkflowInvocation<P, Context<P>> | undefined = undefined;
  // Made when first read: most runs log nothing and record no Event, and a signal costs an AbortController.
  #recorder: EventRecorder | undefined = undefined;
  #logger: Logger | undefined = undefined;
  #client: KubeClient | undefined = undefined;
  // The run's span, for its log lines: read now, while the run's span is the active one.
  readonly #traceIds: TraceIds | undefined;
  // Private to the class (not properties a log line or Object.keys would show).
  readonly #run: Run<P>;
  readonly #primary: P;
  readonly #runContext: RunContext;

  constructor(run: Run<P>, primary: P, runContext: RunContext) {
    this.#run = run;
    this.#primary = primary;
    this.#runContext = runContext;
    this.controller = run.config.name;
    this.fieldManager = run.config.fieldManager;
    this.eventSources = run.eventSources;
    this.retry = runContext.retry;
    this.cause = runContext.cause;
    this.#traceIds = run.tracing?.activeIds();
  }

  get events(): EventRecorder {
    return (this.#recorder ??= this.#run.events.about(this.#primary, isMarkedForDeletion(this.#primary) ? 'Cleanup' : 'Reconcile'));
  }

  // EP14: the run's requests abort with its signal (its deadline, the controller stopping).
  get client(): KubeClient {
    const runContext = this.#runContext;
    return (this.#client ??= wrapRequests(this.#run.client, (request) => abortingWith(request, () => runContext.signal)));
  }

  get logger(): Logger {
    if (this.#logger === undefined) {
      this.#logger = loggerFor(this.#run.logger, this.#run.config.name, this.#primary);
      // Joined to the run's trace when it is traced.
      if (this.#traceIds) this.#logger = this.#logger.child(this.#traceIds);
    }
    return this.#logger;
  }

  get signal(): AbortSignal {
    return this.#runContext.signal;
  }

  readonly setRunTimeout = (timeoutMs: number): void => this.#runContext.setRunTimeout(timeoutMs);

  readonly getSecondaryResource = <S extends KubernetesObject>(name: string): S | undefined =>
    sourceNamed(this.#run, name).getSecondaryResource(this.#primary) as S | undefined;

  readonly getSecondaryResources = <S extends KubernetesObject>(name: string): S[] =>
    sourceNamed(this.#run, name).getSecondaryResources(this.#primary) as S[];

  readonly secondaryClient = <S extends KubernetesObject>(name: string): TrackedClient<S> =>
    secondaryClientOf(this.#run, sourceNamed(this.#run, name)) as unknown as TrackedClient<S>;
}

function sourceNamed<P extends KubernetesObject>(run: Run<P>, name: string): SecondarySource<KubernetesObject, P> {
  const found = run.secondaries.get(name);
  if (found === undefined) {
    const known = [...run.secondaries.keys()].join(', ') || 'none';
    throw new Error(`${run.config.name}: no secondary source named '${name}' (known: ${known})`);
  }
  return found;
}

function secondaryClientOf<P extends KubernetesObject>(
  run: Run<P>,
  found: SecondarySource<KubernetesObject, P>,
): TrackedClient<KubernetesObject> {
  let client = run.secondaryClients.get(found);
  if (client === undefined) {
    client = trackedClient(run.client.resource(found.informer.resource), found.cache, run.config.fieldManager);
    run.secondaryClients.set(found, client);
  }
  return client;
}

function lookupOf<P extends KubernetesObject>(secondaries: RunDependencies<P>['secondaries']): SecondaryLookup<P> {
  if (secondaries === undefined) return new Map();
  if (!Array.isArray(secondaries)) return secondaries as SecondaryLookup<P>;
  const byName = new Map<string, SecondarySource<KubernetesObject, P>>();
  secondaries.forEach((source: SecondarySource<KubernetesObject, P>, i) => {
    if (byName.has(source.name))
      throw new ConfigurationError(`secondaries[${i}]`, `two sources are named '${source.name}'; give each a distinct name`);
    byName.set(source.name, source);
  });
  return byName;
}

const NO_EVENTS: EventRecorder = { normal: () => undefined, warning: () => undefined };

/** Without a registry, a dependent behind an activation condition cannot get its event source. */
function noEventSources(controller: string): EventSourceRegistry {
  return {
    register: (dependent) => {
      throw new Error(`${controller}: dependent '${dependent}' registers an event source, but this run was given no eventSources registry`);
    },
    unregister: () => undefined,
  };
}

function requireResource<P>(resource: P | undefined, controller: string): P {
  if (resource === undefined || resource === null) throw new TypeError(`${controller}: the UpdateControl carries no resource to write`);
  return resource;
}
