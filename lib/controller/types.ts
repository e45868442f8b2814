import type { KubernetesObject } from '@kubernetes/client-node';
import type { Observable, SchedulerLike } from 'rxjs';
import type { BackoffPolicy, MaybePromise, ReconcileCause, ReconcileOutcome, ResourceEvent, ResourceID, RetryInfo } from '../core/index.js';
import type { FieldSelector, KubeClient, LabelSelector, ResourceDescriptor } from '../kube/index.js';
import type { Logger, EventRecorder } from '../observe/index.js';
import type { RateLimiter, Retry } from '../processing/index.js';
import type { BoundedStoreOptions, ObjectTransform } from '../cache/index.js';
import type { SecondarySpec } from '../sources/index.js';
import type { EventSourceRegistry, ManagedWorkflowInvocation, Workflow, WorkflowBuilder } from '../workflow/index.js';
import type { ShardingOptions, ShardStatus } from '../sharding/index.js';
import type { DeleteControl, ErrorStatusUpdateControl, UpdateControl } from './controls.js';
import type { SourceErrorOptions } from './contained-source.js';
import type { TrackedClient } from './tracked-client.js';

/**
 * What a user writes for one primary resource type. `reconcile` brings the world in line with
 * the primary; `cleanup` (optional) undoes what Kubernetes garbage collection cannot — having it
 * makes the controller use a finalizer (FZ1).
 */
export interface Reconciler<P extends KubernetesObject = KubernetesObject> {
  reconcile(primary: P, ctx: Context<P>): MaybePromise<UpdateControl<P> | void>;
  cleanup?(primary: P, ctx: Context<P>): MaybePromise<DeleteControl | void>;
  /** Called on every `reconcile` error (UP4); the returned control may patch status and stop retries. */
  updateErrorStatus?(primary: P, ctx: Context<P>, error: unknown): MaybePromise<ErrorStatusUpdateControl<P> | void>;
  /**
   * With a managed workflow: when true, dependent errors do not fail the run — `reconcile` gets
   * them in `ctx.workflow.reconcileResult` and decides (WF3).
   */
  readonly handlesWorkflowErrors?: boolean;
}

/** What a run of `reconcile` or `cleanup` can use besides the primary. */
export interface Context<P extends KubernetesObject = KubernetesObject> {
  readonly controller: string;
  readonly client: KubeClient;
  /** Carries the controller name and the primary's `resource.*` bindings (OB1). */
  readonly logger: Logger;
  readonly retry: RetryInfo;
  /**
   * Aborted when the controller stops while this run is in flight, and at the run's deadline
   * (`runTimeoutMs`, `setRunTimeout`; the reason is then a RunTimeoutError). `client`'s requests
   * abort with it.
   */
  readonly signal: AbortSignal;
  readonly cause: ReconcileCause;
  /**
   * EP14: this run's deadline, `timeoutMs` after it started, instead of the controller's
   * `runTimeoutMs` (a longer one for a cleanup that deletes much, say); <= 0: none.
   */
  setRunTimeout(timeoutMs: number): void;
  /** The one secondary of this primary from the named source (ES3); throws if there are several. */
  getSecondaryResource<S extends KubernetesObject = KubernetesObject>(source: string): S | undefined;
  getSecondaryResources<S extends KubernetesObject = KubernetesObject>(source: string): S[];
  /**
   * A client for the named source's resource type whose writes the next run reads back (UP3)
   * and whose watch events trigger no run (ES4): write secondaries through it.
   */
  secondaryClient<S extends KubernetesObject = KubernetesObject>(source: string): TrackedClient<S>;
  /**
   * The managed workflow of this run, when the controller has one (WF4): its results
   * (`reconcileResult`), and explicit invocation (`reconcileManagedWorkflow()`).
   */
  readonly workflow: ManagedWorkflowInvocation<P, Context<P>> | undefined;
  /** The field manager of every write this controller makes (the default matcher compares what it owns). */
  readonly fieldManager: string;
  /**
   * Where a standalone workflow registers the event sources of dependents behind activation
   * conditions (WF5): `wf.reconcile(primary, ctx, { eventSources: ctx.eventSources })`.
   */
  readonly eventSources: EventSourceRegistry;
  /**
   * Kubernetes Events about the primary (`events.k8s.io/v1`, what `kubectl describe` lists):
   * repeats are counted in one Event, writes are rate-limited per object, and recording never
   * fails or delays the run. A failed run records a Warning by itself.
   */
  readonly events: EventRecorder;
}

/** A controller's secondary source: the one spec `sources/` defines (`SecondarySpec`), by the name `ControllerConfig.secondaries` uses. */
export type SecondaryConfig<S extends KubernetesObject = KubernetesObject, P extends KubernetesObject = KubernetesObject> = SecondarySpec<
  S,
  P
>;

/** What `ControllerConfig.sources` takes. */
export type EventSourceLike =
  | Observable<ResourceEvent>
  | {
      readonly events$: Observable<ResourceEvent>;
      /** What logs, metrics and /readyz call the source (default `sources[i]`). */
      readonly name?: string;
      /** Called when the controller stops. */
      stop?(): void;
      /** Called when a primary is deleted: a per-resource source stops following it (perResourcePolling has it). */
      untrack?(id: ResourceID): void;
    };

/** Informer tuning shared by every source of a controller (mostly for tests). */
export interface InformerTuning {
  readonly timeoutSeconds?: number;
  readonly deadMarginMs?: number;
  readonly listTimeoutMs?: number;
  /** ES9: stream lists as watch-lists where the server serves them (default true); false: paged lists. */
  readonly watchList?: boolean;
  readonly backoff?: Partial<BackoffPolicy>;
  /** ES7: bound the primary cache. */
  readonly bounded?: BoundedStoreOptions | undefined;
  /**
   * Rewrites every object the controller's informers cache (primary and secondaries), like
   * controller-runtime's TransformFunc. Default `compactManagedFields`: managedFields keep only
   * server-side-apply entries.
   */
  readonly transform?: ObjectTransform;
}

export interface ControllerConfig<P extends KubernetesObject = KubernetesObject> {
  readonly resource: ResourceDescriptor;
  /** Unique in an operator; default: the resource's plural and group (`webpages.sample.rxkube.dev`). */
  readonly name?: string;
  /**
   * ES6, default 'all'. 'own' is the namespace the operator runs in (POD_NAMESPACE, the pod's
   * service account, or the kubeconfig context's namespace), resolved at `register()`.
   */
  readonly namespaces?: 'all' | 'own' | readonly string[];
  readonly labelSelector?: LabelSelector | undefined;
  readonly fieldSelector?: FieldSelector | undefined;
  readonly secondaries?: readonly SecondaryConfig<KubernetesObject, P>[];
  /**
   * Any other event source (ES5): an Observable of ResourceEvent triggers for primaries, or an object
   * with `events$` (pollingSource, perResourcePolling, inboundSource, timerSource). Their events
   * trigger primaries that exist (EP4); a source with `stop()` is stopped with the controller.
   */
  readonly sources?: readonly EventSourceLike[];
  /**
   * What happens when one of `sources` errors (its Observable, a polling fetch that throws, a
   * mapper in it): logged with the source's name and counted; by default subscribed again after a
   * backoff. The other sources and the runs go on either way.
   */
  readonly sourceErrors?: SourceErrorOptions;
  /** EP7; `false` disables retries. Default `GenericRetry.defaults()`. */
  readonly retry?: Retry | false;
  /** EP11; default none. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** EP10 in ms; <= 0 disables. Default 10 h. */
  readonly maxReconciliationInterval?: number;
  /** EP1; default 50. */
  readonly maxConcurrentReconciliations?: number;
  /**
   * EP14: each run's deadline in ms. At the deadline `ctx.signal` aborts (and the requests of
   * `ctx.client` with it) and the run is a failure with a RunTimeoutError, retried as any failure
   * once it has really ended: two runs of one resource never overlap. Default none.
   */
  readonly runTimeoutMs?: number;
  /** EP6; default true. */
  readonly generationAware?: boolean;
  /** FZ1; default `<plural>.<group>/finalizer`. */
  readonly finalizerName?: string;
  /** UP1: server-side apply (default) or JSON merge patch for primary writes. */
  readonly patchStrategy?: 'apply' | 'merge';
  /** Field manager of every write the controller makes; default the controller name. */
  readonly fieldManager?: string;
  /** Sets `status.observedGeneration` on every status patch (opt-in). */
  readonly observedGeneration?: boolean;
  /** WF4: dependents reconciled before `reconcile` and cleaned up before `cleanup`. */
  readonly workflow?: Workflow<P, Context<P>> | WorkflowBuilder<P, Context<P>> | undefined;
  /** ES2: default 2 min. */
  readonly cacheSyncTimeoutMs?: number;
  /** ES2: default true. */
  readonly stopOnInformerErrorDuringStartup?: boolean;
  readonly informer?: InformerTuning;
  /**
   * SH1–SH4: spread the primaries over the replicas running this controller; each replica runs
   * only its share, handed over safely when replicas come and go. Default: the Operator's
   * `sharding` (off unless given); `false` keeps this controller whole on every replica.
   */
  readonly sharding?: ShardingOptions | false;
  /** Every timer of the scheduling core goes through it (tests). */
  readonly scheduler?: SchedulerLike;
}

/** One event source of a registered controller, as it stands now. */
export interface EventSourceInfo {
  /** The source's name: what `ctx.cause.source` and `ctx.getSecondaryResources(name)` use. */
  readonly name: string;
  /**
   * `primary`: the informer of the primaries; `secondary`: an informer of secondaries
   * (`secondaries`, a dependent's `eventSource`); `custom`: an entry of `sources`.
   */
  readonly type: 'primary' | 'secondary' | 'custom';
  /** The kind an informer watches (none for custom sources). */
  readonly resource?: { readonly apiVersion: string; readonly kind: string };
  /** The namespaces an informer watches. */
  readonly namespaces?: 'all' | readonly string[];
  /** WF5: set for a source registered at run time by activation conditions: the dependents using it. */
  readonly registeredBy?: readonly string[];
}

/** A controller registered with an operator. */
export interface RegisteredController {
  readonly name: string;
  /** One outcome per run (hot): subscribe before `start()` to see every run. */
  readonly outcome$: Observable<ReconcileOutcome>;
  /** ES6: restarts the watches that follow the controller on the new set. */
  changeNamespaces(namespaces: 'all' | readonly string[]): void;
  /** The event sources the controller listens to now, those registered at run time (WF5) included. */
  listEventSources(): readonly EventSourceInfo[];
  /** SH1–SH4: this replica's shard membership (current value first); undefined when the controller is not sharded. */
  readonly shardStatus$?: Observable<ShardStatus>;
}

export type { ResourceID };
