/**
 * Server-side apply and field ownership (`metadata.managedFields`), after Kubernetes'
 * structured-merge-diff as the API server runs it. Pure functions over plain JSON.
 *
 * Ownership model
 * - Every manager entry is keyed like Kubernetes keys them: Apply entries by (manager,
 *   subresource), Update entries by (manager, apiVersion, subresource).
 * - `serverSideApply`: the field set of the applied configuration becomes the applier's set
 *   (operation Apply). The configuration is merged into the live object: maps and structs
 *   merge, keyed lists merge item by item (per TypeInfo; granular ownership per item), set
 *   lists per value, atomic lists (and every list a CRD schema does not declare otherwise) are replaced whole,
 *   scalars are replaced. Fields the applier applied last time, no longer applies, and that no
 *   manager (the applier included) still owns — at that path or anywhere below it — are
 *   removed from the object. A list item it no longer applies goes unless some manager owns
 *   the item itself (owning one field of an item does not keep it, as in Kubernetes); the key
 *   fields of an item that stays are never removed. A map or list emptied by this is removed
 *   too unless some manager owns it itself. A field whose value the apply changes and that another manager owns is a
 *   conflict: without `force` nothing is written and the conflicts are returned; with `force`
 *   the other managers lose those fields. Fields the apply removes are dropped from every
 *   other manager's set. Managers left with nothing are dropped.
 * - `trackUpdate` (create/update/patch without apply): fields the write added or changed become
 *   owned by (manager, Update, apiVersion, subresource) and are taken from every other manager;
 *   removed fields are dropped from everyone. A write that changes nothing changes no entry.
 * - Field sets never contain apiVersion, kind, the `metadata` node itself, or metadata.name,
 *   namespace, uid, resourceVersion, generation, creationTimestamp, managedFields, selfLink,
 *   deletionTimestamp, deletionGracePeriodSeconds (like the real server's metadata stripping).
 * - Set shapes follow the real server: an Apply set holds leaves, list items (with `.`),
 *   empty maps, and the keys of string maps (`f:labels: {f:app: {}}`, no `.` on labels); an
 *   Update set also holds the containers that write created (`f:labels: {".": {}, f:app: {}}`),
 *   except structs a typed Go object always serializes (spec, template, ...), so a real server
 *   and this one produce the same FieldsV1 for ordinary objects. Objects the TypeInfo does not
 *   describe are treated as Kubernetes treats a custom resource.
 * - Timestamps: an entry's `time` is set to `now` when its operation changed the object or
 *   the entry is new; a no-op re-apply leaves managedFields exactly as they were.
 * - Entries are sorted as Kubernetes sorts them: Apply before Update, then by time (seconds),
 *   manager, apiVersion, subresource.
 *
 * What the caller (the HTTP layer) must do
 * - Pass `live` and `old` as stored, with their metadata.managedFields; pass `applied` as the
 *   client sent it (it may hold apiVersion, kind, metadata.name/namespace, labels, ...), after
 *   removing what does not belong to the subresource (status for the main resource, everything
 *   but status for /status). `applied.metadata.managedFields` must be absent or null: anything
 *   else is PatchError 400 "metadata.managedFields must be nil", as Kubernetes answers.
 * - Validate and enforce identity itself: apiVersion/kind/name/namespace of the applied config
 *   against the URL (they are merged as given), resourceVersion preconditions, and set uid,
 *   resourceVersion, generation, creationTimestamp, deletionTimestamp on the result. Those
 *   fields of `applied` are ignored (the live values are kept; on create they are absent).
 * - A `null` in the applied config means "owned, absent": the field is removed from the result
 *   and stays in the applier's set.
 * - The result of a no-op apply deep-equals `live`: do not write or bump resourceVersion then.
 * - trackUpdate returns the list to store as metadata.managedFields (delete the field when it
 *   is empty). The client may send managedFields in an update: a non-empty, well-formed list
 *   replaces the stored one as the base (so `[{}]` clears ownership, as in Kubernetes); an
 *   empty or malformed list, or any list on a subresource write, is ignored. Entries that
 *   survive with an operation other than Apply/Update are PatchError 422.
 * - An applied config with a keyed-list item missing a key (and no default), a duplicate key,
 *   or a non-scalar in a set list is PatchError 422 naming the path.
 * Limits: no apiVersion conversion (sets are compared as if every version had the same
 * fields); no cap on the number of Update managers; unions/discriminators are not handled.
 */
import { PatchError } from './errors.js';
import { FieldSet, fieldElement, formatPath, keyElement, valueElement, type FieldPath, type PathElement } from './field-set.js';
import {
  compareText,
  decodeEntries,
  dropEmpty,
  encodeEntries,
  entryKey,
  metadataOf,
  setManagedFields,
  unionOf,
  UNTRACKED_METADATA_FIELDS,
  withoutIgnoredIdentity,
  withoutManagedFields,
  type ManagedFieldsEntry,
  type Managers,
} from './managed-fields.js';
import { fieldTypeOf, itemTypeOf, typeInfoOrGeneric, type FieldType, type ListType, type TypeInfo } from './schema.js';
import { deepClone, deepEqual, hasOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from '../base/json.js';
import type { ApplyArgs as EngineApplyArgs, TrackArgs as EngineTrackArgs } from '../api/patch-port.js';

/** The engine's apply arguments with the schema the merge follows. */
export interface ApplyArgs extends EngineApplyArgs {
  type: TypeInfo | undefined;
}

export interface ApplyConflict {
  manager: string;
  /** Like ".spec.replicas" or '.spec.containers[name="web"].image'. */
  field: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
}

export type ApplyResult = { ok: true; object: JsonObject } | { ok: false; conflicts: ApplyConflict[] };

export type TrackUpdateArgs = EngineTrackArgs;

const UNTRACKED_TOP_LEVEL = new Set([fieldElement('apiVersion'), fieldElement('kind')]);
const UNTRACKED_IN_METADATA = new Set(UNTRACKED_METADATA_FIELDS.map(fieldElement));
const METADATA = fieldElement('metadata');

/** Whether a path of the whole object can be owned (walks skip the subtrees that cannot). */
function isTracked(path: readonly PathElement[]): boolean {
  if (path.length === 1) return !UNTRACKED_TOP_LEVEL.has(path[0]);
  if (path.length === 2 && path[0] === METADATA) return !UNTRACKED_IN_METADATA.has(path[1]);
  return true;
}

/** Whether the node at a tracked path may itself be a member (never the metadata node). */
function isOwnable(path: readonly PathElement[]): boolean {
  return !(path.length === 1 && path[0] === METADATA);
}

// ---------------------------------------------------------------------------------------------
// Public operations

export function serverSideApply(args: ApplyArgs): ApplyResult {
  const root = typeInfoOrGeneric(args.type).root;
  if (!isJsonObject(args.applied)) throw new PatchError(400, 'an apply patch must be a JSON object');
  const appliedMeta = args.applied['metadata'];
  if (isJsonObject(appliedMeta) && appliedMeta['managedFields'] !== undefined && appliedMeta['managedFields'] !== null) {
    throw new PatchError(400, 'metadata.managedFields must be nil');
  }

  const applied = withoutIgnoredIdentity(args.applied);
  const appliedSet = fieldSetOf(applied, root);
  const live = withoutManagedFields(args.live ?? {});
  const managers = decodeEntries(metadataOf(args.live)?.['managedFields'], 'lenient');

  const applierKey = entryKey({ manager: args.manager, operation: 'Apply', apiVersion: args.apiVersion, subresource: args.subresource });
  const previous = managers.get(applierKey);
  managers.set(applierKey, {
    manager: args.manager,
    operation: 'Apply',
    apiVersion: args.apiVersion,
    ...(args.subresource ? { subresource: args.subresource } : {}),
    ...(previous?.time !== undefined ? { time: previous.time } : {}),
    set: appliedSet,
  });

  const merged = mergeApplied(deepClone(live), applied, root) as JsonObject;
  if (previous) {
    const owned = unionOf(managers);
    const toRemove = FieldSet.of(previous.set.paths(false).filter((path) => !isRetained(path, owned)));
    if (!toRemove.isEmpty()) pruneValue(merged, toRemove, root, [], owned);
  }

  const { added, modified, removed } = compareObjects(live, merged, root);
  const changed = added.union(modified);
  const conflicts: ApplyConflict[] = [];
  const conflictSets = new Map<string, FieldSet>();
  for (const [key, entry] of managers) {
    if (key === applierKey) continue;
    const overlap = entry.set.intersection(changed);
    if (overlap.isEmpty()) continue;
    conflictSets.set(key, overlap);
    for (const path of overlap.paths()) {
      conflicts.push({
        manager: entry.manager,
        field: formatPath(path),
        operation: entry.operation === 'Apply' ? 'Apply' : 'Update',
        apiVersion: entry.apiVersion,
        ...(entry.subresource ? { subresource: entry.subresource } : {}),
      });
    }
  }
  if (conflicts.length > 0 && !args.force) {
    return { ok: false, conflicts: conflicts.sort((a, b) => compareText(a.manager, b.manager)) };
  }

  for (const [key, entry] of managers) {
    if (key === applierKey) continue;
    entry.set = entry.set.difference(conflictSets.get(key) ?? new FieldSet()).difference(removed);
  }
  dropEmpty(managers);

  stripAppliedNulls(merged, applied, root);
  const objectChanged = !deepEqual(live, merged);
  const applier = managers.get(applierKey);
  if (applier && (objectChanged || !previous || applier.time === undefined)) applier.time = args.now;

  const result = merged;
  setManagedFields(result, encodeEntries(managers, args.now));
  return { ok: true, object: result };
}

export function trackUpdate(args: TrackUpdateArgs, type: TypeInfo | undefined): ManagedFieldsEntry[] {
  const root = typeInfoOrGeneric(type).root;
  const managers = baseManagersForUpdate(args);
  const old = withoutManagedFields(args.old ?? {});
  const updated = withoutManagedFields(args.updated);
  const { added, modified, removed } = compareObjects(old, updated, root);
  const changed = added.union(modified);

  for (const entry of managers.values()) entry.set = entry.set.difference(changed).difference(removed);
  if (!changed.isEmpty()) {
    const identity = { manager: args.manager, operation: 'Update' as const, apiVersion: args.apiVersion, subresource: args.subresource };
    const key = entryKey(identity);
    const own = managers.get(key);
    managers.set(key, {
      manager: args.manager,
      operation: 'Update',
      apiVersion: args.apiVersion,
      ...(args.subresource ? { subresource: args.subresource } : {}),
      time: args.now,
      set: (own?.set ?? new FieldSet()).union(changed),
    });
  }
  dropEmpty(managers);
  for (const entry of managers.values()) {
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') {
      throw new PatchError(
        422,
        `metadata.managedFields: operation ${JSON.stringify(entry.operation)} of manager ${JSON.stringify(entry.manager)} must be "Apply" or "Update"`,
        [
          {
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(entry.operation)}: must be \`Apply\` or \`Update\``,
            field: 'metadata.managedFields.operation',
          },
        ],
      );
    }
  }
  return encodeEntries(managers, args.now);
}

/** The 409 error Kubernetes answers for apply conflicts, with its message and causes. */
export function applyConflictError(conflicts: readonly ApplyConflict[]): PatchError {
  const describe = (c: ApplyConflict) => {
    const name = JSON.stringify(c.manager) + (c.subresource ? ` with subresource ${JSON.stringify(c.subresource)}` : '');
    return c.operation === 'Update' ? `${name} using ${c.apiVersion}` : name;
  };
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describe(c)}`, field: c.field }));
  if (conflicts.length === 1) {
    const [only] = conflicts as [ApplyConflict];
    return new PatchError(409, `Apply failed with 1 conflict: conflict with ${describe(only)}: ${only.field}`, causes);
  }
  const groups = new Map<string, string[]>();
  for (const c of conflicts) {
    const label = describe(c);
    groups.set(label, [...(groups.get(label) ?? []), c.field]);
  }
  const lines = [...groups.keys()]
    .sort(compareText)
    .flatMap((label) => [`conflicts with ${label}:`, ...groups.get(label)!.map((f) => `- ${f}`)]);
  return new PatchError(409, `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`, causes);
}

function baseManagersForUpdate(args: TrackUpdateArgs): Managers {
  const stored = () => decodeEntries(metadataOf(args.old)?.['managedFields'], 'lenient');
  const sent = metadataOf(args.updated)?.['managedFields'];
  if (args.subresource || !Array.isArray(sent) || sent.length === 0) return stored();
  try {
    return decodeEntries(sent, 'strict');
  } catch {
    return stored();
  }
}

type Shape =
  { kind: 'leaf' } | { kind: 'fields'; isMap: boolean } | { kind: 'list'; list: ListType; elements: Array<PathElement[] | undefined> };

const LEAF: Shape = { kind: 'leaf' };

function jsonKind(v: JsonValue): 'object' | 'array' | 'scalar' {
  return isJsonObject(v) ? 'object' : Array.isArray(v) ? 'array' : 'scalar';
}

/**
 * How to walk the values found at one path (one or two of them, either possibly absent).
 * Anything inconsistent — values of different JSON kinds, a null, a list that cannot be
 * keyed — is a leaf: owned and compared as one value.
 */
function shapeOf(t: FieldType | undefined, values: ReadonlyArray<JsonValue | undefined>): Shape {
  const present = values.filter((v): v is JsonValue => v !== undefined);
  if (present.length === 0 || present.some((v) => v === null)) return LEAF;
  const kind = jsonKind(present[0]);
  if (present.some((v) => jsonKind(v) !== kind)) return LEAF;
  if (kind === 'object') {
    if (t === undefined) return { kind: 'fields', isMap: false };
    if ((t.kind === 'struct' || t.kind === 'map') && !t.atomic) return { kind: 'fields', isMap: t.kind === 'map' };
    return LEAF;
  }
  if (kind === 'array' && t?.kind === 'list' && t.listType !== 'atomic') {
    const elements = values.map((v) => (v === undefined ? undefined : listElements(t, v as JsonValue[])));
    if (elements.some((e) => typeof e === 'string')) return LEAF;
    return { kind: 'list', list: t, elements: elements as Array<PathElement[] | undefined> };
  }
  return LEAF;
}

/** The path element of every item of a set or keyed list, or why there is none. */
function listElements(t: ListType, items: readonly JsonValue[]): PathElement[] | string {
  const elements: PathElement[] = [];
  const seen = new Set<PathElement>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    let element: PathElement;
    if (t.listType === 'set') {
      if (isJsonObject(item) || Array.isArray(item)) return `item ${i} of a set list must be a scalar`;
      element = valueElement(item);
    } else {
      if (!isJsonObject(item)) return `item ${i} must be an object`;
      const key: Record<string, JsonValue> = {};
      for (const name of t.keys ?? []) {
        const value = hasOwn(item, name) && item[name] !== null ? item[name] : t.keyDefaults?.[name];
        if (value === undefined || value === null) return `item ${i} has no key field "${name}"`;
        key[name] = value;
      }
      element = keyElement(key);
    }
    if (seen.has(element)) return `duplicate entries for key ${formatPath([element])}`;
    seen.add(element);
    elements.push(element);
  }
  return elements;
}

/** The Apply field set of an applied configuration; PatchError 422 for lists that cannot be keyed. */
function fieldSetOf(applied: JsonObject, root: FieldType): FieldSet {
  const set = new FieldSet();
  const insert = (path: PathElement[]) => {
    if (isOwnable(path)) set.insert(path);
  };
  const walk = (value: JsonValue, t: FieldType | undefined, path: PathElement[]): void => {
    if (!isTracked(path)) return;
    if (Array.isArray(value) && t?.kind === 'list' && t.listType !== 'atomic') {
      const elements = listElements(t, value);
      if (typeof elements === 'string') {
        throw new PatchError(422, `invalid apply configuration at ${formatPath(path) || '.'}: ${elements}`, [
          { reason: 'FieldValueInvalid', message: elements, field: formatPath(path) },
        ]);
      }
    }
    const shape = shapeOf(t, [value]);
    if (shape.kind === 'leaf') {
      insert(path);
    } else if (shape.kind === 'fields') {
      for (const [key, child] of Object.entries(value as JsonObject)) {
        const childPath = [...path, fieldElement(key)];
        if (!isTracked(childPath)) continue;
        walk(child, fieldTypeOf(t, key), childPath);
        if (shape.isMap || child === null || (isJsonObject(child) && Object.keys(child).length === 0)) insert(childPath);
      }
    } else {
      (value as JsonValue[]).forEach((item, i) => {
        const childPath = [...path, shape.elements[0]![i]];
        walk(item, itemTypeOf(t), childPath);
        insert(childPath);
      });
    }
  };
  walk(applied, root, []);
  return set;
}

interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

function emptyOf(t: FieldType): JsonValue | undefined {
  if (t.kind === 'struct' || t.kind === 'map') return {};
  if (t.kind === 'list') return [];
  return undefined;
}

function isEmptyContainer(v: JsonValue | undefined): boolean {
  return v === undefined || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);
}

/** Which paths an object gained, changed and lost (untracked fields left out). */
function compareObjects(lhs: JsonObject, rhs: JsonObject, root: FieldType): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const walk = (l: JsonValue | undefined, r: JsonValue | undefined, t: FieldType | undefined, path: PathElement[]): void => {
    if ((l === undefined && r === undefined) || !isTracked(path)) return;
    const shape = shapeOf(t, [l, r]);
    const ownable = path.length > 0 && isOwnable(path);
    const leaf = () => {
      if (!ownable) return;
      if (l === undefined) out.added.insert(path);
      else if (r === undefined) out.removed.insert(path);
      else if (!deepEqual(l, r)) out.modified.insert(path);
    };
    if (shape.kind === 'leaf' || (isEmptyContainer(l) && isEmptyContainer(r))) {
      leaf();
      return;
    }
    if (shape.kind === 'fields') {
      const lo = (l ?? {}) as JsonObject;
      const ro = (r ?? {}) as JsonObject;
      for (const key of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
        const childType = fieldTypeOf(t, key);
        let lv = hasOwn(lo, key) ? lo[key] : undefined;
        let rv = hasOwn(ro, key) ? ro[key] : undefined;
        if (childType && 'presentWhenEmpty' in childType && childType.presentWhenEmpty) {
          if (lv === undefined && rv !== undefined) lv = emptyOf(childType);
          if (rv === undefined && lv !== undefined) rv = emptyOf(childType);
        }
        walk(lv, rv, childType, [...path, fieldElement(key)]);
      }
    } else {
      const [le, re] = shape.elements;
      const items = new Map<PathElement, { l?: JsonValue; r?: JsonValue }>();
      (le ?? []).forEach((element, i) => items.set(element, { l: (l as JsonValue[])[i]! }));
      (re ?? []).forEach((element, i) => items.set(element, { ...items.get(element), r: (r as JsonValue[])[i]! }));
      for (const [element, pair] of items) walk(pair.l, pair.r, itemTypeOf(t), [...path, element]);
    }
    if (!ownable) return;
    if (l === undefined) out.added.insert(path);
    else if (r === undefined) out.removed.insert(path);
  };
  walk(lhs, rhs, root, []);
  return out;
}

/**
 * structured-merge-diff's merge of an applied config (rhs) into the live object (lhs). `lhs` is
 * a private copy that this reuses and mutates; `rhs` is copied, never shared.
 */
function mergeApplied(lhs: JsonValue | undefined, rhs: JsonValue | undefined, t: FieldType | undefined): JsonValue | undefined {
  if (rhs === undefined) return lhs;
  if (lhs === undefined) return deepClone(rhs);
  const shape = shapeOf(t, [lhs, rhs]);
  if (shape.kind === 'leaf') return deepClone(rhs);
  if (shape.kind === 'fields') {
    const out = lhs as JsonObject;
    for (const [key, value] of Object.entries(rhs as JsonObject)) {
      setOwn(out, key, mergeApplied(hasOwn(out, key) ? out[key] : undefined, value, fieldTypeOf(t, key))!);
    }
    return out;
  }
  return mergeListItems(lhs as JsonValue[], rhs as JsonValue[], shape.elements[0]!, shape.elements[1]!, itemTypeOf(t));
}

/**
 * Items of both lists, merged by key. Live-only items stay where they were; items of the
 * applied list come in its order (shared items move to match it); new items follow their
 * predecessor in the applied list.
 */
function mergeListItems(
  l: JsonValue[],
  r: JsonValue[],
  le: PathElement[],
  re: PathElement[],
  itemType: FieldType | undefined,
): JsonValue[] {
  const lIndex = new Map(le.map((e, i) => [e, i]));
  const rIndex = new Map(re.map((e, i) => [e, i]));
  const shared = re.filter((e) => lIndex.has(e));
  let nextShared = shared.shift();
  const mergedFromR = new Set<PathElement>();
  const out: JsonValue[] = [];
  const mergeItem = (element: PathElement, rItem: JsonValue) => {
    mergedFromR.add(element);
    const li = lIndex.get(element);
    out.push(mergeApplied(li === undefined ? undefined : l[li], rItem, itemType)!);
  };
  let li = 0;
  let ri = 0;
  while (li < l.length || ri < r.length) {
    if (li < l.length && ri < r.length) {
      const element = le[li];
      if (element === re[ri]) {
        mergeItem(element, r[ri]);
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (rIndex.has(element) && nextShared !== undefined && nextShared !== element) {
        li++;
        continue;
      }
    }
    if (li < l.length) {
      const element = le[li];
      if (!rIndex.has(element)) {
        out.push(l[li]);
        li++;
        continue;
      }
      if (mergedFromR.has(element)) {
        li++;
        continue;
      }
    }
    if (ri < r.length) {
      const element = re[ri];
      mergeItem(element, r[ri]);
      ri++;
      if (nextShared === element) nextShared = shared.shift();
    }
  }
  return out;
}

/**
 * Whether a path the applier gave up stays in the object: a field stays while anyone owns it or
 * something below it; a list item only while someone owns the item itself (as in Kubernetes,
 * owning one field of an item does not keep an item its applier dropped).
 */
function isRetained(path: FieldPath, owned: FieldSet): boolean {
  return path[path.length - 1].startsWith('f:') ? owned.covers(path) : owned.has(path);
}

/**
 * Removes the members of `remove` from `value` (in place). Returns true when the value was a
 * non-empty container that this emptied; such children are removed too unless `owned` has them.
 * `keyFields` are the key fields of a list item that stays: they are never removed.
 */
function pruneValue(
  value: JsonValue,
  remove: FieldSet,
  t: FieldType | undefined,
  path: PathElement[],
  owned: FieldSet,
  keyFields: readonly string[] = [],
): boolean {
  const shape = shapeOf(t, [value]);
  if (shape.kind === 'fields') {
    const obj = value as JsonObject;
    const before = Object.keys(obj).length;
    for (const [element, child] of remove.children) {
      if (!element.startsWith('f:')) continue;
      const key = element.slice(2);
      if (!hasOwn(obj, key) || keyFields.includes(key)) continue;
      const childPath = [...path, element];
      if (child.member || (pruneValue(obj[key], child, fieldTypeOf(t, key), childPath, owned) && !owned.has(childPath))) delete obj[key];
    }
    return before > 0 && Object.keys(obj).length === 0;
  }
  if (shape.kind === 'list') {
    const items = value as JsonValue[];
    const elements = shape.elements[0]!;
    const kept: JsonValue[] = [];
    items.forEach((item, i) => {
      const element = elements[i];
      const child = remove.children.get(element);
      const childPath = [...path, element];
      const drop =
        child !== undefined &&
        (child.member || (pruneValue(item, child, itemTypeOf(t), childPath, owned, shape.list.keys ?? []) && !owned.has(childPath)));
      if (!drop) kept.push(item);
    });
    const emptied = items.length > 0 && kept.length === 0;
    items.splice(0, items.length, ...kept);
    return emptied;
  }
  return false;
}

/** Removes from `merged` the fields the applied config set to null (owned but absent). */
function stripAppliedNulls(merged: JsonValue | undefined, applied: JsonValue, t: FieldType | undefined): void {
  if (merged === undefined) return;
  const shape = shapeOf(t, [merged, applied]);
  if (shape.kind === 'fields') {
    const m = merged as JsonObject;
    for (const [key, value] of Object.entries(applied as JsonObject)) {
      if (value === null) {
        if (hasOwn(m, key) && m[key] === null) delete m[key];
      } else if (hasOwn(m, key)) {
        stripAppliedNulls(m[key], value, fieldTypeOf(t, key));
      }
    }
  } else if (shape.kind === 'list') {
    const [me, ae] = shape.elements as [PathElement[], PathElement[]];
    const mergedItems = merged as JsonValue[];
    (applied as JsonValue[]).forEach((item, i) => {
      const at = me.indexOf(ae[i]);
      if (at >= 0) stripAppliedNulls(mergedItems[at], item, itemTypeOf(t));
    });
  }
}
