/**
 * Sets of field paths, the currency of server-side apply, and their wire form FieldsV1.
 *
 * A path is a list of path elements, each serialized the way FieldsV1 spells it:
 *   "f:<name>"            a field of an object           ("f:spec")
 *   'k:{"name":"web"}'    an item of a keyed list         (keys sorted, values as JSON)
 *   'v:"example.com/x"'   a value of a set list
 *   "i:3"                 an item by index (only read, never produced here)
 * A set is a tree of such elements; a node is a `member` when the path to it is in the set (a
 * node may only be a prefix of members). FieldsV1 writes a member leaf as `{}` and a member
 * that also has members below it with a `".": {}` entry.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../base/json.js';

export type PathElement = string;
export type FieldPath = readonly PathElement[];

export function fieldElement(name: string): PathElement {
  return `f:${name}`;
}

export function keyElement(key: Readonly<Record<string, JsonValue>>): PathElement {
  const names = Object.keys(key);
  if (names.length === 1 && typeof key[names[0]] !== 'object') return `k:{${JSON.stringify(names[0])}:${JSON.stringify(key[names[0]])}}`;
  return `k:${canonicalJson(key)}`;
}

export function valueElement(value: JsonValue): PathElement {
  return `v:${canonicalJson(value)}`;
}

/** JSON with object keys sorted, so equal values always serialize alike. */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareStrings);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A small memo for pure functions of path-element strings: the same elements come back on every
 * write of an object, and parsing their JSON dominated decoding and sorting.
 */
function memo<R>(compute: (element: string) => R): (element: string) => R {
  const cache = new Map<string, R>();
  return (element) => {
    let result = cache.get(element);
    if (result === undefined && !cache.has(element)) {
      if (cache.size >= 20_000) cache.clear();
      result = compute(element);
      cache.set(element, result);
    }
    return result as R;
  };
}

/** Canonical form of a path element read from the wire (k: and v: re-serialized), or undefined if malformed. */
export const normalizeElement: (element: string) => PathElement | undefined = memo(normalizeUncached);

function normalizeUncached(element: string): PathElement | undefined {
  const kind = element.slice(0, 2);
  const rest = element.slice(2);
  try {
    switch (kind) {
      case 'f:':
        return element;
      case 'k:': {
        const key = JSON.parse(rest) as unknown;
        return isJsonObject(key) ? keyElement(key) : undefined;
      }
      case 'v:':
        return valueElement(JSON.parse(rest) as JsonValue);
      case 'i:':
        return /^(0|[1-9][0-9]*)$/.test(rest) ? element : undefined;
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/** The path as Kubernetes prints it in conflicts: `.spec.containers[name="web"].image`. */
export function formatPath(path: FieldPath): string {
  return path
    .map((element) => {
      const rest = element.slice(2);
      switch (element.slice(0, 2)) {
        case 'f:':
          return `.${rest}`;
        case 'k:': {
          const key = JSON.parse(rest) as JsonObject;
          return `[${Object.keys(key)
            .sort(compareStrings)
            .map((k) => `${k}=${canonicalJson(key[k])}`)
            .join(',')}]`;
        }
        case 'v:':
          return `[=${rest}]`;
        default:
          return `[${rest}]`;
      }
    })
    .join('');
}

export class FieldSet {
  member = false;
  readonly children = new Map<PathElement, FieldSet>();

  static of(paths: Iterable<FieldPath>): FieldSet {
    const set = new FieldSet();
    for (const path of paths) set.insert(path);
    return set;
  }

  insert(path: FieldPath): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk down the tree starts at this node
    let node: FieldSet = this;
    for (const element of path) {
      let child = node.children.get(element);
      if (!child) {
        child = new FieldSet();
        node.children.set(element, child);
      }
      node = child;
    }
    node.member = true;
  }

  /** The node at `path`, if the set has members at or below it. */
  child(path: FieldPath): FieldSet | undefined {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk down the tree starts at this node
    let node: FieldSet | undefined = this;
    for (const element of path) {
      node = node.children.get(element);
      if (!node) return undefined;
    }
    return node;
  }

  has(path: FieldPath): boolean {
    return this.child(path)?.member ?? false;
  }

  /** True when `path` or anything below it is a member. */
  covers(path: FieldPath): boolean {
    const node = this.child(path);
    return node !== undefined && !node.isEmpty();
  }

  /** Nodes other than the root are never empty (every operation prunes them), so this is O(1). */
  isEmpty(): boolean {
    return !this.member && this.children.size === 0;
  }

  /** Every member path; in FieldsV1 order unless `sorted` is false (faster). */
  paths(sorted = true): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (node: FieldSet, prefix: PathElement[]) => {
      for (const [element, child] of sorted ? sortedChildren(node) : node.children) {
        const path = [...prefix, element];
        if (child.member) out.push(path);
        walk(child, path);
      }
    };
    walk(this, []);
    return out;
  }

  union(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a || b);
  }

  difference(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a && !b);
  }

  intersection(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a && b);
  }

  /** A copy without the given paths and everything below them. */
  withoutSubtrees(paths: readonly FieldPath[]): FieldSet {
    const copy = this.union(new FieldSet());
    for (const path of paths) {
      if (path.length === 0) return new FieldSet();
      const parent = copy.child(path.slice(0, -1));
      parent?.children.delete(path[path.length - 1]);
    }
    return prune(copy) ?? new FieldSet();
  }

  /** A copy where the node at `path` is not a member itself (what is below it stays). */
  withoutMember(path: FieldPath): FieldSet {
    const copy = this.union(new FieldSet());
    const node = copy.child(path);
    if (node) node.member = false;
    return prune(copy) ?? new FieldSet();
  }

  /** The FieldsV1 JSON of this set, children in the order Kubernetes writes them. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    for (const [element, child] of sortedChildren(this)) {
      if (child.isEmpty()) continue;
      const body = child.toFieldsV1();
      out[element] = child.member && Object.keys(body).length > 0 ? { '.': {}, ...body } : body;
    }
    return out;
  }

  /** Reads FieldsV1 JSON; throws an Error naming the malformed part. */
  static fromFieldsV1(value: unknown): FieldSet {
    const read = (node: unknown, where: string): FieldSet => {
      if (!isJsonObject(node)) throw new Error(`${where} must be an object`);
      const set = new FieldSet();
      for (const [element, body] of Object.entries(node)) {
        if (element === '.') {
          set.member = true;
          continue;
        }
        const normalized = normalizeElement(element);
        if (normalized === undefined) throw new Error(`${where} has an invalid path element ${JSON.stringify(element)}`);
        const child = read(body, `${where}[${JSON.stringify(element)}]`);
        if (Object.keys(body as JsonObject).length === 0) child.member = true;
        const existing = set.children.get(normalized);
        set.children.set(normalized, existing ? existing.union(child) : child);
      }
      return set;
    };
    const set = read(value, 'fieldsV1');
    set.member = false;
    return set;
  }
}

function combine(a: FieldSet | undefined, b: FieldSet | undefined, keep: (inA: boolean, inB: boolean) => boolean): FieldSet {
  const out = new FieldSet();
  out.member = keep(a?.member ?? false, b?.member ?? false);
  const elements = new Set([...(a?.children.keys() ?? []), ...(b?.children.keys() ?? [])]);
  for (const element of elements) {
    const child = combine(a?.children.get(element), b?.children.get(element), keep);
    if (!child.isEmpty()) out.children.set(element, child);
  }
  return out;
}

function prune(node: FieldSet): FieldSet | undefined {
  for (const [element, child] of [...node.children]) {
    if (!prune(child)) node.children.delete(element);
  }
  return node.member || node.children.size > 0 ? node : undefined;
}

/** Children in Kubernetes order; each element is parsed once per sort, not once per comparison. */
function sortedChildren(node: FieldSet): Array<[PathElement, FieldSet]> {
  if (node.children.size < 2) return [...node.children];
  return [...node.children]
    .map((entry) => ({ entry, key: sortKey(entry[0]) }))
    .sort((a, b) => compareSortKeys(a.key, b.key))
    .map(({ entry }) => entry);
}

const ELEMENT_RANK: Readonly<Record<string, number>> = { 'f:': 0, 'k:': 1, 'v:': 2, 'i:': 3 };

interface SortKey {
  rank: number;
  text: string;
  /** k: the key's fields sorted by name; v: the value; i: the index. */
  key?: Array<[string, JsonValue]>;
  value?: JsonValue;
}

const sortKey: (element: PathElement) => SortKey = memo(sortKeyUncached);

function sortKeyUncached(element: PathElement): SortKey {
  const kind = element.slice(0, 2);
  const text = element.slice(2);
  const rank = ELEMENT_RANK[kind] ?? 4;
  if (kind === 'k:') {
    const key = JSON.parse(text) as JsonObject;
    return {
      rank,
      text,
      key: Object.keys(key)
        .sort(compareStrings)
        .map((name) => [name, key[name]!]),
    };
  }
  if (kind === 'v:') return { rank, text, value: JSON.parse(text) as JsonValue };
  if (kind === 'i:') return { rank, text, value: Number(text) };
  return { rank, text };
}

function compareSortKeys(a: SortKey, b: SortKey): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.key && b.key) {
    for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) {
      const byName = compareStrings(a.key[i][0], b.key[i][0]);
      if (byName !== 0) return byName;
      const byValue = compareValues(a.key[i][1], b.key[i][1]);
      if (byValue !== 0) return byValue;
    }
    return a.key.length - b.key.length;
  }
  if (a.value !== undefined && b.value !== undefined) return compareValues(a.value, b.value);
  return compareStrings(a.text, b.text);
}

/** structured-merge-diff's total order on values: numbers < strings < booleans < lists < maps < null. */
function compareValues(a: JsonValue, b: JsonValue): number {
  const rank = (v: JsonValue) =>
    typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : v === null ? 5 : 4;
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (typeof a === 'boolean') return Number(a) - Number(b);
  return compareStrings(canonicalJson(a), canonicalJson(b));
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
