/**
 * RFC 6902 JSON Patch from two JSON documents: what a mutating webhook answers. The toolkit's other
 * diff (`createMergePatch`) writes JSON merge patches, which admission does not accept.
 */
import { isRecord, jsonEqual, pointerSegment } from '../core/index.js';
import type { JsonPatchOperation } from '../kube/index.js';

/**
 * The operations that turn `before` into `after`, applied in order. Objects are diffed key by key;
 * an array that changed is diffed by index when only its tail grew or shrank, else replaced whole
 * (a smaller patch than a per-element diff would give is not worth reordering risks). Keys whose
 * value is `undefined` count as absent, as in JSON.
 */
export function jsonPatch(before: unknown, after: unknown, path = ''): JsonPatchOperation[] {
  if (jsonEqual(before, after)) return [];
  if (isRecord(before) && isRecord(after) && !Array.isArray(before) && !Array.isArray(after)) {
    const ops: JsonPatchOperation[] = [];
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
      const ops: JsonPatchOperation[] = [];
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

/**
 * Applies RFC 6902 operations to a copy of `doc` (for tests and round-trip checks); `jsonPatch`
 * writes only add, remove and replace, but a patch from elsewhere may hold move, copy and test.
 */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = clone(doc);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
      case 'replace':
        root = put(root, op.path, clone(op.value), op.op);
        break;
      case 'remove':
        root = take(root, op.path).root;
        break;
      case 'test':
        if (!jsonEqual(read(root, op.path), op.value)) throw new Error(`applyJsonPatch: test at ${op.path} failed`);
        break;
      case 'move': {
        const taken = take(root, op.from);
        root = put(taken.root, op.path, taken.value, 'add');
        break;
      }
      case 'copy':
        root = put(root, op.path, clone(read(root, op.from)), 'add');
        break;
    }
  }
  return root;
}

function segmentsOf(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`applyJsonPatch: ${path} is not a JSON pointer`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function child(parent: unknown, segment: string, path: string): unknown {
  const value =
    (isRecord(parent) || Array.isArray(parent)) && Object.hasOwn(parent, segment)
      ? (parent as Record<string, unknown>)[segment]
      : undefined;
  if (value === undefined) throw new Error(`applyJsonPatch: ${path} does not exist`);
  return value;
}

function read(root: unknown, path: string): unknown {
  return segmentsOf(path).reduce((node, segment) => child(node, segment, path), root);
}

/** The container that holds the last segment of `path`, and that segment. */
function parentOf(root: unknown, path: string): { parent: Record<string, unknown> | unknown[]; last: string } {
  const segments = segmentsOf(path);
  const last = segments.pop() as string;
  const parent = segments.reduce((node, segment) => child(node, segment, path), root);
  if (!isRecord(parent) && !Array.isArray(parent)) throw new Error(`applyJsonPatch: ${path} does not exist`);
  return { parent, last };
}

function put(root: unknown, path: string, value: unknown, op: 'add' | 'replace'): unknown {
  if (path === '') return value;
  const { parent, last } = parentOf(root, path);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (op === 'add') parent.splice(index, 0, value);
    else parent[index] = value;
  } else parent[last] = value;
  return root;
}

function take(root: unknown, path: string): { root: unknown; value: unknown } {
  if (path === '') throw new Error('applyJsonPatch: cannot remove the whole document');
  const { parent, last } = parentOf(root, path);
  const value = child(parent, last, path);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
  return { root, value };
}
