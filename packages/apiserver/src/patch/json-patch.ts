/**
 * RFC 6902 JSON Patch (`application/json-patch+json`) with RFC 6901 JSON pointers.
 *
 * - The whole patch document is validated before anything is applied: not an array, an operation
 *   that is not an object, an unknown `op`, a missing or non-string `path`/`from`, a missing
 *   `value`, or a malformed pointer (no leading "/", a "~" not followed by 0 or 1) is a
 *   PatchError 400.
 * - Operations are applied in order to a copy of the target; the first one that cannot apply
 *   (missing path or parent, array index out of range, `-` outside `add`, a move into its own
 *   child, a failed `test`) is a PatchError 422 and the target is left untouched.
 * - Array indices are decimal without leading zeros; `-` means "after the last element" and is
 *   accepted only as the last token of an `add`, `move` or `copy` destination. Negative indices
 *   are rejected (the Go library Kubernetes uses accepts them; RFC 6902 does not).
 * - Members other than op/path/from/value are ignored, as the RFC requires.
 * - As in the real server, a patch has at most 10,000 operations (413), and its `copy` operations
 *   together may add at most 3 MiB of JSON (422): forty copies of a value into itself otherwise
 *   double it forty times, out of a 2 KB request.
 */
import { PatchError } from './errors.js';
import { deepClone, deepEqual, hasOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from '../base/json.js';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** The real server's maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** The real server's JSONPatchMaxCopyBytes: what all `copy` operations of one patch may add. */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Validates a JSON Patch document (PatchError 400 naming the bad operation) and returns it typed. */
export function parseJsonPatch(operations: unknown): JsonPatchOperation[] {
  if (!Array.isArray(operations)) {
    throw new PatchError(400, `json patch must be an array of operations, got ${describe(operations)}`);
  }
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(413, `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`);
  }
  return operations.map((raw, index): JsonPatchOperation => {
    const where = `json patch operation ${index}`;
    if (!isJsonObject(raw)) throw new PatchError(400, `${where} must be an object, got ${describe(raw)}`);
    const op = raw['op'];
    if (typeof op !== 'string') throw new PatchError(400, `${where} has no "op" string`);
    if (!OPS.has(op)) {
      throw new PatchError(400, `${where} has unknown op "${op}" (expected add, remove, replace, move, copy or test)`);
    }
    const path = pointerMember(raw, 'path', `${where} (${op})`);
    switch (op) {
      case 'remove':
        return { op, path };
      case 'move':
      case 'copy':
        return { op, from: pointerMember(raw, 'from', `${where} (${op})`), path };
      default:
        if (!hasOwn(raw, 'value')) throw new PatchError(400, `${where} (${op}) has no "value"`);
        return { op: op as 'add' | 'replace' | 'test', path, value: raw['value'] };
    }
  });
}

/** Applies an RFC 6902 patch; returns a new document and never mutates `target`. */
export function applyJsonPatch(target: JsonValue, operations: unknown): JsonValue {
  const ops = parseJsonPatch(operations);
  let doc = deepClone(target);
  const copied = { bytes: 0 };
  ops.forEach((operation, index) => {
    const fail = (message: string): never => {
      throw new PatchError(
        422,
        `json patch operation ${index} (${operation.op} ${JSON.stringify(operation.path)}) cannot apply: ${message}`,
      );
    };
    doc = applyOne(doc, operation, fail, copied);
  });
  return doc;
}

/** Splits an RFC 6901 pointer into unescaped reference tokens; PatchError 400 if malformed. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new PatchError(400, `invalid JSON pointer ${JSON.stringify(pointer)}: must be empty or start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) {
        throw new PatchError(400, `invalid JSON pointer ${JSON.stringify(pointer)}: "~" must be followed by 0 or 1`);
      }
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/** Escapes one reference token for use in a JSON pointer ("~" → "~0", "/" → "~1"). */
export function escapeJsonPointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

type Fail = (message: string) => never;

/** A pointer member of an operation, checked for type and RFC 6901 syntax. */
function pointerMember(operation: JsonObject, member: 'path' | 'from', where: string): string {
  const pointer = operation[member];
  if (typeof pointer !== 'string') {
    throw new PatchError(400, `${where} needs a string "${member}", got ${hasOwn(operation, member) ? describe(pointer) : 'nothing'}`);
  }
  parseJsonPointer(pointer);
  return pointer;
}

function applyOne(doc: JsonValue, operation: JsonPatchOperation, fail: Fail, copied: { bytes: number }): JsonValue {
  const path = parseJsonPointer(operation.path);
  switch (operation.op) {
    case 'add':
      return add(doc, path, deepClone(operation.value), fail);
    case 'remove':
      remove(doc, path, fail);
      return doc;
    case 'replace': {
      if (path.length === 0) return deepClone(operation.value);
      const { parent, key } = locateExisting(doc, path, fail);
      setChild(parent, key, deepClone(operation.value));
      return doc;
    }
    case 'test': {
      const actual = get(doc, path, fail);
      if (!deepEqual(actual, operation.value)) {
        fail(`test failed: value is ${JSON.stringify(actual)}, expected ${JSON.stringify(operation.value)}`);
      }
      return doc;
    }
    case 'move': {
      const from = parseJsonPointer(operation.from);
      if (from.length < path.length && from.every((token, i) => token === path[i])) {
        fail(`cannot move ${JSON.stringify(operation.from)} into its own child`);
      }
      const value = get(doc, from, fail);
      if (from.length === path.length && from.every((token, i) => token === path[i])) return doc;
      remove(doc, from, fail);
      return add(doc, path, value, fail);
    }
    case 'copy': {
      const source = get(doc, parseJsonPointer(operation.from), fail);
      const left = MAX_JSON_PATCH_COPY_BYTES - copied.bytes;
      const size = jsonSizeWithin(source, left);
      if (size > left) {
        fail(`the accumulated size increase of copy is over ${MAX_JSON_PATCH_COPY_BYTES} bytes, the limit of all copies of one patch`);
      }
      copied.bytes += size;
      return add(doc, path, deepClone(source), fail);
    }
  }
}

function add(doc: JsonValue, path: string[], value: JsonValue, fail: Fail): JsonValue {
  if (path.length === 0) return value;
  const parent = get(doc, path.slice(0, -1), fail);
  const key = path[path.length - 1];
  if (Array.isArray(parent)) {
    if (key === '-') {
      parent.push(value);
    } else {
      const index = arrayIndex(key, fail);
      if (index > parent.length) fail(`index ${index} is out of range for an array of length ${parent.length}`);
      parent.splice(index, 0, value);
    }
  } else if (isJsonObject(parent)) {
    setOwn(parent, key, value);
  } else {
    fail(`parent ${describe(parent)} is not an object or array`);
  }
  return doc;
}

function remove(doc: JsonValue, path: string[], fail: Fail): void {
  if (path.length === 0) fail('cannot remove the whole document');
  const { parent, key } = locateExisting(doc, path, fail);
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key as string];
}

function locateExisting(
  doc: JsonValue,
  path: string[],
  fail: Fail,
): { parent: JsonObject; key: string } | { parent: JsonValue[]; key: number } {
  const parent = get(doc, path.slice(0, -1), fail);
  const token = path[path.length - 1];
  if (Array.isArray(parent)) {
    const index = arrayIndex(token, fail);
    if (index >= parent.length) fail(`index ${index} is out of range for an array of length ${parent.length}`);
    return { parent, key: index };
  }
  if (isJsonObject(parent)) {
    if (!hasOwn(parent, token)) fail(`path does not exist (no member ${JSON.stringify(token)})`);
    return { parent, key: token };
  }
  return fail(`parent ${describe(parent)} is not an object or array`);
}

function setChild(parent: JsonObject | JsonValue[], key: string | number, value: JsonValue): void {
  if (Array.isArray(parent)) parent[key as number] = value;
  else setOwn(parent, key as string, value);
}

function get(doc: JsonValue, path: string[], fail: Fail): JsonValue {
  let current = doc;
  for (let i = 0; i < path.length; i++) {
    const token = path[i];
    const at = () =>
      JSON.stringify(
        '/' +
          path
            .slice(0, i + 1)
            .map(escapeJsonPointerToken)
            .join('/'),
      );
    if (Array.isArray(current)) {
      const index = arrayIndex(token, fail);
      if (index >= current.length) fail(`path ${at()} does not exist (array has ${current.length} elements)`);
      current = current[index]!;
    } else if (isJsonObject(current)) {
      if (!hasOwn(current, token)) fail(`path ${at()} does not exist`);
      current = current[token]!;
    } else {
      fail(`path ${at()} does not exist (${describe(current)} has no members)`);
    }
  }
  return current;
}

/**
 * The length of `value` as compact JSON, counted only up to just past `limit`: the walk stops
 * there, so measuring a value too large to copy costs no more than the copy that is allowed.
 */
function jsonSizeWithin(value: JsonValue, limit: number): number {
  let size = 0;
  const stack: JsonValue[] = [value];
  while (stack.length > 0 && size <= limit) {
    const v = stack.pop()!;
    if (v === null || typeof v !== 'object') {
      size += typeof v === 'string' ? v.length + 2 : String(v).length;
    } else if (Array.isArray(v)) {
      size += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else {
      const keys = Object.keys(v);
      size += 2 + Math.max(0, keys.length - 1);
      for (const k of keys) {
        size += k.length + 3;
        stack.push(v[k]);
      }
    }
  }
  return size;
}

function arrayIndex(token: string, fail: Fail): number {
  if (token === '-') return fail('"-" (end of array) is only allowed as the destination of add, move or copy');
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return fail(`${JSON.stringify(token)} is not an array index`);
  return Number(token);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}
