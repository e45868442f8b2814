import type { KubernetesObject } from '@kubernetes/client-node';
import { kubernetesMatches } from '../dependent/index.js';
import { refOf, type ApplyOptions, type JsonPatchOperation, type ObjectRef, type ResourceClient } from '../kube/index.js';
import { newerOf, type ReadYourWritesCache, type WriteIntent } from '../cache/index.js';

/**
 * A resource client whose writes default to the controller's field manager, and whose applies
 * force by default (apply needs no options): the controller owns what it applies and takes back a
 * field someone else changed, as controller-runtime's `client.Apply` with `ForceOwnership` and
 * JOSDK's server-side-apply dependents do. `force: false` asks for the 409 instead.
 */
export interface TrackedClient<T extends KubernetesObject> extends Omit<ResourceClient<T>, 'apply' | 'applyStatus'> {
  apply(obj: T, options?: Partial<ApplyOptions>): Promise<T>;
  applyStatus(obj: T, options?: Partial<ApplyOptions>): Promise<T>;
}

/**
 * A resource client whose writes go through a read-your-writes cache (UP3, ES4): the next run
 * reads what was written, and the watch event a write causes triggers no run. Writes default
 * to the controller's field manager. Each write's answer is judged against the version the
 * cache had when it began (`intentOf`): one that carries someone else's change runs the
 * primary like that change's own event would.
 */
export function trackedClient<T extends KubernetesObject>(
  client: ResourceClient<T>,
  cache: ReadYourWritesCache<T>,
  fieldManager: string,
): TrackedClient<T> {
  const track = <R extends T | undefined>(ref: ObjectRef, body: WriteBody, write: () => Promise<R>): Promise<R> =>
    trackWrite(cache, ref, body, write);
  const applyOptions = (options: Partial<ApplyOptions> | undefined): ApplyOptions => ({
    ...options,
    fieldManager: options?.fieldManager ?? fieldManager,
    force: options?.force ?? true,
  });
  return {
    ...client,
    create: (obj, options) => track(refOf(obj), { kind: 'create' }, () => client.create(obj, { fieldManager, ...options })),
    replace: (obj, options) =>
      track(refOf(obj), { kind: 'object', body: obj, replaces: true }, () => client.replace(obj, { fieldManager, ...options })),
    replaceStatus: (obj, options) =>
      track(refOf(obj), { kind: 'status', body: obj }, () => client.replaceStatus(obj, { fieldManager, ...options })),
    delete: (ref, options) => track(ref, { kind: 'delete' }, () => client.delete(ref, options)),
    apply: (obj, options) => track(refOf(obj), { kind: 'object', body: obj }, () => client.apply(obj, applyOptions(options))),
    applyStatus: (obj, options) => track(refOf(obj), { kind: 'status', body: obj }, () => client.applyStatus(obj, applyOptions(options))),
    mergePatch: (ref, patch, options) =>
      track(ref, { kind: 'object', body: patch }, () => client.mergePatch(ref, patch, { fieldManager, ...options })),
    mergePatchStatus: (ref, patch, options) =>
      track(ref, { kind: 'status', body: patch }, () => client.mergePatchStatus(ref, patch, { fieldManager, ...options })),
    jsonPatch: (ref, ops, options) =>
      track(ref, { kind: 'jsonPatch', ops }, () => client.jsonPatch(ref, ops, { fieldManager, ...options })),
    jsonPatchStatus: (ref, ops, options) =>
      track(ref, { kind: 'status', ops }, () => client.jsonPatchStatus(ref, ops, { fieldManager, ...options })),
    patch: (ref, body, options) =>
      track(ref, options.subresource === 'status' ? { kind: 'status', body } : { kind: 'unknown' }, () =>
        client.patch(ref, body, { ...options, fieldManager: options.fieldManager ?? fieldManager }),
      ),
  };
}

/**
 * The one path every tracked write takes, the framework's primary writes (`primaryWriter`) and the
 * clients it hands out (`trackedClient`) alike: the write runs inside `cache.trackWrite`, its
 * answer judged (`intentOf`) against the newest version known when it began — the cache's, or
 * `known` (what the write was computed from) when that is newer or the cache has none (ES7).
 */
export function trackWrite<T extends KubernetesObject, R extends T | undefined>(
  cache: ReadYourWritesCache<T>,
  ref: ObjectRef,
  body: WriteBody,
  write: () => Promise<R>,
  known?: T,
): Promise<R> {
  return cache.trackWrite(ref, write, intentOf(newerOf(known, cache.get(ref)), body));
}

/** What a write sends, as far as its own-write judgement needs it. */
export type WriteBody =
  | { readonly kind: 'create' | 'delete' | 'unknown' }
  /** An applied object, a replacement or a merge patch of the object (not its status). */
  | { readonly kind: 'object'; readonly body: unknown; readonly replaces?: boolean }
  | { readonly kind: 'status'; readonly body?: unknown; readonly ops?: readonly JsonPatchOperation[] }
  | { readonly kind: 'jsonPatch'; readonly ops: readonly JsonPatchOperation[] };

/**
 * ES4: what a write may change on `base`, the version the cache had when it began. A write that
 * carries `base`'s resourceVersion as precondition lands on it or fails; a create fails if the
 * object exists. A status write keeps the generation and the finalizers; an apply or merge patch whose content the
 * object already has keeps it too (or may bump it, when it writes a new status: a kind without
 * a status subresource counts status as content), and one that the object holds entirely changes
 * nothing; any other content change bumps it once; a delete may mark the object and bump it.
 */
export function intentOf<T extends KubernetesObject>(base: T | undefined, write: WriteBody): WriteIntent<T> {
  if (base === undefined || write.kind === 'create') return {};
  const baseVersion = base.metadata?.resourceVersion;
  if ('ops' in write && write.ops?.some((op) => op.op === 'test' && op.path === '/metadata/resourceVersion' && op.value === baseVersion))
    return {};
  if ('body' in write && baseVersion !== undefined && versionIn(write.body) === baseVersion) return {};
  switch (write.kind) {
    case 'delete':
      return { base, generation: 'keepOrBump', deletes: true };
    case 'unknown':
      return { base, generation: 'keepOrBump' };
    case 'jsonPatch':
      return { base, generation: write.ops.every((op) => /^\/(metadata|status)(\/|$)/.test(op.path)) ? 'keep' : 'keepOrBump' };
    case 'status':
      // Wrapped: the matcher leaves a top-level `status` out of the comparison.
      return {
        base,
        generation: 'keep',
        keepsFinalizers: true,
        // Only a write that says what it sends can be judged to change nothing.
        unchanged: write.body !== undefined && kubernetesMatches({ s: statusOf(base) }, { s: statusOf(write.body) }),
      };
    case 'object': {
      if (write.replaces) return { base, generation: 'keepOrBump' };
      const { apiVersion: _apiVersion, kind: _kind, metadata, status, ...content } = isRecord(write.body) ? write.body : {};
      const keepsContent = kubernetesMatches(base, content);
      // Without a status subresource, a status written with the object bumps the generation too.
      const keepsStatus = status === undefined || kubernetesMatches({ s: statusOf(base) }, { s: status });
      if (!keepsContent) return { base, generation: 'bump' };
      if (!keepsStatus) return { base, generation: 'keepOrBump' };
      return { base, generation: 'keep', unchanged: kubernetesMatches(base, { metadata }) };
    }
  }
}

function versionIn(body: unknown): unknown {
  const metadata = isRecord(body) ? body['metadata'] : undefined;
  return isRecord(metadata) ? metadata['resourceVersion'] : undefined;
}

function statusOf(obj: unknown): unknown {
  return isRecord(obj) ? obj['status'] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
