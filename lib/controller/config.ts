import type { KubernetesObject } from '@kubernetes/client-node';
import { isObservable, type Observable } from 'rxjs';
import {
  ConfigurationError,
  describeValue,
  isRecord,
  requireFunction,
  requireKnownKeys,
  requireNamespaceName,
  requirePositiveDuration,
  requirePositiveInteger,
  type ResourceEvent,
  type ResourceID,
} from '../core/index.js';
import { resolveDescriptor, type FieldSelector, type LabelSelector, type ResolvedDescriptor } from '../kube/index.js';
import type { BoundedStoreOptions } from '../cache/index.js';
import type { SecondarySpec, SecondaryWrite, SourceError } from '../sources/index.js';
import { resolveReconcileOptions, type ResolvedReconcileOptions } from '../processing/index.js';
import type { Workflow } from '../workflow/index.js';
import { resolveSourceErrorOptions, type ResolvedSourceErrorOptions } from './contained-source.js';
import type { Context, ControllerConfig, EventSourceLike, InformerTuning, Reconciler, SecondaryConfig } from './types.js';

export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 2 * 60 * 1000;

export interface ResolvedSecondary<P extends KubernetesObject> extends SecondaryConfig<KubernetesObject, P> {
  readonly name: string;
  readonly descriptor: ResolvedDescriptor;
  /** Follows the primary's namespaces (and `changeNamespaces`). */
  readonly followsPrimary: boolean;
}

/** What a run of the reconciler needs to know (`reconcilerRun`), every default filled in. */
export interface ResolvedRunConfig<P extends KubernetesObject> {
  /** The controller's name: logs, `ctx.controller`, the default field manager. */
  readonly name: string;
  /** The primary resource type. */
  readonly descriptor: ResolvedDescriptor;
  readonly finalizerName: string;
  /** FZ1: the reconciler has `cleanup` or the workflow has a deletable dependent. */
  readonly usesFinalizer: boolean;
  readonly patchStrategy: 'apply' | 'merge';
  readonly fieldManager: string;
  readonly observedGeneration: boolean;
  readonly workflow: Workflow<P, Context<P>> | undefined;
}

/** The options of one run of the reconciler, as `ControllerConfig` names them. */
export type RunConfig<P extends KubernetesObject> = Pick<
  ControllerConfig<P>,
  'resource' | 'name' | 'finalizerName' | 'patchStrategy' | 'fieldManager' | 'observedGeneration' | 'workflow'
>;

/** A controller configuration with every default filled in; built once by `resolveControllerConfig`. */
export interface ResolvedControllerConfig<P extends KubernetesObject> extends ResolvedRunConfig<P> {
  /** Of the primary informer. */
  readonly namespaces: 'all' | readonly string[];
  readonly labelSelector: LabelSelector | undefined;
  readonly fieldSelector: FieldSelector | undefined;
  /** Tuning of every informer of the controller (`ControllerConfig.informer`, default none). */
  readonly informer: InformerTuning;
  readonly secondaries: readonly ResolvedSecondary<P>[];
  /** `config.sources` as Observables, with the `stop()` of those that have one. */
  readonly sources: readonly ResolvedSource[];
  readonly sourceErrors: ResolvedSourceErrorOptions;
  readonly generationAware: boolean;
  readonly cacheSyncTimeoutMs: number;
  readonly stopOnInformerErrorDuringStartup: boolean;
  readonly scheduling: ResolvedReconcileOptions;
}

/** An entry of `ControllerConfig.sources` as Observables. */
export interface ResolvedSource {
  /** The source's own `name`, else `sources[i]`: what logs, metrics and /readyz call it. */
  readonly name: string;
  readonly events$: Observable<ResourceEvent>;
  readonly errors$?: Observable<SourceError>;
  readonly stop?: () => void;
  /** A per-resource source's (perResourcePolling): called when a primary is deleted, so that it stops following it. */
  readonly untrack?: (id: ResourceID) => void;
}

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** The default finalizer of FZ1: `<plural>.<group>/finalizer` (`<plural>/finalizer` for the core group). */
export function defaultFinalizerName(descriptor: ResolvedDescriptor): string {
  return descriptor.group === '' ? `${descriptor.plural}/finalizer` : `${descriptor.plural}.${descriptor.group}/finalizer`;
}

/** A finalizer's name is a qualified name with a prefix: `example.com/finalizer`. */
export function requireFinalizerName(option: string, value: unknown): string {
  if (typeof value !== 'string' || !QUALIFIED_NAME.test(value) || !value.includes('/')) {
    throw new ConfigurationError(option, `must be a qualified name like 'example.com/finalizer', got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Validates a reconciler and its configuration at `register()` time: every error is a
 * ConfigurationError naming the option (`resource.plural`, `namespaces[1]`, ...).
 */
const CONTROLLER_OPTIONS = {
  resource: true,
  name: true,
  namespaces: true,
  labelSelector: true,
  fieldSelector: true,
  secondaries: true,
  sources: true,
  sourceErrors: true,
  retry: true,
  rateLimiter: true,
  maxReconciliationInterval: true,
  maxConcurrentReconciliations: true,
  runTimeoutMs: true,
  generationAware: true,
  finalizerName: true,
  patchStrategy: true,
  fieldManager: true,
  observedGeneration: true,
  workflow: true,
  cacheSyncTimeoutMs: true,
  stopOnInformerErrorDuringStartup: true,
  informer: true,
  sharding: true,
  scheduler: true,
} as const satisfies Record<keyof ControllerConfig, true>;

const INFORMER_TUNING = {
  timeoutSeconds: true,
  deadMarginMs: true,
  listTimeoutMs: true,
  watchList: true,
  backoff: true,
  bounded: true,
  transform: true,
} as const satisfies Record<keyof InformerTuning, true>;

export function resolveControllerConfig<P extends KubernetesObject>(
  reconciler: Reconciler<P>,
  config: ControllerConfig<P>,
): ResolvedControllerConfig<P> {
  requireKnownKeys('', config, CONTROLLER_OPTIONS);
  requireKnownKeys('informer', config.informer, INFORMER_TUNING);
  checkBounded(config.informer?.bounded);
  const run = resolveRunConfig(reconciler, config);
  const { descriptor, workflow } = run;
  const namespaces = resolveNamespaces('namespaces', config.namespaces);
  if (!descriptor.namespaced && namespaces !== 'all') {
    throw new ConfigurationError('namespaces', `${descriptor.kind} is cluster-scoped; namespaces must be 'all'`);
  }
  const cacheSyncTimeoutMs = config.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
  if (typeof cacheSyncTimeoutMs !== 'number' || !(cacheSyncTimeoutMs > 0)) {
    throw new ConfigurationError(
      'cacheSyncTimeoutMs',
      `must be a positive number of milliseconds, got ${describeValue(cacheSyncTimeoutMs)}`,
    );
  }
  const scheduling = resolveReconcileOptions({
    scheduler: config.scheduler,
    maxConcurrentReconciliations: config.maxConcurrentReconciliations,
    retry: config.retry,
    rateLimiter: config.rateLimiter,
    maxReconciliationInterval: config.maxReconciliationInterval,
    runTimeoutMs: config.runTimeoutMs,
  });
  const secondaries = (config.secondaries ?? []).map((s, i) => resolveSecondary<P>(s, i));
  const names = new Set<string>();
  for (const s of secondaries) {
    if (names.has(s.name)) {
      throw new ConfigurationError('secondaries', `two sources are named '${s.name}'; give each a distinct name`);
    }
    names.add(s.name);
  }
  // Dependents' event sources join the controller's, shared by name; those behind an activation
  // condition are registered at run time instead (WF5).
  for (const node of workflow?.nodes ?? []) {
    const source = node.dependent.eventSource;
    if (source === undefined || node.conditions.activationCondition !== undefined) continue;
    const resolved = resolveSecondary<P>(source, `workflow.${node.name}.eventSource`);
    if (names.has(resolved.name)) continue;
    names.add(resolved.name);
    secondaries.push(resolved);
  }
  return {
    ...run,
    namespaces,
    labelSelector: config.labelSelector,
    fieldSelector: config.fieldSelector,
    informer: config.informer ?? {},
    secondaries,
    sources: (config.sources ?? []).map(resolveSource),
    sourceErrors: resolveSourceErrorOptions(config.sourceErrors),
    generationAware: config.generationAware ?? true,
    cacheSyncTimeoutMs,
    stopOnInformerErrorDuringStartup: config.stopOnInformerErrorDuringStartup ?? true,
    scheduling,
  };
}

/** Validates a reconciler and what its runs need (`reconcilerRun`, and through it `register()`). */
export function resolveRunConfig<P extends KubernetesObject>(reconciler: Reconciler<P>, config: RunConfig<P>): ResolvedRunConfig<P> {
  if (reconciler === null || typeof reconciler !== 'object') {
    throw new ConfigurationError('reconciler', `must be an object with a reconcile(primary, ctx) method, got ${describeValue(reconciler)}`);
  }
  requireFunction('reconciler.reconcile', reconciler.reconcile);
  if (reconciler.cleanup !== undefined) requireFunction('reconciler.cleanup', reconciler.cleanup);
  if (reconciler.updateErrorStatus !== undefined) requireFunction('reconciler.updateErrorStatus', reconciler.updateErrorStatus);
  if (config === null || typeof config !== 'object') {
    throw new ConfigurationError('config', `must be an object with at least { resource }, got ${describeValue(config)}`);
  }
  const descriptor = resolveDescriptor(config.resource);
  const name = config.name ?? (descriptor.group === '' ? descriptor.plural : `${descriptor.plural}.${descriptor.group}`);
  if (typeof name !== 'string' || name.length === 0) throw new ConfigurationError('name', 'must be a non-empty string');
  const finalizerName = requireFinalizerName('finalizerName', config.finalizerName ?? defaultFinalizerName(descriptor));
  const patchStrategy = config.patchStrategy ?? 'apply';
  if (patchStrategy !== 'apply' && patchStrategy !== 'merge') {
    throw new ConfigurationError('patchStrategy', `must be 'apply' or 'merge', got ${describeValue(patchStrategy)}`);
  }
  const fieldManager = config.fieldManager ?? name;
  if (typeof fieldManager !== 'string' || fieldManager.length === 0 || fieldManager.length > 128) {
    throw new ConfigurationError('fieldManager', `must be a string of 1 to 128 characters, got ${describeValue(fieldManager)}`);
  }
  const workflow = resolveWorkflow(config.workflow);
  return {
    name,
    descriptor,
    finalizerName,
    usesFinalizer: reconciler.cleanup !== undefined || (workflow?.needsFinalizer ?? false),
    patchStrategy,
    fieldManager,
    observedGeneration: config.observedGeneration ?? false,
    workflow,
  };
}

/** ES7: the bounded primary cache's options, checked here so that a bad one names `informer.bounded.*`. */
function checkBounded(bounded: unknown): void {
  if (bounded === undefined) return;
  if (!isRecord(bounded))
    throw new ConfigurationError('informer.bounded', `must be an object { maxEntries, timeToIdleMs? }, got ${describeValue(bounded)}`);
  requireKnownKeys('informer.bounded', bounded, BOUNDED_OPTIONS);
  requirePositiveInteger('informer.bounded.maxEntries', bounded['maxEntries']);
  if (bounded['timeToIdleMs'] !== undefined) requirePositiveDuration('informer.bounded.timeToIdleMs', bounded['timeToIdleMs']);
}

const BOUNDED_OPTIONS = { maxEntries: true, timeToIdleMs: true } as const satisfies Record<keyof BoundedStoreOptions, true>;

export function resolveNamespaces(option: string, namespaces: unknown): 'all' | readonly string[] {
  if (namespaces === undefined || namespaces === 'all') return 'all';
  if (!Array.isArray(namespaces) || namespaces.length === 0) {
    throw new ConfigurationError(option, `must be 'all' or a non-empty array of namespace names, got ${describeValue(namespaces)}`);
  }
  namespaces.forEach((ns: unknown, i) => requireNamespaceName(`${option}[${i}]`, ns));
  return Object.freeze([...new Set(namespaces as string[])]);
}

function resolveSource(source: EventSourceLike, i: number): ResolvedSource {
  if (isObservable(source)) return { name: `sources[${i}]`, events$: source };
  if (source !== null && typeof source === 'object' && isObservable(source.events$)) {
    const errors$ = (source as { errors$?: unknown }).errors$;
    const name = (source as { name?: unknown }).name;
    return {
      name: typeof name === 'string' && name !== '' ? name : `sources[${i}]`,
      events$: source.events$,
      ...(isObservable(errors$) ? { errors$: errors$ as Observable<SourceError> } : {}),
      ...(typeof source.stop === 'function' ? { stop: () => source.stop?.() } : {}),
      ...(typeof source.untrack === 'function' ? { untrack: (id: ResourceID) => source.untrack?.(id) } : {}),
    };
  }
  throw new ConfigurationError(
    `sources[${i}]`,
    `must be an Observable of ResourceEvent triggers or have an events$ Observable, got ${describeValue(source)}`,
  );
}

const SECONDARY_WRITES: readonly SecondaryWrite[] = ['apply', 'create', 'update', 'patch', 'delete', 'status'];

/** Validates a secondary source (a JavaScript caller's may be anything, so it is checked at run time too). */
export function resolveSecondary<P extends KubernetesObject>(
  s: SecondarySpec<KubernetesObject, P>,
  at: number | string,
): ResolvedSecondary<P> {
  const option = typeof at === 'number' ? `secondaries[${at}]` : at;
  if (s === null || typeof s !== 'object') throw new ConfigurationError(option, 'must be an object with at least { resource }');
  const descriptor = withOptionPrefix(() => resolveDescriptor(s.resource), option);
  if (s.toPrimaries !== undefined) requireFunction(`${option}.toPrimaries`, s.toPrimaries);
  if (s.toSecondaries !== undefined) requireFunction(`${option}.toSecondaries`, s.toSecondaries);
  const namespaces = s.namespaces === undefined ? undefined : resolveNamespaces(`${option}.namespaces`, s.namespaces);
  if (s.writes !== undefined) {
    if (!Array.isArray(s.writes))
      throw new ConfigurationError(
        `${option}.writes`,
        `must be an array of ${SECONDARY_WRITES.map((w) => `'${w}'`).join(', ')}, got ${describeValue(s.writes)}`,
      );
    s.writes.forEach((w: unknown, i) => {
      if (!SECONDARY_WRITES.includes(w as SecondaryWrite)) {
        throw new ConfigurationError(
          `${option}.writes[${i}]`,
          `must be one of ${SECONDARY_WRITES.map((v) => `'${v}'`).join(', ')}, got ${describeValue(w)}`,
        );
      }
    });
  }
  if (!descriptor.namespaced && namespaces !== undefined && namespaces !== 'all') {
    throw new ConfigurationError(`${option}.namespaces`, `${descriptor.kind} is cluster-scoped; namespaces must be 'all'`);
  }
  return {
    ...s,
    name: s.name ?? descriptor.plural,
    descriptor,
    ...(namespaces === undefined ? {} : { namespaces }),
    followsPrimary: namespaces === undefined && descriptor.namespaced,
  };
}

function resolveWorkflow<P extends KubernetesObject>(workflow: ControllerConfig<P>['workflow']): Workflow<P, Context<P>> | undefined {
  if (workflow === undefined) return undefined;
  if (workflow === null || typeof workflow !== 'object') {
    throw new ConfigurationError('workflow', `must be a workflow() builder or a built workflow, got ${describeValue(workflow)}`);
  }
  if ('build' in workflow && typeof workflow.build === 'function') return withOptionPrefix(() => workflow.build(), 'workflow');
  return workflow as Workflow<P, Context<P>>;
}

/** Re-throws a nested validation error with its option path under `prefix`. */
function withOptionPrefix<T>(fn: () => T, prefix?: string): T {
  try {
    return fn();
  } catch (err) {
    if (prefix === undefined) throw err;
    if (err instanceof ConfigurationError)
      throw new ConfigurationError(`${prefix}.${err.option}`, err.message.slice(err.option.length + 2));
    throw new ConfigurationError(prefix, err instanceof Error ? err.message : String(err));
  }
}
