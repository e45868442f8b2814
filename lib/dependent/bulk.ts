/**
 * Bulk dependents (DR3): a keyed set of Kubernetes objects of one kind whose size depends on the
 * primary. Each run creates the objects that are missing, updates the ones that changed and
 * deletes the ones no longer desired. Every object carries the labels
 * `rxkube.dev/dependent=<dependent name>` and `rxkube.dev/key=<key>` next to the primary
 * annotations, which is how the dependent tells its own objects from others of that kind.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConfigurationError, describeError, describeValue, requireFunction, resourceIdOf } from '../core/index.js';
import { PRIMARY_NAME_ANNOTATION, PRIMARY_NAMESPACE_ANNOTATION } from '../sources/index.js';
import {
  applyDesired,
  brand,
  defaultMatch,
  deleteObject,
  prepareDesired,
  requireServerClient,
  resolveKubernetesTarget,
  type KubernetesDependentContext,
  type KubernetesEventSource,
  type KubernetesMatcher,
  type KubernetesWriteOptions,
  type ServerReadable,
} from './kubernetes.js';
import type { DependentReconcileResult, DependentResource } from './types.js';

export const BULK_DEPENDENT_LABEL = 'rxkube.dev/dependent';
export const BULK_KEY_LABEL = 'rxkube.dev/key';

/** The desired objects by key: a Map or a plain record. */
export type DesiredSet<R> = ReadonlyMap<string, R> | Readonly<Record<string, R>>;

export interface BulkDependentOptions<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
> extends KubernetesWriteOptions {
  /** Unique in a workflow, and the value of the `rxkube.dev/dependent` label (default: the plural). */
  readonly name?: string;
  /** The objects as they should be, by key (a label value: up to 63 of `A-Za-z0-9-_.`). */
  readonly desiredResources: (primary: P, ctx: C) => DesiredSet<R> | Promise<DesiredSet<R>>;
  /** Compares one object with its desired state (default: `kubernetesMatches`). */
  readonly match?: KubernetesMatcher<R, P, C>;
}

export interface BulkDependent<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
>
  extends DependentResource<R[], P, C, KubernetesEventSource>, ServerReadable<P, C> {
  readonly name: string;
  readonly sourceName: string;
  readonly eventSource: KubernetesEventSource;
  readonly garbageCollected: boolean;
  /** The desired objects by key, as they are applied (labels, annotations, owner reference added). */
  desiredResources(primary: P, ctx: C): Promise<Map<string, R>>;
  /** This dependent's objects of the primary in the cache, by key. */
  actualResources(primary: P, ctx: C): Map<string, R>;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function requireLabelValue(what: string, value: string): void {
  if (value === '' || value.length > 63 || !LABEL_VALUE.test(value)) {
    throw new TypeError(
      `${what} must be a label value (1-63 characters of A-Za-z0-9-_. starting and ending alphanumeric), got ${describeValue(value)}`,
    );
  }
}

function entriesOf<R>(set: unknown, dependent: string): [string, R][] {
  if (set instanceof Map) return [...(set as Map<unknown, R>)].map(([k, v]) => [String(k), v]);
  if (typeof set === 'object' && set !== null && !Array.isArray(set)) return Object.entries(set as Record<string, R>);
  throw new TypeError(
    `bulk dependent '${dependent}': desiredResources() returned ${describeValue(set)}; expected a Map or a record of objects by key`,
  );
}

function keyOf(obj: KubernetesObject): string | undefined {
  return obj.metadata?.labels?.[BULK_KEY_LABEL];
}

/**
 * A bulk dependent: `desiredResources` returns the objects by key; each run applies the missing
 * and changed ones and deletes those whose key is gone. Writes run concurrently; when some fail
 * the others still happen and the run fails with an `AggregateError` naming the keys.
 */
export function bulkDependent<
  R extends KubernetesObject,
  P extends KubernetesObject,
  C extends KubernetesDependentContext = KubernetesDependentContext,
>(options: BulkDependentOptions<R, P, C>): BulkDependent<R, P, C> {
  const target = resolveKubernetesTarget('bulkDependent', options?.name, options);
  const where = `bulkDependent(${target.dependent})`;
  requireFunction(`${where}.desiredResources`, options.desiredResources);
  if (options.match !== undefined) requireFunction(`${where}.match`, options.match);
  try {
    requireLabelValue('the name', target.dependent);
  } catch (err) {
    throw new ConfigurationError(`${where}.name`, `is used as the ${BULK_DEPENDENT_LABEL} label: ${(err as Error).message}`);
  }
  const name = target.dependent;
  const matches = options.match ?? ((actual: R, desired: R, _primary: P, ctx: C) => defaultMatch(ctx, actual, desired));

  const desiredResources = async (primary: P, ctx: C): Promise<Map<string, R>> => {
    const out = new Map<string, R>();
    const names = new Map<string, string>();
    for (const [key, value] of entriesOf<R>(await options.desiredResources(primary, ctx), name)) {
      requireLabelValue(`bulk dependent '${name}': key`, key);
      const obj = prepareDesired<R>(target, value, primary, { [BULK_DEPENDENT_LABEL]: name, [BULK_KEY_LABEL]: key });
      const objectName = obj.metadata!.name!;
      const other = names.get(objectName);
      if (other !== undefined) {
        throw new TypeError(`bulk dependent '${name}': keys '${other}' and '${key}' both desire ${target.descriptor.kind} '${objectName}'`);
      }
      names.set(objectName, key);
      out.set(key, obj);
    }
    return out;
  };

  const actualList = (ctx: C): R[] =>
    ctx.getSecondaryResources<R>(target.sourceName).filter((s) => s.metadata?.labels?.[BULK_DEPENDENT_LABEL] === name);

  const actualResources = (_primary: P, ctx: C): Map<string, R> => {
    const out = new Map<string, R>();
    for (const obj of actualList(ctx)) {
      const key = keyOf(obj);
      if (key !== undefined) out.set(key, obj);
    }
    return out;
  };

  const reconcile = async (primary: P, ctx: C): Promise<DependentReconcileResult<R[]>> => {
    const desired = await desiredResources(primary, ctx);
    const actual = actualList(ctx);
    const actualByName = new Map(actual.map((obj) => [obj.metadata?.name, obj]));
    const wanted = new Set([...desired.values()].map((obj) => obj.metadata!.name));
    let created = 0;
    let updated = 0;
    let deleted = 0;
    const current = new Map<string, R>();
    const writes: { key: string; write: () => Promise<void> }[] = [];
    for (const [key, obj] of desired) {
      const existing = actualByName.get(obj.metadata!.name);
      writes.push({
        key,
        write: async () => {
          if (existing !== undefined && (await matches(existing, obj, primary, ctx))) {
            current.set(key, existing);
            return;
          }
          current.set(key, await applyDesired(target, ctx, obj));
          if (existing === undefined) created++;
          else updated++;
        },
      });
    }
    for (const obj of actual) {
      if (wanted.has(obj.metadata?.name)) continue;
      writes.push({
        key: keyOf(obj) ?? obj.metadata?.name ?? '(unnamed)',
        write: async () => {
          await deleteObject(target, ctx, obj);
          deleted++;
        },
      });
    }
    const results = await Promise.allSettled(writes.map((w) => w.write()));
    const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [{ key: writes[i].key, error: r.reason as unknown }] : []));
    if (failures.length > 0) {
      const details = failures.map((f) => `key '${f.key}': ${describeError(f.error)}`).join('; ');
      throw new AggregateError(
        failures.map((f) => f.error),
        `bulk dependent '${name}': ${failures.length} of ${writes.length} writes failed: ${details}`,
      );
    }
    const resource = [...desired.keys()].flatMap((key) => (current.has(key) ? [current.get(key)!] : []));
    const operation = created > 0 ? 'created' : updated > 0 || deleted > 0 ? 'updated' : 'unchanged';
    return { operation, resource };
  };

  const dependent = {
    name,
    resource: target.descriptor,
    sourceName: target.sourceName,
    eventSource: target.eventSource,
    garbageCollected: target.garbageCollected,
    desiredResources,
    actualResources,
    reconcile,
    getSecondary: (_primary: P, ctx: C): R[] => actualList(ctx),
    delete: async (_primary: P, ctx: C): Promise<void> => {
      const results = await Promise.allSettled(actualList(ctx).map((obj) => deleteObject(target, ctx, obj)));
      const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      if (errors.length > 0)
        throw new AggregateError(
          errors,
          `bulk dependent '${name}': ${errors.length} deletes failed: ${errors.map(describeError).join('; ')}`,
        );
    },
    readFromServer: async (primary: P, ctx: C): Promise<KubernetesObject[]> => {
      const client = requireServerClient(ctx, `bulk dependent '${name}'`);
      const id = resourceIdOf(primary);
      const { items } = await client.resource(target.descriptor).listAll({
        labelSelector: { [BULK_DEPENDENT_LABEL]: name },
        signal: ctx.signal,
      });
      return items.filter((obj) => {
        const annotations = obj.metadata?.annotations ?? {};
        return (
          annotations[PRIMARY_NAME_ANNOTATION] === id.name && (annotations[PRIMARY_NAMESPACE_ANNOTATION] ?? undefined) === id.namespace
        );
      });
    },
  };
  return brand(dependent);
}
