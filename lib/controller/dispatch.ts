import type { KubernetesObject } from '@kubernetes/client-node';
import { isMarkedForDeletion, NoRetryError, type ResourceID } from '../core/index.js';
import { type KubeClient } from '../kube/index.js';
import { errorLogLevel, loggerFor, type EventRecorder, type Logger } from '../observe/index.js';
import type { RunContext, RunResult } from '../processing/index.js';
import type { CacheReader, SecondarySource } from '../sources/index.js';
import { ManagedWorkflowInvocation, type EventSourceRegistry } from '../workflow/index.js';
import type { ResolvedControllerConfig } from './config.js';
import { DeleteControl, ErrorStatusUpdateControl, UpdateControl } from './controls.js';
import { hasFinalizer, type PrimaryWriter } from './primary-writes.js';
import type { TrackedClient } from './tracked-client.js';
import type { Context, Reconciler } from './types.js';

export interface DispatchDeps<P extends KubernetesObject> {
  readonly reconciler: Reconciler<P>;
  readonly config: ResolvedControllerConfig<P>;
  /** The primary cache with read-your-writes (EP3, UP3). */
  readonly primaries: CacheReader<P>;
  readonly writer: PrimaryWriter<P>;
  readonly secondaries: ReadonlyMap<string, SecondarySource<KubernetesObject, P>>;
  /** Write clients of the secondary sources, by source name. */
  readonly secondaryClients: ReadonlyMap<string, TrackedClient<KubernetesObject>>;
  /** Where activation conditions register their dependents' event sources (WF5). */
  readonly eventSources: EventSourceRegistry;
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly events: EventRecorder;
}

/**
 * The run of one primary (FZ1–FZ4, UP1–UP4, WF4): read the latest primary from the cache, then
 * add the finalizer, or clean up, or reconcile, and write what the control asks for.
 */
export function dispatcher<P extends KubernetesObject>(deps: DispatchDeps<P>): (id: ResourceID, run: RunContext) => Promise<RunResult | void> {
  const { config } = deps;
  return async (id: ResourceID, run: RunContext): Promise<RunResult | void> => {
    // EP3: the latest version; a bounded cache (ES7) reads an evicted one from the API.
    const primary = deps.primaries.get(id) ?? (await deps.primaries.fetch(id));
    if (!primary) return undefined;
    const logger = loggerFor(deps.logger, config.name, primary);
    const ctx = createContext(deps, primary, run, logger);

    if (isMarkedForDeletion(primary)) {
      if (!config.usesFinalizer || !hasFinalizer(primary, config.finalizerName)) return undefined; // FZ4
      return cleanup(deps, primary, ctx);
    }
    if (config.usesFinalizer && !hasFinalizer(primary, config.finalizerName)) {
      // FZ2: the finalizer goes on in a call of its own; the run right after it reconciles.
      await deps.writer.addFinalizer(primary, ctx.signal);
      logger.debug({ finalizer: config.finalizerName }, 'finalizer added');
      return { rescheduleAfter: 0 };
    }
    try {
      return await reconcile(deps, primary, ctx);
    } catch (error) {
      throw await handleReconcileError(deps, primary, ctx, error);
    }
  };
}

async function reconcile<P extends KubernetesObject>(deps: DispatchDeps<P>, primary: P, ctx: Context<P>): Promise<RunResult | void> {
  const result = await ctx.workflow?.beforeReconcile();
  if (result && !deps.reconciler.handlesWorkflowErrors) result.throwIfErrors();
  const control = (await deps.reconciler.reconcile(primary, ctx)) ?? UpdateControl.noUpdate<P>();
  if (!(control instanceof UpdateControl)) {
    throw new TypeError(`${deps.config.name}: reconcile must return an UpdateControl or nothing, got ${typeof control}`);
  }
  let current = primary;
  if (control.write === 'resource' || control.write === 'resourceAndStatus') {
    current = await deps.writer.patchResource(current, requireResource(control.resource, deps.config.name), ctx.signal);
  }
  if (control.write === 'status' || control.write === 'resourceAndStatus') {
    await deps.writer.patchStatus(current, requireResource(control.resource, deps.config.name), ctx.signal);
  }
  return control.rescheduleAfterMs === undefined ? undefined : { rescheduleAfter: control.rescheduleAfterMs };
}

async function cleanup<P extends KubernetesObject>(deps: DispatchDeps<P>, primary: P, ctx: Context<P>): Promise<RunResult | void> {
  const { reconciler, config } = deps;
  const workflowResult = await ctx.workflow?.beforeCleanup(reconciler.cleanup !== undefined);
  if (workflowResult && !reconciler.handlesWorkflowErrors) workflowResult.throwIfErrors();
  let control = DeleteControl.defaultDelete();
  if (reconciler.cleanup) {
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
    await deps.writer.removeFinalizer(primary, ctx.signal);
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
  deps: DispatchDeps<P>,
  primary: P,
  ctx: Context<P>,
  error: unknown,
): Promise<unknown> {
  const handler = deps.reconciler.updateErrorStatus;
  if (!handler) return error;
  // A reconciler that threw NoRetryError itself: the handler sees what went wrong, and no retry stays no retry.
  const cause = error instanceof NoRetryError ? error.cause : error;
  let control: ErrorStatusUpdateControl<P> | void;
  try {
    control = await handler.call(deps.reconciler, primary, ctx, cause);
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
      await deps.writer.patchStatus(primary, control.resource, ctx.signal);
    } catch (patchError) {
      ctx.logger[errorLogLevel(patchError)]({ err: patchError }, 'error status patch failed');
    }
  }
  if (!control.noRetry) return error;
  return new NoRetryError(cause, { rescheduleAfter: control.rescheduleAfterMs ?? (error instanceof NoRetryError ? error.rescheduleAfter : undefined) });
}

function createContext<P extends KubernetesObject>(deps: DispatchDeps<P>, primary: P, run: RunContext, logger: Logger): Context<P> {
  const lookup = <V>(map: ReadonlyMap<string, V>, name: string): V => {
    const found = map.get(name);
    if (found === undefined) {
      const known = [...map.keys()].join(', ') || 'none';
      throw new Error(`${deps.config.name}: no secondary source named '${name}' (known: ${known})`);
    }
    return found;
  };
  const source = (name: string) => lookup(deps.secondaries, name);
  let invocation: ManagedWorkflowInvocation<P, Context<P>> | undefined;
  const ctx: Context<P> = {
    controller: deps.config.name,
    fieldManager: deps.config.fieldManager,
    eventSources: deps.eventSources,
    events: deps.events.about(primary, isMarkedForDeletion(primary) ? 'Cleanup' : 'Reconcile'),
    client: deps.client,
    logger,
    retry: run.retry,
    signal: run.signal,
    cause: run.cause,
    getSecondaryResource: <S extends KubernetesObject>(name: string) => source(name).secondaryOf(primary) as S | undefined,
    getSecondaryResources: <S extends KubernetesObject>(name: string) => source(name).secondariesOf(primary) as S[],
    secondaryClient: <S extends KubernetesObject>(name: string) => lookup(deps.secondaryClients, name) as unknown as TrackedClient<S>,
    get workflow() {
      return invocation;
    },
  };
  const workflow = deps.config.workflow;
  if (workflow) invocation = new ManagedWorkflowInvocation(workflow, primary, ctx, { eventSources: deps.eventSources });
  return ctx;
}

function requireResource<P>(resource: P | undefined, controller: string): P {
  if (resource === undefined || resource === null) throw new TypeError(`${controller}: the UpdateControl carries no resource to write`);
  return resource;
}
