/** Small helpers over object metadata and JSON paths, shared by the write path and controllers. */
import { randomUUID } from 'node:crypto';
import type { JsonObject, JsonValue } from './json.js';
import { isJsonObject, ownValue, setOwn } from './json.js';

/** The object's metadata, created if missing (only call on objects the caller owns). */
export function metaOf(obj: JsonObject): JsonObject {
  const m = obj.metadata;
  if (isJsonObject(m)) return m;
  const fresh: JsonObject = {};
  obj.metadata = fresh;
  return fresh;
}

export function readMeta(obj: JsonObject): JsonObject {
  return isJsonObject(obj.metadata) ? obj.metadata : {};
}

export function nameOf(obj: JsonObject): string {
  const n = readMeta(obj).name;
  return typeof n === 'string' ? n : '';
}

export function namespaceOf(obj: JsonObject): string {
  const n = readMeta(obj).namespace;
  return typeof n === 'string' ? n : '';
}

export function uidOf(obj: JsonObject): string {
  const u = readMeta(obj).uid;
  return typeof u === 'string' ? u : '';
}

export function resourceVersionOf(obj: JsonObject): string {
  const rv = readMeta(obj).resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

export function stringMap(v: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (isJsonObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

export function labelsOf(obj: JsonObject): Record<string, string> {
  return stringMap(readMeta(obj).labels);
}

export function finalizersOf(obj: JsonObject): string[] {
  const f = readMeta(obj).finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

export function isBeingDeleted(obj: JsonObject): boolean {
  return typeof readMeta(obj).deletionTimestamp === 'string';
}

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export function ownerRefsOf(obj: JsonObject): OwnerRef[] {
  const refs = readMeta(obj).ownerReferences;
  if (!Array.isArray(refs)) return [];
  const out: OwnerRef[] = [];
  for (const r of refs) {
    if (!isJsonObject(r) || typeof r.uid !== 'string') continue;
    out.push({
      apiVersion: String(r.apiVersion ?? ''),
      kind: String(r.kind ?? ''),
      name: String(r.name ?? ''),
      uid: r.uid,
      controller: r.controller === true,
      blockOwnerDeletion: r.blockOwnerDeletion === true,
    });
  }
  return out;
}

/** RFC 3339 with second precision, as Kubernetes writes metav1.Time. */
export function timestamp(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function newUid(): string {
  return randomUUID();
}

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` + 5 random characters, the prefix cut so the name fits 63 characters. */
export function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return prefix.slice(0, 58) + suffix;
}

/** The value at a dotted path (`spec.template.metadata`), or undefined. */
export function getPath(obj: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = obj;
  for (const key of path) {
    if (!isJsonObject(cur)) return undefined;
    cur = ownValue(cur, key);
  }
  return cur;
}

/** Sets (or with `undefined`, removes) the value at a path, creating objects on the way. */
export function setPath(obj: JsonObject, path: readonly string[], value: JsonValue | undefined): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    const next = ownValue(cur, key);
    if (isJsonObject(next)) cur = next;
    else {
      if (value === undefined) return;
      const fresh: JsonObject = {};
      setOwn(cur, key, fresh);
      cur = fresh;
    }
  }
  const last = path[path.length - 1];
  if (value === undefined) delete cur[last];
  else setOwn(cur, last, value);
}

/** Human age like kubectl prints it (`5s`, `3m2s`, `4h`, `2d`). */
export function age(created: JsonValue | undefined, now = Date.now()): string {
  if (typeof created !== 'string') return '<unknown>';
  const secs = Math.max(0, Math.floor((now - Date.parse(created)) / 1000));
  if (secs < 120) return `${secs}s`;
  const mins = Math.floor(secs / 60);
  if (mins < 10) return `${mins}m${secs % 60 ? `${secs % 60}s` : ''}`;
  if (mins < 180) return `${mins}m`;
  const hours = Math.floor(mins / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}
