/**
 * Secret data never reaches a log line, an Event or a status message: objects are written as
 * references (kind, namespace, name), and the values of a Secret a request carried are blanked in
 * the error that request got (a server may echo them: a 422, a policy's message).
 */
import { isRecord } from './meta.js';

/** What stands where a Secret's value was. */
export const REDACTED = '[redacted]';

/** What names an object in a log line: never its content. */
export interface ObjectReference {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** A Kubernetes object (a kind and metadata), not a Status (whose message is what an error says). */
export function isKubernetesObject(value: unknown): value is Record<string, unknown> & { kind: string; metadata: Record<string, unknown> } {
  return isRecord(value) && typeof value['kind'] === 'string' && value['kind'] !== 'Status' && isRecord(value['metadata']);
}

/** The reference of an object: apiVersion, kind, namespace and name, nothing of its content. */
export function objectReference(object: Record<string, unknown> & { kind: string; metadata: Record<string, unknown> }): ObjectReference {
  const { apiVersion } = object;
  const { namespace, name } = object.metadata;
  return {
    ...(typeof apiVersion === 'string' ? { apiVersion } : {}),
    kind: object.kind,
    ...(typeof namespace === 'string' && namespace !== '' ? { namespace } : {}),
    ...(typeof name === 'string' ? { name } : {}),
  };
}

/** Shorter values are left: blanking them would blank ordinary words of a message. */
const MIN_SECRET_LENGTH = 4;

/**
 * The values of a Secret's `data` and `stringData` in each form a message may echo them: as sent
 * (base64 for data), decoded, base64-encoded (stringData), and JSON-escaped. Empty for anything
 * that is not a Secret, or a patch of one (a body with `data` or `stringData` when `kind` says Secret or is absent).
 */
export function secretValues(object: unknown, assumeSecret = false): string[] {
  // A JSON patch of a Secret: the values its operations put under /data and /stringData.
  if (Array.isArray(object) && assumeSecret) {
    const data: Record<string, unknown> = {};
    const stringData: Record<string, unknown> = {};
    object.forEach((op: unknown, i) => {
      if (!isRecord(op) || typeof op['path'] !== 'string') return;
      const [, field, key] = op['path'].split('/');
      const into = field === 'data' ? data : field === 'stringData' ? stringData : undefined;
      if (into === undefined) return;
      if (key !== undefined) into[`${i}`] = op['value'];
      else if (isRecord(op['value'])) Object.entries(op['value']).forEach(([k, v]) => (into[`${i}/${k}`] = v));
    });
    return secretValues({ kind: 'Secret', data, stringData });
  }
  if (!isRecord(object) || (object['kind'] !== 'Secret' && !(assumeSecret && object['kind'] === undefined))) return [];
  const values = new Set<string>();
  const add = (value: string): void => {
    if (value.length < MIN_SECRET_LENGTH) return;
    values.add(value);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) values.add(escaped);
  };
  for (const [field, encoded] of [
    ['data', true],
    ['stringData', false],
  ] as const) {
    const entries = object[field];
    if (!isRecord(entries)) continue;
    for (const value of Object.values(entries)) {
      if (typeof value !== 'string') continue;
      add(value);
      if (encoded) add(Buffer.from(value, 'base64').toString('utf8'));
      else add(Buffer.from(value, 'utf8').toString('base64'));
    }
  }
  // The longest first: a value that contains another is blanked whole.
  return [...values].sort((a, b) => b.length - a.length);
}

/** The values of every Secret found within `value` (objects, arrays, Maps and Sets, `depth` levels deep). */
export function secretValuesWithin(value: unknown, depth = 8, seen = new WeakSet<object>()): string[] {
  if (typeof value !== 'object' || value === null || depth < 0 || seen.has(value)) return [];
  seen.add(value);
  if (isRecord(value) && value['kind'] === 'Secret') return secretValues(value);
  const children = value instanceof Map || value instanceof Set ? [...value.values()] : Object.values(value);
  const found = new Set(children.flatMap((child) => secretValuesWithin(child, depth - 1, seen)));
  return [...found].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each value blanked. */
export function redactText(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
  return out;
}

/** A copy of a JSON value with each value blanked in every string in it, keys too (`depth` levels deep). */
export function redactJson(value: unknown, values: readonly string[], depth = 32): unknown {
  if (values.length === 0) return value;
  if (typeof value === 'string') return redactText(value, values);
  if (depth <= 0 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => redactJson(v, values, depth - 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k, values), redactJson(v, values, depth - 1)]));
}
