/**
 * Object storage: one global resourceVersion counter (like etcd's revision), objects by
 * resource and `namespace/name`, a bounded history per resource for watches, and indexes by uid
 * and by owner uid for garbage collection.
 *
 * Stored objects are never mutated: every write stores a new object, so readers can serialize a
 * stored object (or keep a reference in a list snapshot) without copying it.
 */
import type { LogRecord } from './durable/records.js';
import type { JsonObject } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { nameOf, namespaceOf, ownerRefsOf, uidOf } from '../base/meta.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  /** The resource type key (`group/plural`). */
  readonly resource: string;
  /** The new state; for DELETED the last state, carrying the deletion resourceVersion. */
  readonly object: JsonObject;
  /** The state before a MODIFIED or DELETED. */
  readonly prev?: JsonObject;
  /** Serialized watch lines, shared by all watchers (keyed by event type and apiVersion). */
  lines?: Map<string, string>;
}

export interface ObjectRef {
  resource: string;
  namespace: string;
  name: string;
}

/**
 * A ring of the most recent events of one resource, in resourceVersion order, bounded by count
 * and by bytes (each event's object as JSON): like etcd's compaction and the watch cache's bound,
 * updates of a large object evict old events instead of keeping every version whole.
 */
export class HistoryRing {
  private readonly buf: (StoreEvent | undefined)[];
  private readonly sizes: number[];
  private start = 0;
  private size = 0;
  private bytes = 0;
  /** Events at or below this resourceVersion are gone: a watch from an older one gets 410. */
  compactedRv: number;

  constructor(
    readonly capacity: number,
    compactedRv: number,
    readonly maxBytes = Infinity,
  ) {
    this.buf = new Array<StoreEvent | undefined>(Math.max(1, capacity));
    this.sizes = new Array<number>(this.buf.length).fill(0);
    this.compactedRv = compactedRv;
  }

  /** Held bytes of the kept events (their objects as JSON). */
  get heldBytes(): number {
    return this.bytes;
  }

  push(e: StoreEvent): void {
    const bytes = JSON.stringify(e.object).length;
    if (this.size === this.buf.length) this.evictOldest();
    while (this.size > 0 && this.bytes + bytes > this.maxBytes) this.evictOldest();
    const at = (this.start + this.size) % this.buf.length;
    this.buf[at] = e;
    this.sizes[at] = bytes;
    this.bytes += bytes;
    this.size++;
  }

  private evictOldest(): void {
    const evicted = this.buf[this.start];
    if (evicted) this.compactedRv = evicted.rv;
    this.bytes -= this.sizes[this.start] ?? 0;
    this.buf[this.start] = undefined;
    this.sizes[this.start] = 0;
    this.start = (this.start + 1) % this.buf.length;
    this.size--;
  }

  /** The events after `rv`, or undefined when some of them were compacted away. */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.buf[(this.start + mid) % this.buf.length] as StoreEvent;
      if (e.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = lo; i < this.size; i++) out.push(this.buf[(this.start + i) % this.buf.length] as StoreEvent);
    return out;
  }

  compact(rv: number): void {
    this.buf.fill(undefined);
    this.sizes.fill(0);
    this.start = 0;
    this.size = 0;
    this.bytes = 0;
    this.compactedRv = Math.max(this.compactedRv, rv);
  }
}

interface Table {
  objects: Map<string, JsonObject>;
  /** Keys in `namespace/name` order (etcd's key order), rebuilt lazily after creates and deletes. */
  sorted: string[] | null;
  history: HistoryRing;
}

export interface StoreOptions {
  /** Events kept per resource for watches that resume from a resourceVersion. */
  historySize?: number;
  /** Bytes of events (their objects as JSON) kept per resource (default 64 MiB). */
  historyBytes?: number;
  /** Told of every change before anyone else, to make it durable (the data directory's log). */
  journal?: (change: LogRecord) => void;
}

export type StoreListener = (e: StoreEvent) => void;

function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function refKey(r: ObjectRef): string {
  return `${r.resource}\u0000${r.namespace}\u0000${r.name}`;
}

function parseRefKey(k: string): ObjectRef {
  const [resource = '', namespace = '', name = ''] = k.split('\u0000');
  return { resource, namespace, name };
}

/** A copy of `obj` with a new metadata.resourceVersion (the rest shared, never mutated). */
function withResourceVersion(obj: JsonObject, rv: number): JsonObject {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  return { ...obj, metadata: { ...meta, resourceVersion: String(rv) } };
}

export class Store {
  private rv = 0;
  private readonly tables = new Map<string, Table>();
  private readonly byUid = new Map<string, ObjectRef>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly listeners = new Set<StoreListener>();
  private readonly pending: StoreEvent[] = [];
  private dispatching = false;
  private readonly historySize: number;
  private readonly historyBytes: number;
  /** Compaction point for resources whose history starts later (first write after a load or compaction). */
  private compactedRv = 0;
  private readonly journal: ((change: LogRecord) => void) | undefined;

  constructor(options: StoreOptions = {}) {
    this.historySize = options.historySize ?? 10_000;
    this.historyBytes = options.historyBytes ?? 64 * 1024 * 1024;
    this.journal = options.journal;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** The resourceVersion of the last compaction (a fault, or loading saved state). */
  get compactedResourceVersion(): number {
    return this.compactedRv;
  }

  onEvent(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private table(resource: string): Table {
    let t = this.tables.get(resource);
    if (!t) {
      t = { objects: new Map(), sorted: null, history: new HistoryRing(this.historySize, this.compactedRv, this.historyBytes) };
      this.tables.set(resource, t);
    }
    return t;
  }

  get(resource: string, namespace: string, name: string): JsonObject | undefined {
    return this.tables.get(resource)?.objects.get(objectKey(namespace, name));
  }

  count(resource: string): number {
    return this.tables.get(resource)?.objects.size ?? 0;
  }

  totalObjects(): number {
    let n = 0;
    for (const t of this.tables.values()) n += t.objects.size;
    return n;
  }

  /** Objects of a resource in key order, optionally in one namespace. The array is the caller's. */
  list(resource: string, namespace?: string): JsonObject[] {
    const t = this.tables.get(resource);
    if (!t) return [];
    if (!t.sorted) t.sorted = [...t.objects.keys()].sort();
    const out: JsonObject[] = [];
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    for (const k of t.sorted) {
      if (prefix !== undefined && !k.startsWith(prefix)) continue;
      out.push(t.objects.get(k) as JsonObject);
    }
    return out;
  }

  /** Events of a resource after `rv`; undefined when `rv` is older than the kept history. */
  eventsSince(resource: string, rv: number): StoreEvent[] | undefined {
    const t = this.tables.get(resource);
    if (!t) return rv < this.compactedRv ? undefined : [];
    return t.history.since(rv);
  }

  /** Drops all history up to now: watches resuming from an older resourceVersion get 410 Expired. */
  compact(): void {
    this.compactedRv = this.rv;
    for (const t of this.tables.values()) t.history.compact(this.rv);
  }

  resolveUid(uid: string): ObjectRef | undefined {
    return this.byUid.get(uid);
  }

  dependentsOf(ownerUid: string): ObjectRef[] {
    const set = this.byOwner.get(ownerUid);
    return set ? [...set].map(parseRefKey) : [];
  }

  /** Stores a new object (the store takes ownership); returns it with its resourceVersion. */
  insert(resource: string, obj: JsonObject): JsonObject {
    const t = this.table(resource);
    const ref = { resource, namespace: namespaceOf(obj), name: nameOf(obj) };
    const key = objectKey(ref.namespace, ref.name);
    // Never over another object: that would leave its watchers and indexes on a ghost.
    if (t.objects.has(key)) throw new Error(`store: insert over existing ${resource} ${key}`);
    const stored = withResourceVersion(obj, ++this.rv);
    t.objects.set(key, stored);
    t.sorted = null;
    this.index(ref, undefined, stored);
    this.journal?.({ t: 'put', r: resource, o: stored });
    this.emit(t, { type: 'ADDED', rv: this.rv, resource, object: stored });
    return stored;
  }

  /** Replaces an existing object; returns the stored version with its new resourceVersion. */
  replace(resource: string, obj: JsonObject): JsonObject {
    const t = this.table(resource);
    const ref = { resource, namespace: namespaceOf(obj), name: nameOf(obj) };
    const key = objectKey(ref.namespace, ref.name);
    const prev = t.objects.get(key);
    if (!prev) throw new Error(`store: replace of missing ${resource} ${key}`);
    const stored = withResourceVersion(obj, ++this.rv);
    t.objects.set(key, stored);
    this.index(ref, prev, stored);
    this.journal?.({ t: 'put', r: resource, o: stored });
    this.emit(t, { type: 'MODIFIED', rv: this.rv, resource, object: stored, prev });
    return stored;
  }

  /** Removes an object; returns its last state carrying the deletion resourceVersion. */
  remove(resource: string, namespace: string, name: string): JsonObject | undefined {
    const t = this.tables.get(resource);
    const key = objectKey(namespace, name);
    const prev = t?.objects.get(key);
    if (!t || !prev) return undefined;
    const last = withResourceVersion(prev, ++this.rv);
    t.objects.delete(key);
    t.sorted = null;
    this.index({ resource, namespace, name }, prev, undefined);
    this.journal?.({ t: 'del', r: resource, ns: namespace, n: name, rv: this.rv });
    this.emit(t, { type: 'DELETED', rv: this.rv, resource, object: last, prev });
    return last;
  }

  /** Forgets a whole resource type without events (its watchers are closed by the caller). */
  dropResource(resource: string): void {
    const t = this.tables.get(resource);
    if (!t) return;
    for (const obj of t.objects.values()) {
      this.index({ resource, namespace: namespaceOf(obj), name: nameOf(obj) }, obj, undefined);
    }
    this.tables.delete(resource);
    this.journal?.({ t: 'drop', r: resource });
  }

  /** Everything, for a snapshot of the data directory. */
  dump(): { resourceVersion: number; objects: { resource: string; object: JsonObject }[] } {
    const objects: { resource: string; object: JsonObject }[] = [];
    for (const [resource, t] of this.tables) for (const object of t.objects.values()) objects.push({ resource, object });
    return { resourceVersion: this.rv, objects };
  }

  /** Restores saved objects as they were (no events); history starts empty at the saved revision. */
  restore(resourceVersion: number, objects: { resource: string; object: JsonObject }[]): void {
    for (const { resource, object } of objects) {
      const t = this.table(resource);
      const ref = { resource, namespace: namespaceOf(object), name: nameOf(object) };
      t.objects.set(objectKey(ref.namespace, ref.name), object);
      t.sorted = null;
      this.index(ref, undefined, object);
    }
    this.rv = Math.max(this.rv, resourceVersion);
    this.compact();
  }

  private index(ref: ObjectRef, prev: JsonObject | undefined, next: JsonObject | undefined): void {
    const key = refKey(ref);
    const prevUid = prev ? uidOf(prev) : '';
    const nextUid = next ? uidOf(next) : '';
    if (prevUid && prevUid !== nextUid) this.byUid.delete(prevUid);
    if (nextUid) this.byUid.set(nextUid, ref);
    const prevOwners = prev ? ownerRefsOf(prev).map((o) => o.uid) : [];
    const nextOwners = next ? ownerRefsOf(next).map((o) => o.uid) : [];
    for (const o of prevOwners) {
      if (nextOwners.includes(o)) continue;
      const set = this.byOwner.get(o);
      set?.delete(key);
      if (set?.size === 0) this.byOwner.delete(o);
    }
    for (const o of nextOwners) {
      let set = this.byOwner.get(o);
      if (!set) this.byOwner.set(o, (set = new Set()));
      set.add(key);
    }
  }

  /**
   * Listeners see events in resourceVersion order even when one of them writes while being told
   * of an event: events raised meanwhile wait in a queue.
   */
  private emit(t: Table, e: StoreEvent): void {
    t.history.push(e);
    this.pending.push(e);
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let next = this.pending.shift(); next; next = this.pending.shift()) {
        for (const l of this.listeners) {
          try {
            l(next);
          } catch (err) {
            // A failing listener must not keep the others (watchers, controllers) from the event.
            console.error('rxkube apiserver: store listener failed', err);
          }
        }
      }
    } finally {
      this.dispatching = false;
    }
  }
}
