/**
 * RFC 6902 JSON Patch from two JSON documents: what a mutating webhook answers. The toolkit's other
 * diff (`createMergePatch`) writes JSON merge patches, which admission does not accept.
 */
import { isRecord } from '../core/index.js';

/** One RFC 6902 operation as a mutating webhook sends it (only the three a diff needs). */
export type JsonPatchOp =
  | { readonly op: 'add'; readonly path: string; readonly value: unknown }
  | { readonly op: 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** RFC 6901: `~` and `/` inside a key are escaped. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isRecord(a) && isRecord(b) && !Array.isArray(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    const other = Object.keys(b).filter((k) => b[k] !== undefined);
    return keys.length === other.length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The operations that turn `before` into `after`, applied in order. Objects are diffed key by key;
 * an array that changed is diffed by index when only its tail grew or shrank, else replaced whole
 * (a smaller patch than a per-element diff would give is not worth reordering risks). Keys whose
 * value is `undefined` count as absent, as in JSON.
 */
export function jsonPatch(before: unknown, after: unknown, path = ''): JsonPatchOp[] {
  if (jsonEqual(before, after)) return [];
  if (isRecord(before) && isRecord(after) && !Array.isArray(before) && !Array.isArray(after)) {
    const ops: JsonPatchOp[] = [];
    for (const key of Object.keys(before)) {
      if (before[key] !== undefined && after[key] === undefined) ops.push({ op: 'remove', path: `${path}/${pointerSegment(key)}` });
    }
    for (const key of Object.keys(after)) {
      const value = after[key];
      if (value === undefined) continue;
      const at = `${path}/${pointerSegment(key)}`;
      if (before[key] === undefined) ops.push({ op: 'add', path: at, value: clone(value) });
      else ops.push(...jsonPatch(before[key], value, at));
    }
    return ops;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    const prefixSame = before.slice(0, common).every((v, i) => jsonEqual(v, after[i]));
    if (prefixSame) {
      const ops: JsonPatchOp[] = [];
      // Removed from the end backwards, so each index is still valid when its turn comes.
      for (let i = before.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
      for (let i = common; i < after.length; i++) ops.push({ op: 'add', path: `${path}/-`, value: clone(after[i]) });
      return ops;
    }
  }
  return [{ op: 'replace', path, value: clone(after) }];
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Applies operations of `jsonPatch` to a copy of `doc` (for tests and round-trip checks). */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  let root = clone(doc);
  for (const op of ops) {
    const segments =
      op.path === ''
        ? []
        : op.path
            .slice(1)
            .split('/')
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (segments.length === 0) {
      if (op.op === 'remove') throw new Error('applyJsonPatch: cannot remove the whole document');
      root = clone(op.value);
      continue;
    }
    const last = segments.pop() as string;
    let parent: unknown = root;
    for (const s of segments) {
      parent = (parent as Record<string, unknown>)[s];
      if (parent === null || typeof parent !== 'object') throw new Error(`applyJsonPatch: ${op.path} does not exist`);
    }
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (op.op === 'add') parent.splice(index, 0, clone(op.value));
      else if (op.op === 'remove') parent.splice(index, 1);
      else parent[index] = clone(op.value);
    } else {
      const record = parent as Record<string, unknown>;
      if (op.op === 'remove') delete record[last];
      else record[last] = clone(op.value);
    }
  }
  return root;
}
