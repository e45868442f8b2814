/**
 * External dependents: a non-Kubernetes resource (a REST API object, a database, a bucket)
 * reconciled with user functions, optionally polled so that changes made outside trigger the
 * primary (ES5), and — in the external-state variant (DR3) — with its external id kept in a
 * ConfigMap or Secret owned by the primary, so the id survives restarts and can be inspected
 * and edited with ordinary Kubernetes tools.
 */
import type { KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { ObservableInput, SchedulerLike } from 'rxjs';
import { ConfigurationError, describeValue, requireFunction, resourceIdOf, type MaybePromise, type ResourceID } from '../core/index.js';
import { builtinResources } from '../kube/index.js';
import { perResourcePolling, type PerResourcePollingSource } from '../sources/index.js';
import {
  applyDesired,
  deleteObject,
  prepareDesired,
  resolveKubernetesTarget,
  sameId,
  targetIdOf,
  type KubernetesDependentContext,
  type KubernetesEventSource,
  type KubernetesTarget,
} from './kubernetes.js';
import type { DependentContext, DependentResource } from './types.js';

export interface ExternalPollingOptions<R> {
  readonly intervalMs: number;
  /** The external resource of one primary, polled every `intervalMs`; undefined when it has none. */
  readonly fetch: (id: ResourceID) => ObservableInput<R | undefined>;
  /** Decides whether a polled resource changed (default: deep equality). */
  readonly equals?: (a: R, b: R) => boolean;
  readonly scheduler?: SchedulerLike;
}

export interface ExternalDependentOptions<R, P extends KubernetesObject, C extends DependentContext = DependentContext> {
  /** Unique in a workflow. */
  readonly name: string;
  /** The external resource of the primary as it is now; undefined when it does not exist. */
  readonly fetch: (primary: P, ctx: C) => MaybePromise<R | undefined>;
  readonly desired?: (primary: P, ctx: C) => MaybePromise<R>;
  readonly create?: (desired: R, primary: P, ctx: C) => MaybePromise<R | void>;
  readonly update?: (actual: R, desired: R, primary: P, ctx: C) => MaybePromise<R | void>;
  /** Called with the fetched resource, only when it exists. */
  readonly delete?: (actual: R, primary: P, ctx: C) => MaybePromise<void>;
  /** Default: every field the desired resource sets has that value in the actual one. */
  readonly match?: (actual: R, desired: R, primary: P, ctx: C) => MaybePromise<boolean>;
  /** Poll each primary's resource (started on the primary's first run, stopped by `delete`). */
  readonly polling?: ExternalPollingOptions<R>;
}

export interface ExternalDependent<R, P extends KubernetesObject, C extends DependentContext = DependentContext> extends DependentResource<
  R,
  P,
  C,
  never
> {
  readonly name: string;
  /**
   * With `polling`: the per-resource polling source whose `events$` trigger the primaries whose
   * external resource changed. Merge it into the controller's events where the controller
   * accepts non-Kubernetes sources.
   */
  readonly pollingSource?: PerResourcePollingSource<R>;
}

function requireName(option: string, name: unknown): string {
  if (typeof name !== 'string' || name === '')
    throw new ConfigurationError(`${option}.name`, `must be a non-empty string, got ${describeValue(name)}`);
  return name;
}

function requireOptional(option: string, value: unknown): void {
  if (value !== undefined) requireFunction(option, value);
}

/**
 * An external dependent: `fetch` reads the resource, the optional traits create, update and
 * delete it (a missing trait switches that step off, DR1). It is never garbage-collected, so a
 * `delete` makes the controller use a finalizer and the workflow delete it on cleanup.
 */
export function externalDependent<R, P extends KubernetesObject, C extends DependentContext = DependentContext>(
  options: ExternalDependentOptions<R, P, C>,
): ExternalDependent<R, P, C> {
  if (options === null || typeof options !== 'object') {
    throw new ConfigurationError('externalDependent', `must be an object with at least { name, fetch }, got ${describeValue(options)}`);
  }
  const name = requireName('externalDependent', options.name);
  const where = `externalDependent(${name})`;
  requireFunction(`${where}.fetch`, options.fetch);
  for (const trait of ['desired', 'create', 'update', 'delete', 'match'] as const) requireOptional(`${where}.${trait}`, options[trait]);
  if ((options.create || options.update) && !options.desired) {
    throw new ConfigurationError(`${where}.desired`, 'is required when the dependent can create or update');
  }
  const pollingSource = options.polling
    ? perResourcePolling<R>({
        name,
        intervalMs: options.polling.intervalMs,
        fetch: requireFunction(`${where}.polling.fetch`, options.polling.fetch),
        equals: options.polling.equals,
        scheduler: options.polling.scheduler,
      })
    : undefined;
  const { fetch, desired, create, update, match } = options;
  const remove = options.delete;
  return {
    name,
    garbageCollected: false,
    getSecondary: (primary: P, ctx: C) => {
      pollingSource?.track(resourceIdOf(primary));
      return fetch(primary, ctx);
    },
    ...(desired ? { desired } : {}),
    ...(create ? { create } : {}),
    ...(update ? { update } : {}),
    ...(match ? { match } : {}),
    ...(remove
      ? {
          delete: async (primary: P, ctx: C) => {
            const actual = await fetch(primary, ctx);
            if (actual !== undefined) await remove(actual, primary, ctx);
            pollingSource?.untrack(resourceIdOf(primary));
          },
        }
      : {}),
    ...(pollingSource ? { pollingSource } : {}),
  };
}

export interface ExternalStateOptions<P> {
  /** Keep the id in a ConfigMap (default) or a Secret. */
  readonly kind?: 'ConfigMap' | 'Secret';
  /** The state object's name (default `<primary name>-<dependent name>`). */
  readonly name?: (primary: P) => string;
  /** Its namespace (default the primary's; required for a cluster-scoped primary). */
  readonly namespace?: string;
  /** The event source of state objects (default `configmaps` / `secrets`, shared with other dependents). */
  readonly sourceName?: string;
}

export interface ExternalStateDependentOptions<
  R,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
> {
  /** Unique in a workflow. */
  readonly name: string;
  readonly desired: (primary: P, ctx: C) => MaybePromise<R>;
  /** The external resource with this id; undefined when it does not exist (any more). */
  readonly fetch: (id: string, primary: P, ctx: C) => MaybePromise<R | undefined>;
  /** Creates the external resource and returns it; `idOf` of the answer is kept in the state object. */
  readonly create: (desired: R, primary: P, ctx: C) => MaybePromise<R>;
  /** The external id of a resource `create` returned. */
  readonly idOf: (resource: R) => string;
  readonly update?: (id: string, actual: R, desired: R, primary: P, ctx: C) => MaybePromise<R | void>;
  readonly delete?: (id: string, primary: P, ctx: C) => MaybePromise<void>;
  readonly match?: (actual: R, desired: R, primary: P, ctx: C) => MaybePromise<boolean>;
  readonly state?: ExternalStateOptions<P>;
}

export interface ExternalStateDependent<
  R,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
> extends DependentResource<R, P, C, KubernetesEventSource> {
  readonly name: string;
  /** The state objects' event source (ConfigMaps or Secrets, mapped by the primary annotations). */
  readonly eventSource: KubernetesEventSource;
  /** The external id kept for the primary, if any. */
  externalId(primary: P, ctx: C): string | undefined;
}

/** The key under which the state object keeps the external id. */
export const EXTERNAL_ID_KEY = 'id';

const STATE_RESOURCES = { ConfigMap: builtinResources.configMap, Secret: builtinResources.secret } as const;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function stateBody(kind: 'ConfigMap' | 'Secret', id: string): V1ConfigMap | V1Secret {
  return kind === 'ConfigMap'
    ? { data: { [EXTERNAL_ID_KEY]: id } }
    : { type: 'Opaque', data: { [EXTERNAL_ID_KEY]: Buffer.from(id, 'utf8').toString('base64') } };
}

function readId(kind: 'ConfigMap' | 'Secret', obj: KubernetesObject | undefined): string | undefined {
  const value = (obj as { data?: Record<string, string> } | undefined)?.data?.[EXTERNAL_ID_KEY];
  if (typeof value !== 'string' || value === '') return undefined;
  return kind === 'ConfigMap' ? value : Buffer.from(value, 'base64').toString('utf8');
}

/**
 * An external dependent that keeps the external id of its resource in a state object (a
 * ConfigMap or Secret owned by the primary): reads go `state → id → fetch(id)`, `create` stores
 * the new id, `delete` deletes the external resource and then the state object. If storing the
 * id fails after `create` succeeded, the next run creates again: make `create` idempotent (e.g.
 * by a name derived from the primary) where that matters.
 */
export function externalStateDependent<R, P extends KubernetesObject, C extends KubernetesDependentContext = KubernetesDependentContext>(
  options: ExternalStateDependentOptions<R, P, C>,
): ExternalStateDependent<R, P, C> {
  if (options === null || typeof options !== 'object') {
    throw new ConfigurationError(
      'externalStateDependent',
      `must be an object with { name, desired, fetch, create, idOf }, got ${describeValue(options)}`,
    );
  }
  const name = requireName('externalStateDependent', options.name);
  const where = `externalStateDependent(${name})`;
  for (const trait of ['desired', 'fetch', 'create', 'idOf'] as const) requireFunction(`${where}.${trait}`, options[trait]);
  for (const trait of ['update', 'delete', 'match'] as const) requireOptional(`${where}.${trait}`, options[trait]);
  const state = options.state ?? {};
  const kind = state.kind ?? 'ConfigMap';
  if (kind !== 'ConfigMap' && kind !== 'Secret') {
    throw new ConfigurationError(`${where}.state.kind`, `must be 'ConfigMap' or 'Secret', got ${describeValue(kind)}`);
  }
  requireOptional(`${where}.state.name`, state.name);
  const target: KubernetesTarget = resolveKubernetesTarget('externalStateDependent.state', name, {
    resource: STATE_RESOURCES[kind],
    garbageCollected: true,
    ...(state.sourceName === undefined ? {} : { sourceName: state.sourceName }),
  });

  const stateId = (primary: P): ResourceID => {
    const stateName = state.name ? state.name(primary) : `${primary.metadata?.name ?? ''}-${name}`;
    if (typeof stateName !== 'string' || stateName.length > 253 || !DNS_SUBDOMAIN.test(stateName)) {
      throw new TypeError(
        `external dependent '${name}': state object name ${describeValue(stateName)} is not a lowercase DNS subdomain; set state.name`,
      );
    }
    return targetIdOf(target, { name: stateName, ...(state.namespace ? { namespace: state.namespace } : {}) }, primary, 'the state object');
  };
  const stateOf = (primary: P, ctx: C): KubernetesObject | undefined => {
    const id = stateId(primary);
    return ctx.getSecondaryResources(target.sourceName).find((obj) => sameId(obj, id));
  };
  const externalId = (primary: P, ctx: C): string | undefined => readId(kind, stateOf(primary, ctx));
  const requireId = (primary: P, ctx: C, step: string): string => {
    const id = externalId(primary, ctx);
    if (id === undefined) throw new Error(`external dependent '${name}': no external id is kept for ${step}`);
    return id;
  };

  const { update, match } = options;
  const remove = options.delete;
  return {
    name,
    garbageCollected: false,
    eventSource: target.eventSource,
    externalId,
    desired: options.desired,
    getSecondary: async (primary: P, ctx: C) => {
      const id = externalId(primary, ctx);
      return id === undefined ? undefined : options.fetch(id, primary, ctx);
    },
    create: async (desired: R, primary: P, ctx: C): Promise<R> => {
      const created = await options.create(desired, primary, ctx);
      const id = options.idOf(created);
      if (typeof id !== 'string' || id === '') {
        throw new TypeError(
          `external dependent '${name}': idOf() returned ${describeValue(id)} for the created resource; expected a non-empty string`,
        );
      }
      const { name: stateName, namespace } = stateId(primary);
      const stateObject = { metadata: { name: stateName, namespace }, ...stateBody(kind, id) };
      await applyDesired(target, ctx, prepareDesired(target, stateObject, primary));
      return created;
    },
    ...(update
      ? { update: (actual: R, desired: R, primary: P, ctx: C) => update(requireId(primary, ctx, 'update'), actual, desired, primary, ctx) }
      : {}),
    ...(match ? { match } : {}),
    ...(remove
      ? {
          delete: async (primary: P, ctx: C): Promise<void> => {
            const stateObject = stateOf(primary, ctx);
            const id = readId(kind, stateObject);
            if (id !== undefined) await remove(id, primary, ctx);
            if (stateObject) await deleteObject(target, ctx, stateObject);
          },
        }
      : {}),
  };
}
