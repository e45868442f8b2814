/**
 * The default matcher of Kubernetes dependents (DR2): does the actual object already hold what
 * the controller would apply? It compares only what the controller manages and tolerates what
 * the server and other managers add, so a matched object is never written again:
 *
 * 1. every field the desired object sets has that value in the actual one (desired ⊆ actual),
 *    ignoring metadata the server owns (uid, resourceVersion, generation, managedFields, ...) and
 *    `status` (an apply of the main resource does not write it);
 * 2. when the actual object has a server-side-apply entry of our field manager in
 *    `metadata.managedFields`, every field it owns is still in the desired object — a field we
 *    applied before and no longer want differs too (applying again removes it).
 *
 * Tolerances: an empty map or list in the desired object matches an absent one (the server omits
 * empty fields); `metadata.ownerReferences` and `metadata.finalizers` match when the desired
 * entries are among the actual ones (others may add theirs); other lists match item by item, in
 * order. Values the server normalizes (quantities such as `1000m` vs `1`) do not match: write
 * them the way the server answers them, or give the dependent its own `match`.
 */
import { isDeepStrictEqual } from 'node:util';
import { isRecord } from '../core/index.js';

/** Metadata only the server writes; a desired object that sets them is not compared on them. */
export const SERVER_OWNED_METADATA: readonly string[] = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

export interface KubernetesMatchOptions {
  /**
   * The field manager the controller applies with. When given and the actual object has an
   * Apply entry of that manager, fields it owns that the desired object no longer sets are a
   * mismatch.
   */
  readonly fieldManager?: string | undefined;
}

type JsonRecord = Record<string, unknown>;

function isEmpty(value: unknown): boolean {
  return (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.keys(value).length === 0);
}

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * Where the actual object differs from the desired one (a dotted path such as `data.key` or
 * `metadata.managedFields[f:data.f:old]`), or `undefined` when it matches. Useful in logs.
 */
export function kubernetesMismatch(actual: unknown, desired: unknown, options: KubernetesMatchOptions = {}): string | undefined {
  if (!isRecord(desired) || !isRecord(actual)) return isDeepStrictEqual(actual, desired) ? undefined : '(root)';
  const { status: _status, metadata, ...rest } = desired;
  const differs = subsetMismatch({ ...rest, ...(metadata === undefined ? {} : { metadata: comparableMetadata(metadata) }) }, actual, '');
  if (differs !== undefined) return differs;
  if (options.fieldManager === undefined) return undefined;
  const owned = appliedFieldsOf(actual, options.fieldManager);
  if (owned === undefined) return undefined;
  const missing = ownedFieldMissing(owned, desired, '');
  return missing === undefined ? undefined : `metadata.managedFields[${missing}]`;
}

/** `kubernetesMismatch(...) === undefined`: the default `match` of Kubernetes dependents. */
export function kubernetesMatches(actual: unknown, desired: unknown, options: KubernetesMatchOptions = {}): boolean {
  return kubernetesMismatch(actual, desired, options) === undefined;
}

function comparableMetadata(metadata: unknown): unknown {
  if (!isRecord(metadata)) return metadata;
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (!SERVER_OWNED_METADATA.includes(key)) out[key] = value;
  }
  return out;
}

/** Lists in metadata where others may add entries next to ours. */
const SUPERSET_LISTS = new Set(['metadata.ownerReferences', 'metadata.finalizers']);

function subsetMismatch(desired: unknown, actual: unknown, path: string): string | undefined {
  if (desired === undefined) return undefined;
  // `null` applies as "absent": the field must not be there.
  if (desired === null) return actual === undefined || actual === null ? undefined : path || '(root)';
  if (actual === undefined && isEmpty(desired)) return undefined;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual)) return path;
    if (SUPERSET_LISTS.has(path)) {
      const i = desired.findIndex((d) => !actual.some((a) => subsetMismatch(d, a, path) === undefined));
      return i < 0 ? undefined : `${path}[${i}]`;
    }
    if (desired.length !== actual.length) return path;
    for (let i = 0; i < desired.length; i++) {
      const differs = subsetMismatch(desired[i], actual[i], `${path}[${i}]`);
      if (differs !== undefined) return differs;
    }
    return undefined;
  }
  if (isRecord(desired)) {
    if (!isRecord(actual)) return path || '(root)';
    for (const [key, value] of Object.entries(desired)) {
      const differs = subsetMismatch(value, actual[key], childPath(path, key));
      if (differs !== undefined) return differs;
    }
    return undefined;
  }
  return isDeepStrictEqual(desired, actual) ? undefined : path;
}

/** The FieldsV1 set of the manager's Apply entry on the main resource, if there is one. */
export function appliedFieldsOf(actual: unknown, fieldManager: string): JsonRecord | undefined {
  const metadata = isRecord(actual) ? actual['metadata'] : undefined;
  const entries = isRecord(metadata) ? metadata['managedFields'] : undefined;
  if (!Array.isArray(entries)) return undefined;
  for (const entry of entries) {
    if (!isRecord(entry) || entry['manager'] !== fieldManager || entry['operation'] !== 'Apply') continue;
    if (entry['subresource'] !== undefined && entry['subresource'] !== '') continue;
    const fields = entry['fieldsV1'];
    return isRecord(fields) ? fields : undefined;
  }
  return undefined;
}

/**
 * The first field of a FieldsV1 set that the desired object does not set, or undefined. Path
 * elements: `f:<field>`, `k:<json key fields>` (a keyed list item), `v:<json value>` (a set
 * item), `i:<index>`; `.` marks the node itself.
 */
function ownedFieldMissing(fields: JsonRecord, desired: unknown, path: string): string | undefined {
  for (const [element, children] of Object.entries(fields)) {
    if (element === '.') continue;
    const here = childPath(path, element);
    const found = childOf(desired, element);
    if (!found.present) return here;
    if (isRecord(children) && Object.keys(children).some((k) => k !== '.')) {
      const missing = ownedFieldMissing(children, found.value, here);
      if (missing !== undefined) return missing;
    }
  }
  return undefined;
}

function childOf(node: unknown, element: string): { present: boolean; value?: unknown } {
  const kind = element.slice(0, 2);
  const rest = element.slice(2);
  switch (kind) {
    case 'f:':
      return isRecord(node) && node[rest] !== undefined ? { present: true, value: node[rest] } : { present: false };
    case 'k:': {
      const key = parseJson(rest);
      if (!Array.isArray(node) || !isRecord(key)) return { present: false };
      // A key field the desired item leaves out may have been defaulted by the server (e.g. protocol: TCP).
      const item: unknown = node.find(
        (candidate) =>
          isRecord(candidate) && Object.entries(key).every(([k, v]) => candidate[k] === undefined || isDeepStrictEqual(candidate[k], v)),
      );
      return item === undefined ? { present: false } : { present: true, value: item };
    }
    case 'v:': {
      const value = parseJson(rest);
      return Array.isArray(node) && node.some((item) => isDeepStrictEqual(item, value)) ? { present: true, value } : { present: false };
    }
    case 'i:': {
      const index = Number(rest);
      return Array.isArray(node) && Number.isInteger(index) && index < node.length
        ? { present: true, value: node[index] }
        : { present: false };
    }
    default:
      // An element kind this matcher does not know: do not call the object stale because of it.
      return { present: true };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
