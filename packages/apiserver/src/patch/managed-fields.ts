/**
 * The `metadata.managedFields` codec: manager entries keyed as Kubernetes keys them (Apply by
 * manager and subresource, Update also by apiVersion), decoded from and encoded to FieldsV1 in
 * Kubernetes' order, and the metadata fields no manager ever owns. The algorithms that change
 * ownership (server-side apply, update tracking) are in `apply.ts`.
 */
import { FieldSet, formatPath } from './field-set.js';
import { deepClone, isJsonObject, type JsonObject, type JsonValue } from '../base/json.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/** metadata fields that are never owned by anyone. */
export const UNTRACKED_METADATA_FIELDS: readonly string[] = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/** Of those, the ones an applied configuration may set (the rest are ignored in it). */
export const APPLIABLE_IDENTITY_FIELDS = new Set(['name', 'namespace']);

/** Decodes FieldsV1 into member paths printed like `.spec.containers[name="web"].image` (for tests and debugging). */
export function describeFieldsV1(fieldsV1: JsonObject): string[] {
  return FieldSet.fromFieldsV1(fieldsV1)
    .paths()
    .map((path) => formatPath(path));
}

// ---------------------------------------------------------------------------------------------
// Manager entries

export interface ManagerEntry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
}

export type Managers = Map<string, ManagerEntry>;

export function entryKey(e: { manager: string; operation: string; apiVersion: string; subresource?: string | undefined }): string {
  return JSON.stringify(
    e.operation === 'Apply' ? [e.manager, 'Apply', e.subresource ?? ''] : [e.manager, e.operation, e.apiVersion, e.subresource ?? ''],
  );
}

/**
 * Reads metadata.managedFields. 'lenient' skips malformed entries (for what we stored);
 * 'strict' throws on any malformed entry (for what a client sent).
 */
export function decodeEntries(value: unknown, mode: 'lenient' | 'strict'): Managers {
  const managers: Managers = new Map();
  if (value === undefined || value === null) return managers;
  if (!Array.isArray(value)) {
    if (mode === 'strict') throw new Error('managedFields must be a list');
    return managers;
  }
  value.forEach((raw, index) => {
    try {
      const entry = decodeEntry(raw);
      const key = entryKey(entry);
      const existing = managers.get(key);
      managers.set(key, existing ? { ...entry, set: existing.set.union(entry.set) } : entry);
    } catch (err) {
      if (mode === 'strict') throw new Error(`managedFields[${index}]: ${(err as Error).message}`);
    }
  });
  return managers;
}

function decodeEntry(raw: unknown): ManagerEntry {
  if (!isJsonObject(raw)) throw new Error('must be an object');
  const text = (field: string): string => {
    const v = raw[field];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(`${field} must be a string`);
    return v;
  };
  const fieldsType = text('fieldsType');
  if (fieldsType !== '' && fieldsType !== 'FieldsV1') throw new Error(`fieldsType must be FieldsV1, got ${JSON.stringify(fieldsType)}`);
  const fieldsV1 = raw['fieldsV1'];
  const set = fieldsV1 === undefined || fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(fieldsV1);
  const time = text('time');
  const subresource = text('subresource');
  return {
    manager: text('manager'),
    operation: text('operation'),
    apiVersion: text('apiVersion'),
    ...(time ? { time } : {}),
    ...(subresource ? { subresource } : {}),
    set,
  };
}

export function encodeEntries(managers: Managers, now: string): ManagedFieldsEntry[] {
  const seconds = (time: string | undefined) => {
    const ms = time === undefined ? NaN : Date.parse(time);
    return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
  };
  return [...managers.values()]
    .sort(
      (a, b) =>
        compareText(a.operation, b.operation) ||
        seconds(a.time) - seconds(b.time) ||
        compareText(a.manager, b.manager) ||
        compareText(a.apiVersion, b.apiVersion) ||
        compareText(a.subresource ?? '', b.subresource ?? ''),
    )
    .map((e) => ({
      manager: e.manager,
      operation: e.operation as 'Apply' | 'Update',
      apiVersion: e.apiVersion,
      time: e.time ?? now,
      fieldsType: 'FieldsV1' as const,
      fieldsV1: e.set.toFieldsV1(),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
}

export function dropEmpty(managers: Managers): void {
  for (const [key, entry] of managers) if (entry.set.isEmpty()) managers.delete(key);
}

export function unionOf(managers: Managers): FieldSet {
  let all = new FieldSet();
  for (const entry of managers.values()) all = all.union(entry.set);
  return all;
}

// ---------------------------------------------------------------------------------------------
// Object helpers

export function metadataOf(obj: JsonObject | undefined): JsonObject | undefined {
  const metadata = obj?.['metadata'];
  return isJsonObject(metadata) ? metadata : undefined;
}

/** A deep copy without metadata.managedFields. */
export function withoutManagedFields(obj: JsonObject): JsonObject {
  const copy = deepClone(obj);
  const metadata = metadataOf(copy);
  if (metadata) delete metadata['managedFields'];
  return copy;
}

/** A deep copy of an applied config without the identity fields apply ignores. */
export function withoutIgnoredIdentity(applied: JsonObject): JsonObject {
  const copy = deepClone(applied);
  const metadata = metadataOf(copy);
  if (metadata) {
    for (const field of UNTRACKED_METADATA_FIELDS) if (!APPLIABLE_IDENTITY_FIELDS.has(field)) delete metadata[field];
  }
  return copy;
}

export function setManagedFields(obj: JsonObject, entries: ManagedFieldsEntry[]): void {
  let metadata = metadataOf(obj);
  if (entries.length === 0) {
    if (metadata) delete metadata['managedFields'];
    return;
  }
  if (!metadata) {
    metadata = {};
    obj['metadata'] = metadata;
  }
  metadata['managedFields'] = entries as unknown as JsonValue[];
}

// ---------------------------------------------------------------------------------------------
// Typed walks
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
