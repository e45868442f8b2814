/**
 * Admission around the synchronous write path (api/write-path.ts, through the verbs). Webhooks answer over the network,
 * while a write is decoded, defaulted, validated and stored in one synchronous step; so a write
 * that a webhook may see runs in phases, each through the same core code:
 * 1. a dry run stops at the admission point (after decoding and defaulting, before validation)
 *    and hands over the object and the stored one;
 * 2. the mutating webhooks change that object;
 * 3. a dry run with the mutated object in its place gives the object as it would be stored
 *    (validated: an invalid mutation is the 422 the real server gives);
 * 4. the validating webhooks see that object;
 * 5. the write itself, with the mutated object, unless the stored object changed meanwhile: then
 *    all over again (at most MAX_ATTEMPTS), as the real server's update retries.
 * Writes no webhook's rules cover take the direct path.
 */
import type { WriteOptions, WriteResult } from '../api/write-path.js';
import { ApiError, badRequest, conflict, MODIFIED_CONFLICT } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, isJsonObject } from '../base/json.js';
import type { DeleteAdmission } from '../api/admission-port.js';
import { nameOf, namespaceOf, resourceVersionOf } from '../base/meta.js';
import { present } from '../api/present.js';
import { apiVersionOf, type Resolved } from '../api/registry.js';
import { serviceAccountUser } from '../auth/index.js';
import { replaceWithMutated, type AdmissionRequest, type AdmissionWebhooks } from './webhooks.js';

const MAX_ATTEMPTS = 3;

/** Thrown from the admission hook to end phase 1 once the object is in hand. */
const CAPTURED = Symbol('captured');
/** Thrown when the stored object changed between the phases. */
const STALE = Symbol('stale');

type Run = (opts: WriteOptions) => WriteResult;

/**
 * A create, update or patch through admission. `run` performs the write with the options given
 * (the core call the handler would make); `opts` are the request's.
 */
export async function admittedWrite(
  webhooks: AdmissionWebhooks,
  req: AdmissionRequest,
  opts: WriteOptions,
  run: Run,
): Promise<WriteResult> {
  if (!webhooks.mayApply(req)) return run(opts);
  const check = opts.admit;
  for (let attempt = 1; ; attempt++) {
    let captured: { obj: JsonObject; old: JsonObject | undefined } | undefined;
    try {
      run({
        ...opts,
        dryRun: true,
        warnings: [],
        admit: (obj, old) => {
          check?.(obj, old);
          captured = { obj: deepClone(obj), old: old && deepClone(old) };
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel caught by this module, not an error that leaves it
          throw CAPTURED;
        },
      });
    } catch (err) {
      if (err !== CAPTURED) throw err;
    }
    // A write that never reached admission (none is known today) is written as it is.
    if (!captured) return run(opts);
    const { old } = captured;
    const operation = old === undefined ? 'CREATE' : req.operation;
    // A create from generateName: webhooks see no name yet, as on the real server.
    const generated = operation === 'CREATE' && req.name === '';
    // Mutating webhooks see a create before the server draws its identity, as on the real server.
    const shown = operation === 'CREATE' ? withoutIdentity(captured.obj, generated) : captured.obj;
    const request: AdmissionRequest = { ...req, operation, name: generated ? '' : req.name };
    const warnings: string[] = [];
    const mutated = (await webhooks.mutate(request, shown, old, warnings)) ?? shown;
    /** The name, uid and creation time the preview drew: the write stores what was validated. */
    let identity: JsonObject | undefined;
    const swap = (obj: JsonObject, current: JsonObject | undefined): void => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel caught by this module, not an error that leaves it
      if ((current && resourceVersionOf(current)) !== (old && resourceVersionOf(old))) throw STALE;
      const name = (obj.metadata as JsonObject | undefined)?.name;
      replaceWithMutated(obj, mutated);
      const meta = obj.metadata as JsonObject;
      if (generated) meta.name = name ?? null;
      if (identity) Object.assign(meta, identity);
      check?.(obj, current);
    };
    try {
      const preview = run({ ...opts, dryRun: true, warnings: [], admit: swap });
      const previewMeta = (preview.body.metadata ?? {}) as JsonObject;
      if (operation === 'CREATE') identity = pick(previewMeta, generated ? ['name', ...IDENTITY] : IDENTITY);
      await webhooks.validate({ ...request, name: generated ? String(previewMeta.name ?? '') : request.name }, preview.body, old, warnings);
      const result = opts.dryRun ? preview : run({ ...opts, admit: swap });
      opts.warnings?.push(...warnings);
      return result;
    } catch (err) {
      // A generated name taken since the preview: drawn again, and admitted again (createWithGenerateNameRetry).
      const nameTaken = generated && err instanceof ApiError && err.reason === 'AlreadyExists';
      if (err !== STALE && !nameTaken) throw err;
      if (attempt >= MAX_ATTEMPTS)
        throw nameTaken ? err : conflict({ group: req.resolved.type.group, plural: req.resolved.type.plural }, req.name, MODIFIED_CONFLICT);
    }
  }
}

/** What the server draws for a new object, besides a generated name. */
const IDENTITY = ['uid', 'creationTimestamp'];

/** A create as the mutating webhooks see it: no uid or creation time (nor a generated name) yet. */
function withoutIdentity(obj: JsonObject, generated: boolean): JsonObject {
  const copy = deepClone(obj);
  if (!isJsonObject(copy.metadata)) return copy;
  for (const key of generated ? ['name', ...IDENTITY] : IDENTITY) delete copy.metadata[key];
  return copy;
}

function pick(meta: JsonObject, keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) if (meta[key] !== undefined) out[key] = meta[key];
  return out;
}

/** A delete through admission: the webhooks see the stored object as oldObject. */
export async function admittedDelete<T>(
  webhooks: AdmissionWebhooks,
  req: AdmissionRequest,
  stored: JsonObject | undefined,
  run: () => T,
): Promise<T> {
  if (stored === undefined || !webhooks.mayApply(req)) return run();
  const warnings: string[] = [];
  await webhooks.mutate(req, undefined, stored, warnings);
  await webhooks.validate(req, undefined, stored, warnings);
  return run();
}

/**
 * A DELETE of the object `current` reads, through admission, that deletes only what admission saw:
 * one changed or replaced while the webhooks decided is admitted again, as the real store runs a
 * delete's validation again when the object changed under it.
 */
export async function admittedDeleteOfCurrent<T>(
  webhooks: AdmissionWebhooks,
  req: AdmissionRequest,
  current: () => JsonObject | undefined,
  run: () => T,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const seen = current();
    const seenVersion = seen && resourceVersionOf(seen);
    try {
      return await admittedDelete(webhooks, req, seen, () => {
        const now = current();
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel caught by this module, not an error that leaves it
        if ((now && resourceVersionOf(now)) !== seenVersion) throw STALE;
        return run();
      });
    } catch (err) {
      if (err !== STALE) throw err;
      if (attempt >= MAX_ATTEMPTS)
        throw conflict({ group: req.resolved.type.group, plural: req.resolved.type.plural }, req.name, MODIFIED_CONFLICT);
    }
  }
}

/** The kind a scale subresource takes, whatever the resource (the real server's autoscaling/v1 Scale). */
export const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/**
 * A write through a resource's scale subresource, admitted as the real server admits it: the
 * webhooks see the Scale (the current one as oldObject), mutating webhooks may change it, and what
 * they made is written only if the object did not change meanwhile (else admitted again).
 * `write(change, dryRun)` is the scale write; `current()` reads the current Scale.
 */
export async function admittedScale(
  webhooks: AdmissionWebhooks,
  req: AdmissionRequest,
  current: () => JsonObject,
  change: (scale: JsonObject) => JsonValue,
  write: (change: (scale: JsonObject) => JsonValue, dryRun: boolean) => WriteResult,
  warnings: string[] | undefined,
): Promise<WriteResult> {
  const request: AdmissionRequest = { ...req, objectKind: SCALE_KIND };
  if (!webhooks.mayApply(request)) return write(change, req.dryRun);
  for (let attempt = 1; ; attempt++) {
    const old = current();
    const preview = write(change, true);
    const seen: string[] = [];
    const mutated = (await webhooks.mutate(request, preview.body, old, seen)) ?? preview.body;
    await webhooks.validate(request, mutated, old, seen);
    const meta = isJsonObject(mutated.metadata) ? mutated.metadata : {};
    // Pinned to the Scale admission saw: a change meanwhile is a conflict, and admitted again.
    const pinned: JsonObject = { ...mutated, metadata: { ...meta, resourceVersion: resourceVersionOf(old) } };
    try {
      const result = write(() => pinned, req.dryRun);
      warnings?.push(...seen);
      return result;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/** The kinds of object the create subresources take (pods/binding, serviceaccounts/token). */
export const SUBRESOURCE_KINDS: Record<string, { group: string; version: string; kind: string }> = {
  binding: { group: '', version: 'v1', kind: 'Binding' },
  token: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
};

/**
 * A create through a subresource that takes an object of its own (a pod's Binding, a
 * ServiceAccount's TokenRequest), admitted as the real server admits it: the webhooks see that
 * object (no oldObject), mutating ones may change it, and the write gets what they made. A body
 * that is no object is refused before anything, as the real server's decoding refuses it.
 */
export async function admittedSubresourceCreate<T>(
  webhooks: AdmissionWebhooks,
  req: AdmissionRequest,
  body: JsonValue,
  run: (body: JsonObject) => T,
  warnings?: string[],
): Promise<T> {
  const objectKind = SUBRESOURCE_KINDS[req.subresource];
  if (!objectKind) throw new Error(`no object kind for the subresource ${req.subresource}`);
  if (!isJsonObject(body)) throw badRequest(`the body of the request must be a ${objectKind.kind} object`);
  const request: AdmissionRequest = { ...req, objectKind };
  if (!webhooks.mayApply(request)) return run(body);
  const shown: JsonObject = { ...body, apiVersion: apiVersionOf(objectKind.group, objectKind.version), kind: objectKind.kind };
  const seen: string[] = [];
  const mutated = (await webhooks.mutate(request, shown, undefined, seen)) ?? shown;
  await webhooks.validate(request, mutated, undefined, seen);
  const result = run(mutated);
  warnings?.push(...seen);
  return result;
}

/**
 * The deletes of the server's own controllers (the garbage collector, the namespace controller)
 * through admission, as the real ones delete through the API: a DELETE of the stored object by
 * the kube-system ServiceAccount the controller runs as.
 */
export function controllerDeletes(webhooks: AdmissionWebhooks): DeleteAdmission {
  const request = (r: Resolved, obj: JsonObject, controller: string): AdmissionRequest => ({
    operation: 'DELETE',
    resolved: r,
    subresource: '',
    namespace: r.type.namespaced ? namespaceOf(obj) : '',
    name: nameOf(obj),
    dryRun: false,
    user: serviceAccountUser('kube-system', controller, undefined),
    options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Background' },
  });
  return {
    covers: (r, obj) => webhooks.mayApply(request(r, obj, '')),
    admit: async (r, obj, controller) => {
      try {
        await admittedDelete(webhooks, request(r, obj, controller), present(obj, r.apiVersion), () => undefined);
        return undefined;
      } catch (err) {
        if (err instanceof ApiError) return err;
        throw err;
      }
    },
  };
}
