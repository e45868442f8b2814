/**
 * The rules of an update that do not depend on the server's state, in the order commitUpdate
 * applies them: which part of the object a write may change (the main resource, status or
 * finalize), the metadata the server owns, finalizers on an object being deleted, generation.
 */
import { fieldForbidden, type StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, deepEqual, isJsonObject } from '../base/json.js';
import { finalizersOf, isBeingDeleted, metaOf, readMeta, resourceVersionOf } from '../base/meta.js';
import type { ResourceType } from './registry.js';

/**
 * The object a write to `subresource` leaves: a status write changes only status (a custom
 * resource: status and managedFields), a finalize write only spec.finalizers, and a write to the
 * main resource of a type with a status subresource keeps the stored status. Mutates `candidate`.
 */
export function writtenPart(
  type: ResourceType,
  statusSubresource: boolean,
  old: JsonObject,
  candidate: JsonObject,
  subresource: string | undefined,
): JsonObject {
  if (subresource === 'status') {
    if (!type.custom) {
      for (const path of type.statusKeeps) copyPath(candidate, old, path);
      return candidate;
    }
    const fresh = deepClone(old);
    const managed = readMeta(candidate).managedFields;
    if (managed !== undefined) metaOf(fresh).managedFields = managed;
    if (candidate.status === undefined) delete fresh.status;
    else fresh.status = candidate.status;
    return fresh;
  }
  if (subresource === 'finalize') {
    const fresh = deepClone(old);
    const finalizers = isJsonObject(candidate.spec) ? candidate.spec.finalizers : undefined;
    const spec = isJsonObject(fresh.spec) ? fresh.spec : (fresh.spec = {});
    if (finalizers === undefined) delete spec.finalizers;
    else spec.finalizers = finalizers;
    return fresh;
  }
  // A binding (pods/binding) writes the PodScheduled condition with spec.nodeName, as one update.
  if (statusSubresource && subresource !== 'binding') {
    if (old.status === undefined) delete candidate.status;
    else candidate.status = old.status;
  }
  return candidate;
}

/** Puts back the metadata only the server sets (uid, times, generation, name, namespace, resourceVersion); returns obj's metadata. */
export function keepServerOwnedMeta(type: ResourceType, obj: JsonObject, old: JsonObject): JsonObject {
  const meta = metaOf(obj);
  const oldMeta = readMeta(old);
  for (const key of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
    if (oldMeta[key] === undefined) delete meta[key];
    else meta[key] = oldMeta[key];
  }
  meta.name = oldMeta.name ?? null;
  if (type.namespaced) meta.namespace = oldMeta.namespace ?? null;
  else delete meta.namespace;
  delete meta.selfLink;
  meta.resourceVersion = resourceVersionOf(old);
  return meta;
}

/** An object being deleted takes no new finalizer. */
export function finalizersAddedWhileDeleting(old: JsonObject, obj: JsonObject): StatusCause[] {
  if (!isBeingDeleted(old)) return [];
  const added = finalizersOf(obj).filter((f) => !finalizersOf(old).includes(f));
  if (!added.length) return [];
  return [
    fieldForbidden(
      'metadata.finalizers',
      `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
    ),
  ];
}

/** The generation after the update, or undefined when it stays: a built-in's spec changed, or a custom resource's content. */
export function nextGeneration(type: ResourceType, statusSubresource: boolean, old: JsonObject, obj: JsonObject): number | undefined {
  const changed = type.custom
    ? !deepEqual(crGenerationContent(old, statusSubresource), crGenerationContent(obj, statusSubresource))
    : type.tracksGeneration && !deepEqual(obj.spec, old.spec);
  return changed ? Number(readMeta(old).generation ?? 0) + 1 : undefined;
}

/** Content that bumps a custom resource's generation: everything but metadata (and status, with a status subresource). */
function crGenerationContent(obj: JsonObject, statusSubresource: boolean): JsonObject {
  const { metadata: _m, ...rest } = obj;
  if (statusSubresource) delete rest.status;
  return rest;
}

function copyPath(target: JsonObject, source: JsonObject, path: readonly string[]): void {
  let src: JsonValue | undefined = source;
  for (const key of path) src = isJsonObject(src) ? src[key] : undefined;
  let cur: JsonObject = target;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (isJsonObject(next)) cur = next;
    else {
      if (src === undefined) return;
      cur = cur[key] = {};
    }
  }
  const last = path[path.length - 1];
  if (src === undefined) delete cur[last];
  else cur[last] = deepClone(src);
}
