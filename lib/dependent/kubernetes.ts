/**
 * Kubernetes dependents (DR2, DR3): a secondary Kubernetes object computed from the primary,
 * created and updated with server-side apply under the controller's field manager, compared with
 * the default matcher before any write, tied to its primary, and watched through a secondary
 * event source that several dependents of one kind share by name.
 *
 * Tying a secondary to its primary: every object a dependent writes carries the annotations
 * `rxkube.dev/primary-name` / `rxkube.dev/primary-namespace`, and the event source maps objects
 * back with them (`Mappers.fromDefaultAnnotations()`), so every dependent of one kind can share
 * one source whatever its garbage collection. A garbage-collected dependent also gets an owner
 * reference to the primary, so the Kubernetes garbage collector deletes it with the primary.
 */
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import {
  ConfigurationError,
  describeValue,
  isMarkedForDeletion,
  isRecord,
  requireFunction,
  resourceIdOf,
  resourceKey,
  type ResourceID,
} from '../core/index.js';
import {
  classifyError,
  resolveDescriptor,
  type ApplyOptions,
  type DeleteOptions,
  type KubeClient,
  type LabelSelector,
  type ObjectRef,
  type ResolvedDescriptor,
  type ResourceDescriptor,
} from '../kube/index.js';
import {
  Mappers,
  primaryAnnotations,
  type PrimaryToSecondaryMapper,
  type SecondarySpec,
  type SecondaryToPrimaryMapper,
} from '../sources/index.js';
import { kubernetesMatches } from './matchers.js';
import type { DependentResource } from './types.js';

/** The writes a Kubernetes dependent makes: what `ctx.secondaryClient(source)` offers. */
export interface SecondaryWriter<S extends KubernetesObject> {
  apply(obj: S, options?: Partial<ApplyOptions>): Promise<S>;
  delete(ref: ObjectRef, options?: DeleteOptions): Promise<S | undefined>;
}

/**
 * What Kubernetes dependents need from the run's context. The controller's `Context` satisfies
 * it; a test can pass its own.
 */
export interface KubernetesDependentContext {
  readonly signal?: AbortSignal;
  /** The controller's name: the field manager the default matcher looks for, unless `fieldManager` is set. */
  readonly controller?: string;
  /** The field manager the controller's writes use (when the controller's Context tells it). */
  readonly fieldManager?: string;
  /** For conditions that read the server directly (`resourceDeleted`, `crdPresent`). */
  readonly client?: KubeClient;
  /** The secondaries of the run's primary in the named source (read-your-writes cache). */
  getSecondaryResources<S extends KubernetesObject = KubernetesObject>(source: string): S[];
  /** A client whose writes the next run reads back and whose watch events trigger no run. */
  secondaryClient<S extends KubernetesObject = KubernetesObject>(source: string): SecondaryWriter<S>;
}

/** A dependent's secondary event source: the one `SecondarySpec`, always named (its `sourceName`). */
export interface KubernetesEventSource extends SecondarySpec {
  readonly name: string;
}

/** A user-supplied matcher: whether the actual object already is as desired. */
export type KubernetesMatcher<R, P, C> = (actual: R, desired: R, primary: P, ctx: C) => boolean | Promise<boolean>;

/** Options every dependent that writes Kubernetes objects shares. */
export interface KubernetesWriteOptions {
  readonly resource: ResourceDescriptor;
  /**
   * The secondary goes away with the primary through its owner reference (default true): the
   * workflow's cleanup does not delete it and no finalizer is needed for it. With `false` the
   * workflow deletes it, in reverse dependency order, before the primary's finalizer goes.
   */
  readonly garbageCollected?: boolean;
  /** Set an owner reference to the primary (default: `garbageCollected`). */
  readonly ownerReference?: boolean;
  /** The event source name (default: the resource's plural, shared by dependents of that kind). */
  readonly sourceName?: string;
  /** Namespaces the event source watches (default: the primary's). */
  readonly namespaces?: 'all' | readonly string[];
  /**
   * Narrows the event source. The objects the dependent writes must carry labels it selects,
   * or the dependent never sees them and applies them on every run.
   */
  readonly labelSelector?: LabelSelector;
  /** How the event source maps a secondary to primaries (default: the primary annotations). */
  readonly toPrimaries?: SecondaryToPrimaryMapper<KubernetesObject>;
}

export interface KubernetesDependentOptions<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
> extends KubernetesWriteOptions {
  /** Unique in a workflow (default: the resource's plural). */
  readonly name?: string;
  /**
   * The object as it should be. apiVersion and kind may be left out; the namespace defaults to
   * the primary's. Required unless `readOnly`.
   */
  readonly desired?: (primary: P, ctx: C) => R | Promise<R>;
  /** Never created, updated or deleted: only read (and watched). */
  readonly readOnly?: boolean;
  /** Replaces the default matcher (`kubernetesMatches`); return false to apply on every run. */
  readonly match?: KubernetesMatcher<R, P, C>;
  /**
   * The discriminator (DR3): which object this dependent targets for a primary, without
   * computing `desired`. Default: the desired object's name and namespace. The namespace
   * defaults to the primary's.
   */
  readonly resourceId?: (primary: P) => ResourceID;
}

/** Marks objects made by this module, so conditions can recognize them. */
const KUBERNETES_DEPENDENT: unique symbol = Symbol('rxkube.kubernetesDependent');

/** What `resourceDeleted` and other server-reading conditions need from a dependent. */
export interface ServerReadable<P, C> {
  readonly [KUBERNETES_DEPENDENT]: true;
  readonly resource: ResolvedDescriptor;
  /** The dependent's secondaries of the primary that still exist, read from the API server (not the cache). */
  readFromServer(primary: P, ctx: C): Promise<KubernetesObject[]>;
}

/** True for dependents made by `kubernetesDependent`, `bulkDependent` and `externalStateDependent`. */
export function isServerReadable<P, C>(dependent: unknown): dependent is ServerReadable<P, C> {
  return typeof dependent === 'object' && dependent !== null && KUBERNETES_DEPENDENT in dependent;
}

export interface KubernetesDependent<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
>
  extends DependentResource<R, P, C, KubernetesEventSource>, ServerReadable<P, C> {
  readonly name: string;
  readonly sourceName: string;
  readonly eventSource: KubernetesEventSource;
  readonly garbageCollected: boolean;
  /** The ResourceID of the object this dependent targets for the primary. */
  targetId(primary: P, ctx: C): Promise<ResourceID>;
}

/** Which dependent, and which kind of object it targets. */
export interface TargetKind {
  readonly dependent: string;
  readonly descriptor: ResolvedDescriptor;
}

/** The shared, validated part of a Kubernetes-writing dependent's configuration. */
export interface KubernetesTarget extends TargetKind {
  readonly garbageCollected: boolean;
  readonly ownerReference: boolean;
  readonly sourceName: string;
  readonly eventSource: KubernetesEventSource;
}

/**
 * Validates the options every Kubernetes-writing dependent shares. `option` prefixes error
 * option names (`kubernetesDependent(web).resource.plural`).
 */
export function resolveKubernetesTarget(
  option: string,
  dependent: string | undefined,
  options: KubernetesWriteOptions,
  defaults: {
    readonly readOnly?: boolean;
    /** The default source name, from the plural and the dependent's name (default: the plural). */
    readonly sourceName?: (plural: string, dependent: string) => string;
    /** The source looks secondaries up by id (then no annotation mapper is defaulted). */
    readonly toSecondaries?: (target: TargetKind) => PrimaryToSecondaryMapper<KubernetesObject>;
  } = {},
): KubernetesTarget {
  if (options === null || typeof options !== 'object') {
    throw new ConfigurationError(option, `must be an object with at least { resource }, got ${describeValue(options)}`);
  }
  let descriptor: ResolvedDescriptor;
  try {
    descriptor = resolveDescriptor(options.resource);
  } catch (err) {
    if (err instanceof ConfigurationError)
      throw new ConfigurationError(`${option}.${err.option}`, err.message.slice(err.option.length + 2));
    throw err;
  }
  const name = dependent ?? descriptor.plural;
  if (typeof name !== 'string' || name === '')
    throw new ConfigurationError(`${option}.name`, `must be a non-empty string, got ${describeValue(name)}`);
  const where = `${option}(${name})`;
  for (const flag of ['garbageCollected', 'ownerReference'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw new ConfigurationError(`${where}.${flag}`, `must be a boolean, got ${describeValue(options[flag])}`);
    }
  }
  const garbageCollected = defaults.readOnly ? false : (options.garbageCollected ?? true);
  const ownerReference = defaults.readOnly ? false : (options.ownerReference ?? garbageCollected);
  if (garbageCollected && !ownerReference) {
    throw new ConfigurationError(
      `${where}.ownerReference`,
      'is false, but garbageCollected needs the owner reference to the primary; set garbageCollected: false to have the workflow delete it',
    );
  }
  if (options.toPrimaries !== undefined) requireFunction(`${where}.toPrimaries`, options.toPrimaries);
  const sourceName = options.sourceName ?? defaults.sourceName?.(descriptor.plural, name) ?? descriptor.plural;
  if (typeof sourceName !== 'string' || sourceName === '') {
    throw new ConfigurationError(`${where}.sourceName`, `must be a non-empty string, got ${describeValue(sourceName)}`);
  }
  const toPrimaries = options.toPrimaries ?? (defaults.toSecondaries ? undefined : Mappers.fromDefaultAnnotations());
  const toSecondaries = defaults.toSecondaries?.({ dependent: name, descriptor });
  const eventSource: KubernetesEventSource = {
    name: sourceName,
    resource: options.resource,
    ...(options.namespaces === undefined ? {} : { namespaces: options.namespaces }),
    ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
    ...(toPrimaries === undefined ? {} : { toPrimaries }),
    ...(toSecondaries === undefined ? {} : { toSecondaries }),
  };
  return { dependent: name, descriptor, garbageCollected, ownerReference, sourceName, eventSource };
}

/** The id an object names, with the primary's namespace filled in for a namespaced kind. */
export function targetIdOf(target: TargetKind, id: ResourceID, primary: KubernetesObject, what: string): ResourceID {
  if (!isRecord(id) || typeof id.name !== 'string' || id.name === '') {
    throw new TypeError(
      `dependent '${target.dependent}': ${what} must name the ${target.descriptor.kind} ({ name, namespace? }), got ${describeValue(id)}`,
    );
  }
  if (!target.descriptor.namespaced) {
    if (id.namespace) {
      throw new TypeError(
        `dependent '${target.dependent}': ${target.descriptor.kind} is cluster-scoped; ${what} must not set a namespace (got '${id.namespace}')`,
      );
    }
    return { name: id.name };
  }
  const namespace = id.namespace || primary.metadata?.namespace;
  if (!namespace) {
    throw new TypeError(
      `dependent '${target.dependent}': ${target.descriptor.kind} '${id.name}' needs a namespace, and the primary has none to default to`,
    );
  }
  return { name: id.name, namespace };
}

export function sameId(obj: KubernetesObject, id: ResourceID): boolean {
  return obj.metadata?.name === id.name && (obj.metadata?.namespace ?? undefined) === (id.namespace ?? undefined);
}

function ownerReferenceTo(target: KubernetesTarget, primary: KubernetesObject, id: ResourceID): V1OwnerReference {
  const { apiVersion, kind } = primary;
  const name = primary.metadata?.name;
  const uid = primary.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new TypeError(
      `dependent '${target.dependent}': an owner reference needs the primary's apiVersion, kind, metadata.name and metadata.uid ` +
        '(pass the primary as read from the server)',
    );
  }
  const primaryNamespace = primary.metadata?.namespace;
  if (primaryNamespace && id.namespace !== primaryNamespace) {
    const where = id.namespace ? `namespace '${id.namespace}'` : 'a cluster-scoped object';
    throw new TypeError(
      `dependent '${target.dependent}': ${target.descriptor.kind} '${id.name}' in ${where} cannot be owned by ${kind} ` +
        `${primaryNamespace}/${name} (owner references do not cross namespaces); set garbageCollected: false`,
    );
  }
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/**
 * The desired object as the dependent applies it: type meta filled in and checked, the namespace
 * defaulted, the primary annotations (and owner reference, and `labels`) added. The user's
 * object is not modified.
 */
export function prepareDesired<R extends KubernetesObject>(
  target: KubernetesTarget,
  value: unknown,
  primary: KubernetesObject,
  labels: Readonly<Record<string, string>> = {},
): R {
  const { descriptor: d, dependent } = target;
  if (!isRecord(value))
    throw new TypeError(`dependent '${dependent}': desired() returned ${describeValue(value)}; expected a ${d.kind} object`);
  const obj = value as KubernetesObject;
  if (obj.apiVersion !== undefined && obj.apiVersion !== d.apiVersion) {
    throw new TypeError(
      `dependent '${dependent}': desired() returned apiVersion '${obj.apiVersion}', but the dependent's resource is ${d.apiVersion}`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== d.kind) {
    throw new TypeError(`dependent '${dependent}': desired() returned kind '${obj.kind}', but the dependent's resource is ${d.kind}`);
  }
  const metadata = obj.metadata ?? {};
  if (typeof metadata.name !== 'string' || metadata.name === '') {
    throw new TypeError(`dependent '${dependent}': desired() returned a ${d.kind} without metadata.name`);
  }
  const id = targetIdOf(target, { name: metadata.name, namespace: metadata.namespace }, primary, 'desired()');
  const ownerReferences = target.ownerReference
    ? (() => {
        const ours = ownerReferenceTo(target, primary, id);
        return [...(metadata.ownerReferences ?? []).filter((r) => r.uid !== ours.uid), ours];
      })()
    : metadata.ownerReferences;
  const hasLabels = metadata.labels !== undefined || Object.keys(labels).length > 0;
  return {
    ...obj,
    apiVersion: d.apiVersion,
    kind: d.kind,
    metadata: {
      ...metadata,
      ...id,
      ...(hasLabels ? { labels: { ...metadata.labels, ...labels } } : {}),
      annotations: { ...metadata.annotations, ...primaryAnnotations(resourceIdOf(primary)) },
      ...(ownerReferences === undefined ? {} : { ownerReferences }),
    },
  } as R;
}

/** Applies the desired object (server-side apply, `force` like JOSDK) through the tracked client. */
export function applyDesired<R extends KubernetesObject>(
  target: KubernetesTarget,
  ctx: KubernetesDependentContext,
  desired: R,
): Promise<R> {
  return ctx.secondaryClient<R>(target.sourceName).apply(desired, { force: true });
}

/** Deletes an object unless it is already being deleted; a 404 means it is gone already. */
export async function deleteObject(target: KubernetesTarget, ctx: KubernetesDependentContext, obj: KubernetesObject): Promise<void> {
  if (isMarkedForDeletion(obj)) return;
  try {
    await ctx.secondaryClient(target.sourceName).delete(resourceIdOf(obj));
  } catch (err) {
    if (classifyError(err) !== 'notFound') throw err;
  }
}

/** The default matcher, with the context's field manager. */
export function defaultMatch(ctx: KubernetesDependentContext, actual: unknown, desired: unknown): boolean {
  return kubernetesMatches(actual, desired, { fieldManager: ctx.fieldManager ?? ctx.controller });
}

export function requireServerClient(ctx: { readonly client?: KubeClient }, what: string): KubeClient {
  const client = ctx.client;
  if (!client || typeof client.resource !== 'function') {
    throw new TypeError(`${what} reads the API server and needs ctx.client (the controller's Context has it)`);
  }
  return client;
}

/** Brands a dependent object so server-reading conditions recognize it. */
export function brand<T extends object>(dependent: T): T & { readonly [KUBERNETES_DEPENDENT]: true } {
  return Object.assign(dependent, { [KUBERNETES_DEPENDENT]: true as const });
}

/**
 * A Kubernetes dependent (DR2): `desired` computes the object; it is created and updated with
 * server-side apply (force, the controller's field manager) only when the matcher says the
 * actual object differs; `delete` removes it (a 404 is fine). Read-only dependents only read.
 */
export function kubernetesDependent<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
>(options: KubernetesDependentOptions<R, P, C>): KubernetesDependent<R, P, C> {
  const readOnly = options?.readOnly ?? false;
  if (typeof readOnly !== 'boolean')
    throw new ConfigurationError('kubernetesDependent.readOnly', `must be a boolean, got ${describeValue(readOnly)}`);
  const resourceId = options?.resourceId;
  // A read-only object carries no primary annotations: with a resourceId the source looks it up
  // by id (and maps it back through the primaries' index), in a source of its own.
  const byId = readOnly && resourceId !== undefined && options.toPrimaries === undefined;
  const target = resolveKubernetesTarget(
    'kubernetesDependent',
    options?.name,
    options,
    byId
      ? {
          readOnly,
          sourceName: (plural, dependent) => `${plural}:${dependent}`,
          toSecondaries: (kind) => (primary) => [targetIdOf(kind, resourceId(primary as P), primary, 'resourceId()')],
        }
      : { readOnly },
  );
  const where = `kubernetesDependent(${target.dependent})`;
  const { desired: userDesired, match } = options;
  if (userDesired !== undefined) requireFunction(`${where}.desired`, userDesired);
  if (resourceId !== undefined) requireFunction(`${where}.resourceId`, resourceId);
  if (match !== undefined) requireFunction(`${where}.match`, match);
  if (!readOnly && userDesired === undefined) {
    throw new ConfigurationError(`${where}.desired`, 'is required (a function (primary, ctx) => object) unless the dependent is readOnly');
  }
  if (readOnly && userDesired === undefined && resourceId === undefined && options.toPrimaries === undefined) {
    throw new ConfigurationError(
      where,
      'a read-only dependent needs resourceId (or desired, or toPrimaries) to find its object: it writes nothing that would tie the object to the primary',
    );
  }

  const desired =
    userDesired && (async (primary: P, ctx: C): Promise<R> => prepareDesired<R>(target, await userDesired(primary, ctx), primary));

  const targetIdOrNone = async (primary: P, ctx: C, given?: R): Promise<ResourceID | undefined> => {
    if (resourceId) return targetIdOf(target, resourceId(primary), primary, 'resourceId()');
    const obj = given ?? (desired ? await desired(primary, ctx) : undefined);
    return obj ? resourceIdOf(obj) : undefined;
  };

  const findCached = async (primary: P, ctx: C, given?: R): Promise<R | undefined> => {
    const all = ctx.getSecondaryResources<R>(target.sourceName);
    const id = await targetIdOrNone(primary, ctx, given);
    if (id !== undefined) return all.find((s) => sameId(s, id));
    if (all.length > 1) {
      const names = all.map((s) => resourceKey(resourceIdOf(s))).join(', ');
      throw new Error(
        `dependent '${target.dependent}': ${all.length} ${target.descriptor.plural} map to the primary (${names}); give it a resourceId`,
      );
    }
    return all[0];
  };

  const dependent = {
    name: target.dependent,
    resource: target.descriptor,
    sourceName: target.sourceName,
    eventSource: target.eventSource,
    garbageCollected: target.garbageCollected,
    getSecondary: (primary: P, ctx: C, given?: R) => findCached(primary, ctx, given),
    targetId: async (primary: P, ctx: C): Promise<ResourceID> => {
      const id = await targetIdOrNone(primary, ctx);
      if (id === undefined) throw new Error(`dependent '${target.dependent}': no resourceId or desired() to tell its object`);
      return id;
    },
    readFromServer: async (primary: P, ctx: C): Promise<KubernetesObject[]> => {
      const client = requireServerClient(ctx, `dependent '${target.dependent}'`);
      const id = await dependent.targetId(primary, ctx);
      const found = await client.resource(target.descriptor).find(id, { signal: ctx.signal });
      return found ? [found] : [];
    },
    ...(desired ? { desired } : {}),
    ...(readOnly
      ? {}
      : {
          create: (d: R, _primary: P, ctx: C) => applyDesired(target, ctx, d),
          update: (_actual: R, d: R, _primary: P, ctx: C) => applyDesired(target, ctx, d),
          delete: async (primary: P, ctx: C): Promise<void> => {
            const actual = await findCached(primary, ctx);
            if (actual) await deleteObject(target, ctx, actual);
          },
        }),
    match: match ?? ((actual: R, d: R, _primary: P, ctx: C) => defaultMatch(ctx, actual, d)),
  };
  return brand(dependent);
}
