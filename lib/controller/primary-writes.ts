/** How a controller writes its primary: status, finalizer and resource patches, each bound to the uid it was computed from. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { classifyError, refOf, type JsonPatchOperation, type ResourceClient } from '../kube/index.js';
import { createMergePatch } from './merge-patch.js';
import type { Primaries } from './primaries.js';
import { trackWrite, type WriteBody } from './tracked-client.js';

/**
 * How the controller writes its primary; one per controller. Every write is bound to the uid of
 * the primary it was computed from, so that it never lands on a successor re-created under the
 * same name while the cache still shows the old one.
 */
export interface PrimaryWriter<P extends KubernetesObject> {
  /** Whether the object stored under `primary`'s name is `primary` itself (same uid), not gone or re-created: read from the API. */
  isLive(primary: P, signal?: AbortSignal): Promise<boolean>;
  // Every write takes the run's signal: a run aborted (stop, lost leadership) does not wait on the API.
  addFinalizer(primary: P, signal?: AbortSignal): Promise<P>;
  /** FZ3: removes our finalizer; on 409/422 re-reads and tries again, up to 10 times. */
  removeFinalizer(primary: P, signal?: AbortSignal): Promise<P | undefined>;
  /** UP1: writes everything but status; keeps our finalizer in the intent; 409 when `original` is no longer current. */
  patchResource(original: P, updated: P, signal?: AbortSignal): Promise<P>;
  patchStatus(original: P, updated: P, signal?: AbortSignal): Promise<P>;
}

export interface PrimaryWriterOptions<P extends KubernetesObject> {
  readonly client: ResourceClient<P>;
  /** Every answer is recorded in their cache, so the next run reads it (UP3) and its event triggers nothing (ES4); their finalizer is the one written. */
  readonly primaries: Primaries<P>;
  readonly fieldManager: string;
  readonly strategy: 'apply' | 'merge';
  readonly observedGeneration: boolean;
}

const FINALIZER_REMOVAL_ATTEMPTS = 10;

/** Fields the server owns: never part of an applied intent or a computed patch. */
const SERVER_METADATA = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
] as const;

export function primaryWriter<P extends KubernetesObject>(options: PrimaryWriterOptions<P>): PrimaryWriter<P> {
  const { client, primaries, fieldManager } = options;
  const finalizerName = primaries.finalizerName ?? '';
  // ES4, UP3: the one tracked-write path, judged against the newest version we know (`original` or newer).
  const write = (original: P, body: WriteBody, fn: () => Promise<P>): Promise<P> =>
    trackWrite(primaries.cache, refOf(original), body, fn, original);

  return {
    async isLive(primary, signal) {
      const live = await client.find(refOf(primary), { signal });
      return live !== undefined && live.metadata?.uid === primary.metadata?.uid;
    },

    async addFinalizer(primary, signal) {
      const finalizers = [...(primary.metadata?.finalizers ?? []), finalizerName];
      // resourceVersion makes this an optimistic write: a concurrent finalizer change is a 409, not lost
      // (and a successor re-created under the name never has it: the write is bound to this object).
      const patch = { metadata: { finalizers, resourceVersion: primary.metadata?.resourceVersion } };
      return write(primary, { kind: 'object', body: patch }, () => client.mergePatch(refOf(primary), patch, { fieldManager, signal }));
    },

    async removeFinalizer(primary, signal) {
      let current: P | undefined = primary;
      for (let attempt = 1; ; attempt++) {
        const index = current.metadata?.finalizers?.indexOf(finalizerName) ?? -1;
        if (index < 0) return current;
        const path = `/metadata/finalizers/${index}`;
        try {
          const ref = refOf(current);
          const ops: JsonPatchOperation[] = [...uidTest(primary), { op: 'test', path, value: finalizerName }, { op: 'remove', path }];
          return await write(current, { kind: 'jsonPatch', ops }, () => client.jsonPatch(ref, ops, { fieldManager, signal }));
        } catch (err) {
          const kind = classifyError(err);
          if (kind === 'notFound') return undefined;
          if ((kind !== 'conflict' && kind !== 'invalid') || attempt >= FINALIZER_REMOVAL_ATTEMPTS) throw err;
          current = await client.find(refOf(current), { signal });
          // Gone, or a successor under the same name: its finalizer is not this cleanup's to remove.
          if (!current || current.metadata?.uid !== primary.metadata?.uid) return undefined;
        }
      }
    },

    async patchResource(original, updated, signal) {
      const intent = withoutStatus(withoutServerMetadata(updated));
      if (primaries.finalizerName !== undefined) ensureFinalizer(intent, primaries.finalizerName);
      // With resourceVersion the write lands on `original` only; the uid says so where there is none (and an API server checks it as immutable).
      bindToUid(intent, original);
      // Optimistic, as JOSDK's resource updates: computed from `original`, it must land on it (ES4).
      const resourceVersion = original.metadata?.resourceVersion;
      if (options.strategy === 'apply') {
        const applied = { ...intent, metadata: { ...intent.metadata, resourceVersion } } as P;
        return write(original, { kind: 'object', body: applied }, () => client.apply(applied, { fieldManager, force: true, signal }));
      }
      const patch = createMergePatch(withoutStatus(withoutServerMetadata(original)), intent) as { metadata?: object };
      const conditional = { ...patch, metadata: { ...patch.metadata, resourceVersion } };
      return write(original, { kind: 'object', body: conditional }, () =>
        client.mergePatch(refOf(original), conditional, { fieldManager, signal }),
      );
    },

    async patchStatus(original, updated, signal) {
      const status = statusOf(updated, original, options.observedGeneration);
      if (options.strategy === 'apply') {
        // The uid goes with the intent: an API server that keeps metadata in a status write (built-in kinds) refuses it on a successor.
        const intent = {
          apiVersion: original.apiVersion,
          kind: original.kind,
          metadata: { name: original.metadata?.name, namespace: original.metadata?.namespace, uid: original.metadata?.uid },
          status,
        } as unknown as P;
        // Not judged "changes nothing": an apply of the status the object has may still move managedFields, and its answer is ours.
        return write(original, { kind: 'status' }, () => client.applyStatus(intent, { fieldManager, force: true, signal }));
      }
      // A JSON patch, so that a `test` of the uid binds it to `original` on every kind; it changes what a merge patch would.
      const ops = [...uidTest(original), ...statusChanges((original as { status?: unknown }).status, status)];
      return write(original, { kind: 'status', ops }, () => client.jsonPatchStatus(refOf(original), ops, { fieldManager, signal }));
    },
  };
}

/** A JSON-patch `test` of the uid `primary` has (none for an object without one: not from an API server). */
function uidTest(primary: KubernetesObject): JsonPatchOperation[] {
  const uid = primary.metadata?.uid;
  return uid === undefined ? [] : [{ op: 'test', path: '/metadata/uid', value: uid }];
}

function bindToUid(intent: KubernetesObject, original: KubernetesObject): void {
  const uid = original.metadata?.uid;
  if (uid !== undefined) intent.metadata = { ...intent.metadata, uid };
}

/**
 * The JSON-patch operations that make `before` (the status the run read) into `after`, key by key
 * at the top level as a merge patch would: changed or new keys are set, keys gone are removed.
 */
export function statusChanges(before: unknown, after: unknown): JsonPatchOperation[] {
  if (!isPlainObject(before) || !isPlainObject(after)) return [{ op: 'add', path: '/status', value: after ?? {} }];
  const ops: JsonPatchOperation[] = [];
  for (const [key, value] of Object.entries(after))
    if (!isDeepStrictEqual(before[key], value)) ops.push({ op: 'add', path: `/status/${pointerToken(key)}`, value });
  for (const key of Object.keys(before)) if (!(key in after)) ops.push({ op: 'remove', path: `/status/${pointerToken(key)}` });
  return ops;
}

function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function statusOf(updated: KubernetesObject, original: KubernetesObject, observedGeneration: boolean): unknown {
  const status = (updated as { status?: unknown }).status;
  if (!observedGeneration) return status ?? {};
  const generation = original.metadata?.generation;
  const base = typeof status === 'object' && status !== null ? status : {};
  return generation === undefined ? base : { ...base, observedGeneration: generation };
}

function withoutServerMetadata<P extends KubernetesObject>(obj: P): P {
  const metadata: Record<string, unknown> = { ...(obj.metadata ?? {}) };
  for (const field of SERVER_METADATA) delete metadata[field];
  return { ...obj, metadata };
}

function withoutStatus<P extends KubernetesObject>(obj: P): P {
  const { status: _status, ...rest } = obj as P & { status?: unknown };
  return rest as P;
}

function ensureFinalizer(obj: KubernetesObject, finalizerName: string): void {
  const metadata = (obj.metadata ??= {});
  const finalizers = metadata.finalizers ?? [];
  if (!finalizers.includes(finalizerName)) metadata.finalizers = [...finalizers, finalizerName];
}
