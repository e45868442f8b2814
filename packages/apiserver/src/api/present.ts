/** An object as a client reads it, in the apiVersion it asked for (an Event converted between its groups, a custom resource pruned to that version's schema). */
import { asVersion } from './crd-schema.js';
import { convertEvent } from './events.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import type { Resolved } from './registry.js';

/**
 * The object as a client of `apiVersion` sees it: an Event converts between its core and
 * events.k8s.io forms; the versions of other kinds differ only in apiVersion, except that custom
 * resources are pruned to (and defaulted by) the version's `schema`, as CRD conversion None does
 * on the real server.
 */
export function present(obj: JsonObject, apiVersion: string, schema?: JsonValue): JsonObject {
  if (obj.apiVersion === apiVersion) return obj;
  return convertEvent(obj, apiVersion) ?? asVersion(obj, apiVersion, schema);
}

/** The schema a custom resource is presented with in the requested version (built-ins: none). */
export function versionSchema(r: Resolved): JsonValue | undefined {
  return r.type.custom ? r.version.schema : undefined;
}
