/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds, after
 * k8s.io/apimachinery pkg/util/strategicpatch (server side: MergeParallelList and
 * IgnoreUnmatchedNulls on). Custom resources have no patch strategies; the server answers 415
 * for them before getting here.
 *
 * Behaviour:
 * - Maps merge recursively; `null` deletes a field (and is dropped where there is nothing to delete).
 * - Lists follow the TypeInfo (see schema.ts): keyed lists merge item by item on their patch
 *   merge key (containers and env by name, container ports by containerPort, volumeMounts by
 *   mountPath, ...); set lists (metadata.finalizers) take the union; other lists, and every list
 *   the TypeInfo does not describe, are replaced whole.
 * - Order of merged lists, as Kubernetes: items named in the patch come in patch order, items
 *   only on the server keep their relative order and are interleaved by their old positions.
 *   A consequence Kubernetes users know: an item the live list did not have is put FIRST
 *   (patching finalizers ["b"] onto ["a"] gives ["b","a"]).
 * - `$patch: replace` in a map: the map becomes the patch's content. In a keyed or set list, an
 *   element `{"$patch": "replace"}`: the list becomes the patch's other elements.
 * - `$patch: delete` in a map: the map becomes `{}` (as Kubernetes; use `null` to remove a
 *   field). In a keyed list, `{"name": "x", "$patch": "delete"}` removes the item with that key.
 * - `$patch: merge`: the default, accepted and ignored (Kubernetes rejects it inside lists).
 * - `$deleteFromPrimitiveList/<field>: [values]` removes those values from a scalar list; it
 *   is applied before the field's own patch.
 * - `$setElementOrder/<field>: [...]` is honoured: the merged list is ordered as it says (items
 *   given as `{<mergeKey>: value}` for keyed lists, bare values for scalar lists); items it does
 *   not name keep their relative live order, interleaved as above. The patch's own items for
 *   that field must appear in it in the same relative order (400 otherwise). It is ignored for
 *   lists that are replaced whole.
 * - `$retainKeys: [fields]` (sent by kubectl for Deployment strategy and Pod volumes): fields of
 *   the live map that are not listed are cleared before merging; every non-null field of the
 *   patch map must be listed (400 otherwise).
 * Errors: a patch that is not an object, an unknown `$patch` value, a malformed directive: 400.
 * A keyed-list item without its merge key, or a non-object item in a keyed list: 422.
 * Limits: patch strategies exist only for the fields schema.ts describes; lists of lists are
 * replaced rather than rejected; `$patch: delete` of a map absent from the target is a no-op
 * (Kubernetes stores the directive as data).
 */
import { PatchError } from './errors.js';
import { canonicalJson } from './field-set.js';
import { fieldTypeOf, itemTypeOf, listPatchStrategy, type FieldType, type TypeInfo } from './schema.js';
import { deepClone, deepEqual, hasOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from '../base/json.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

/** Applies a strategic merge patch; returns a new object and never mutates its inputs. */
export function applyStrategicMergePatch(target: JsonObject, patch: JsonObject, type: TypeInfo): JsonObject {
  if (!isJsonObject(patch)) throw new PatchError(400, 'a strategic merge patch must be a JSON object');
  return mergeMap(deepClone(target), patch, type.root, '') ?? {};
}

function isDirectiveKey(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER);
}

/**
 * Merges `patch` into `original` (which it mutates and returns). Returns undefined only for
 * `$patch: delete` when there was no original map to empty.
 */
function mergeMap(original: JsonObject | undefined, patch: JsonObject, t: FieldType | undefined, path: string): JsonObject | undefined {
  const directive = patch[PATCH];
  if (directive !== undefined && directive !== 'merge') {
    if (directive === 'replace') {
      const content: JsonObject = {};
      for (const [k, v] of Object.entries(patch)) if (k !== PATCH) setOwn(content, k, v);
      return mergeMap({}, content, t, path);
    }
    if (directive === 'delete') return original === undefined ? undefined : {};
    throw new PatchError(
      400,
      `${where(path)}: unknown ${PATCH} directive ${JSON.stringify(directive)} (expected replace, delete or merge)`,
    );
  }
  const result = original ?? {};

  if (hasOwn(patch, RETAIN_KEYS)) applyRetainKeys(result, patch, path);

  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (!Array.isArray(value)) throw new PatchError(400, `${where(path)}: ${key} must be a list of values to delete`);
    const current = hasOwn(result, field) ? result[field] : undefined;
    if (Array.isArray(current)) {
      const gone = new Set(value.map(canonicalJson));
      setOwn(
        result,
        field,
        current.filter((item) => !gone.has(canonicalJson(item))),
      );
    }
  }

  const orders = new Map<string, { order: JsonValue[]; before: JsonValue[] | undefined }>();
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = key.slice(SET_ELEMENT_ORDER.length);
    if (!Array.isArray(value)) throw new PatchError(400, `${where(path)}: ${key} must be a list`);
    const current = hasOwn(result, field) ? result[field] : undefined;
    orders.set(field, { order: value, before: Array.isArray(current) ? [...current] : undefined });
  }

  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key)) continue;
    const childPath = `${path}.${key}`;
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = hasOwn(result, key) ? result[key] : undefined;
    const fieldType = fieldTypeOf(t, key);
    if (isJsonObject(value)) {
      const merged = mergeMap(isJsonObject(current) ? current : undefined, value, fieldType, childPath);
      if (merged === undefined) delete result[key];
      else setOwn(result, key, merged);
    } else if (Array.isArray(value)) {
      setOwn(result, key, mergeList(Array.isArray(current) ? current : undefined, value, fieldType, childPath));
    } else {
      setOwn(result, key, value);
    }
  }

  for (const [field, { order, before }] of orders) {
    const merged = hasOwn(result, field) ? result[field] : undefined;
    const fieldType = fieldTypeOf(t, field);
    const { strategy, mergeKey } = listPatchStrategy(fieldType);
    if (!Array.isArray(merged) || strategy !== 'merge') continue;
    const patchList = hasOwn(patch, field) ? patch[field] : undefined;
    const keyed = mergeKey !== undefined && isKeyedList(fieldType);
    const identify = keyed ? keyIdentity(mergeKey) : scalarIdentity;
    if (keyed) {
      order.forEach((entry, i) => {
        if (!isJsonObject(entry) || !hasOwn(entry, mergeKey)) {
          throw new PatchError(400, `${where(path)}: ${SET_ELEMENT_ORDER}${field}[${i}] must be an object with merge key "${mergeKey}"`);
        }
      });
    }
    if (Array.isArray(patchList)) validateOrder(patchList, order, identify, `${where(path)}: ${SET_ELEMENT_ORDER}${field}`);
    setOwn(result, field, enforceOrder(merged, order, before ?? [], identify));
  }
  return result;
}

function applyRetainKeys(original: JsonObject, patch: JsonObject, path: string): void {
  const retain = patch[RETAIN_KEYS];
  if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string')) {
    throw new PatchError(400, `${where(path)}: ${RETAIN_KEYS} must be a list of field names`);
  }
  const keep = new Set(retain);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || isDirectiveKey(key)) continue;
    if (!keep.has(key)) throw new PatchError(400, `${where(path)}: field "${key}" of the patch is not in its ${RETAIN_KEYS} list`);
  }
  for (const key of Object.keys(original)) if (!keep.has(key)) delete original[key];
}

/** A list whose items are objects identified by a merge key (as opposed to a list of scalars). */
function isKeyedList(t: FieldType | undefined): boolean {
  return t?.kind === 'list' && t.listType !== 'set';
}

function mergeList(original: JsonValue[] | undefined, patch: JsonValue[], t: FieldType | undefined, path: string): JsonValue[] {
  const { strategy, mergeKey } = listPatchStrategy(t);
  if (strategy === 'replace') return deepClone(patch);
  if (mergeKey !== undefined && isKeyedList(t)) return mergeKeyedList(original ?? [], patch, mergeKey, itemTypeOf(t), path);
  return mergeScalarList(original ?? [], patch, path);
}

function mergeKeyedList(
  original: JsonValue[],
  patch: JsonValue[],
  mergeKey: string,
  itemType: FieldType | undefined,
  path: string,
): JsonValue[] {
  const deleted = new Set<string>();
  const items: JsonObject[] = [];
  let replace = false;
  for (const item of patch) {
    if (!isJsonObject(item)) {
      throw new PatchError(422, `${where(path)}: items must be objects with merge key "${mergeKey}", got ${JSON.stringify(item)}`);
    }
    const directive = item[PATCH];
    if (directive === undefined || directive === 'merge') {
      if (!hasOwn(item, mergeKey)) {
        throw new PatchError(422, `${where(path)}: item ${JSON.stringify(item)} does not contain declared merge key "${mergeKey}"`);
      }
      items.push(directive === undefined ? item : without(item, PATCH));
    } else if (directive === 'delete') {
      if (!hasOwn(item, mergeKey)) {
        throw new PatchError(422, `${where(path)}: delete directive ${JSON.stringify(item)} does not contain merge key "${mergeKey}"`);
      }
      deleted.add(canonicalJson(item[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else {
      throw new PatchError(
        400,
        `${where(path)}: unknown ${PATCH} directive ${JSON.stringify(directive)} in a list item (expected replace, delete or merge)`,
      );
    }
  }
  const itemPath = (item: JsonObject) => `${path}[${mergeKey}=${JSON.stringify(item[mergeKey])}]`;
  if (replace) return items.map((item) => mergeMap({}, item, itemType, itemPath(item)) ?? {});

  // Items found by their key's canonical JSON, not by a scan each: a patch of n items onto a list
  // of n items was n² comparisons, seconds on the event loop for a few hundred KB.
  const keyOfItem = (item: JsonValue): string | undefined =>
    isJsonObject(item) && hasOwn(item, mergeKey) ? canonicalJson(item[mergeKey]) : undefined;
  const merged = deleted.size === 0 ? [...original] : original.filter((existing) => !deleted.has(keyOfItem(existing) ?? '\u0000'));
  const at = new Map<string, number>();
  merged.forEach((existing, i) => {
    const k = keyOfItem(existing);
    if (k !== undefined && !at.has(k)) at.set(k, i);
  });
  for (const item of items) {
    const k = keyOfItem(item) as string;
    const index = at.get(k) ?? -1;
    const existing = index >= 0 ? merged[index] : undefined;
    const next = mergeMap(isJsonObject(existing) ? existing : {}, item, itemType, itemPath(item)) ?? {};
    if (index >= 0) merged[index] = next;
    else at.set(k, merged.push(next) - 1);
  }
  return enforceOrder(merged, items, original, keyIdentity(mergeKey));
}

function mergeScalarList(original: JsonValue[], patch: JsonValue[], path: string): JsonValue[] {
  let replace = false;
  const values: JsonValue[] = [];
  for (const value of patch) {
    if (isJsonObject(value) && hasOwn(value, PATCH)) {
      if (value[PATCH] === 'replace') replace = true;
      else if (value[PATCH] !== 'merge') {
        throw new PatchError(400, `${where(path)}: unsupported ${PATCH} directive ${JSON.stringify(value[PATCH])} in a list of values`);
      }
    } else {
      values.push(value);
    }
  }
  if (replace) return unique(values);
  return enforceOrder(unique([...original, ...values]), values, original, scalarIdentity);
}

type Identify = (item: JsonValue) => JsonValue | undefined;

const scalarIdentity: Identify = (item) => item;

function keyIdentity(mergeKey: string): Identify {
  return (item) => (isJsonObject(item) && hasOwn(item, mergeKey) ? item[mergeKey] : undefined);
}

/** The first position of each identity in `list`, for lookups in constant time. */
function positions(list: readonly JsonValue[], identify: Identify): (item: JsonValue) => number {
  const first = new Map<string, number>();
  list.forEach((candidate, i) => {
    const id = identify(candidate);
    if (id === undefined) return;
    const k = canonicalJson(id);
    if (!first.has(k)) first.set(k, i);
  });
  return (item) => {
    const id = identify(item);
    return id === undefined ? -1 : (first.get(canonicalJson(id)) ?? -1);
  };
}

/**
 * Kubernetes' normalizeElementOrder + mergeSortedSlice: items named in `patchOrder` come in that
 * order; the others keep their order in `serverOrder` and are slotted in before the first
 * patch item that they preceded on the server.
 */
function enforceOrder(
  merged: JsonValue[],
  patchOrder: readonly JsonValue[],
  serverOrder: readonly JsonValue[],
  identify: Identify,
): JsonValue[] {
  const inPatch = positions(patchOrder, identify);
  const inServer = positions(serverOrder, identify);
  const sorted = (list: JsonValue[], indexOf: (item: JsonValue) => number): JsonValue[] =>
    list
      .map((item, i) => ({ item, i, at: indexOf(item) }))
      .sort((a, b) => (a.at < 0 ? Infinity : a.at) - (b.at < 0 ? Infinity : b.at) || a.i - b.i)
      .map((e) => e.item);
  const fromPatch = sorted(
    merged.filter((item) => inPatch(item) >= 0),
    inPatch,
  );
  const serverOnly = sorted(
    merged.filter((item) => inPatch(item) < 0),
    inServer,
  );
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < fromPatch.length) {
    if (i >= serverOnly.length) out.push(fromPatch[j++]);
    else if (j >= fromPatch.length) out.push(serverOnly[i++]);
    else {
      const left = inServer(serverOnly[i]);
      const right = inServer(fromPatch[j]);
      if (left >= 0 && right >= 0 && left < right) out.push(serverOnly[i++]);
      else out.push(fromPatch[j++]);
    }
  }
  return out;
}

/** The patch's own items must appear in `$setElementOrder` in the same relative order. */
function validateOrder(patchList: JsonValue[], order: JsonValue[], identify: Identify, label: string): void {
  let position = 0;
  for (const item of patchList) {
    if (isJsonObject(item) && hasOwn(item, PATCH)) continue;
    const id = identify(item);
    while (position < order.length && !deepEqual(identify(order[position]), id)) position++;
    if (position >= order.length) {
      throw new PatchError(400, `${label} does not list ${JSON.stringify(item)} in the same relative order as the patch list`);
    }
    position++;
  }
}

function unique(values: JsonValue[]): JsonValue[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const k = canonicalJson(value);
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

function without(obj: JsonObject, key: string): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (k !== key) setOwn(out, k, v);
  return out;
}

function where(path: string): string {
  return path === '' ? 'strategic merge patch' : `strategic merge patch at ${path}`;
}
