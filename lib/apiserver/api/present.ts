import { convertEvent } from './events.js';
import type { JsonObject } from './json.js';

/**
 * The object as a client of `apiVersion` sees it: an Event converts between its core and
 * events.k8s.io forms; the versions of other kinds differ only in apiVersion (CRD conversion None).
 */
export function present(obj: JsonObject, apiVersion: string): JsonObject {
  if (obj.apiVersion === apiVersion) return obj;
  return convertEvent(obj, apiVersion) ?? { ...obj, apiVersion };
}
