/** The informer's store: objects by key with indexes, optionally bounded (ES7). */
import type { KubernetesObject } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { resourceIdOf, resourceKey, type ResourceID } from '../core/index.js';
import { compareResourceVersions, resourceVersionOf } from './resource-version.js';

/** Computes the index keys of an object (several, or none to leave it out of the index). */
export type Indexer<T> = (obj: T) => readonly string[];

/** Built-in index: `metadata.namespace` ('' for cluster-scoped objects). */
export const NAMESPACE_INDEX = 'namespace';
/** Built-in index: the uid of every owner reference. */
export const OWNER_UID_INDEX = 'ownerUid';

/** ES7: keep at most `maxEntries` objects; drop objects not read for `timeToIdleMs`. */
export interface BoundedStoreOptions {
  maxEntries: number;
  timeToIdleMs?: number | undefined;
}

/** The read side of an informer's cache. */
export interface StoreReader<T> {
  /** The cached object; undefined when unknown, or when a bounded store evicted it (see `fetch`). */
  get(id: ResourceID): T | undefined;
  /** Like get, but a bounded store reads an evicted object from the API (and caches it again). */
  fetch(id: ResourceID): Promise<T | undefined>;
  /** True when the informer knows the object exists (even if a bounded store evicted it). */
  has(id: ResourceID): boolean;
  /** The resourceVersion the informer last saw for the object (kept even after eviction). */
  resourceVersionOf(id: ResourceID): string | undefined;
  /** Cached objects, of one namespace or all. A bounded store returns only what it still holds. */
  list(namespace?: string): T[];
  /** Cached objects whose indexer returned `key`. */
  byIndex(indexName: string, key: string): T[];
  /** What the named indexer says about an object (e.g. one not in the store yet). */
  indexKeysOf(indexName: string, obj: T): readonly string[];
  /** Keys (`namespace/name`) of every object the informer knows. */
  keys(): string[];
  /** How many objects the informer knows (cached or evicted). */
  readonly size: number;
  /** How many objects the store holds now: `size` unless bounded, then at most `maxEntries`. */
  readonly held: number;
}

/** An informer's store as its users see it: reads, and indexes added (and removed) at any time. */
export type IndexedStore<T extends KubernetesObject> = StoreReader<T> &
  Pick<InformerStore<T>, 'addIndexer' | 'hasIndexer' | 'removeIndexer'>;

export interface InformerStoreOptions<T> {
  indexers?: Readonly<Record<string, Indexer<T>>> | undefined;
  bounded?: BoundedStoreOptions | undefined;
  /** Reads one object from the API (resolves undefined on 404); used by a bounded store's fetch. */
  find?: ((id: ResourceID) => Promise<T | undefined>) | undefined;
  /** Clock of the time-to-idle. */
  scheduler?: SchedulerLike | undefined;
  /**
   * Where indexer failures go (once per index and object version; the object is left out of
   * that index). Without it they are thrown.
   */
  onIndexerError?: ((error: Error) => void) | undefined;
}

interface Known {
  readonly id: ResourceID;
  readonly resourceVersion: string;
  readonly uid: string | undefined;
  readonly apiVersion: string | undefined;
  readonly kind: string | undefined;
}

/** The namespace a store key (`namespace/name`, or `name` for a cluster-scoped object) names; '' for none. */
function namespaceOfKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function idOfKey(key: string): ResourceID {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The informer's cache: objects by key, with indexes (by namespace, by owner uid, and user
 * indexers). Optionally bounded (ES7): an LRU with time-to-idle; what it evicts stays known by
 * key and resourceVersion so relists still diff correctly, and `fetch` reads it back.
 *
 * What it keeps per object is counted (bench:cache-memory): an unbounded store holds one map
 * entry per object and its key in the namespace index; what an object's other indexes list is
 * kept only when there is something (an owner, a user index value), and the namespace is read off
 * the key. Only a bounded store keeps a second record per object, for the objects it evicts.
 */
export class InformerStore<T extends KubernetesObject> implements StoreReader<T> {
  /** The objects held, by key. */
  private readonly objects: Map<string, T> | LRUCache<string, T>;
  /** A bounded store's record of every object it knows, evicted or not (an unbounded one reads its objects). */
  private readonly known: Map<string, Known> | undefined;
  private readonly indexers = new Map<string, Indexer<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  /** Per index but the namespace one: key → the values it is indexed under, for the keys with any. */
  private readonly indexedValues = new Map<string, Map<string, readonly string[]>>();
  /** `index\0key` → the resourceVersion whose indexer failure was reported (report each once). */
  private readonly reportedFailures = new Map<string, string>();

  constructor(private readonly options: InformerStoreOptions<T> = {}) {
    this.indexers.set(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
    this.indexers.set(OWNER_UID_INDEX, (obj) => (obj.metadata?.ownerReferences ?? []).map((ref) => ref.uid));
    for (const [name, indexer] of Object.entries(options.indexers ?? {})) this.checkIndexer(name, indexer);
    for (const [name, indexer] of Object.entries(options.indexers ?? {})) this.indexers.set(name, indexer);
    for (const name of this.indexers.keys()) {
      this.indices.set(name, new Map());
      if (name !== NAMESPACE_INDEX) this.indexedValues.set(name, new Map());
    }
    this.objects = options.bounded ? this.lru(options.bounded) : new Map<string, T>();
    this.known = options.bounded ? new Map() : undefined;
  }

  /** Adds an index at any time; the objects already cached are indexed at once. */
  addIndexer(name: string, indexer: Indexer<T>): void {
    this.checkIndexer(name, indexer);
    this.indexers.set(name, indexer);
    this.indices.set(name, new Map());
    this.indexedValues.set(name, new Map());
    for (const [key, obj] of this.heldEntries()) this.indexOne(key, name, obj);
  }

  /** Drops an index added with `addIndexer` or `indexers` (a user of a shared informer takes its indexes along when it goes). */
  removeIndexer(name: string): void {
    if (name === NAMESPACE_INDEX || name === OWNER_UID_INDEX) throw new Error(`store: index '${name}' is built in and cannot be removed`);
    this.indexers.delete(name);
    this.indices.delete(name);
    this.indexedValues.delete(name);
    for (const reported of this.reportedFailures.keys()) if (reported.startsWith(`${name}\0`)) this.reportedFailures.delete(reported);
  }

  hasIndexer(name: string): boolean {
    return this.indexers.has(name);
  }

  get(id: ResourceID): T | undefined {
    return this.objects.get(resourceKey(id));
  }

  async fetch(id: ResourceID): Promise<T | undefined> {
    const key = resourceKey(id);
    const cached = this.objects.get(key);
    if (cached || !this.known?.has(key) || !this.options.find) return cached;
    const read = await this.options.find(id);
    const known = this.known.get(key);
    const again = this.objects.get(key);
    if (again) return again;
    if (!read || !known) return read;
    const rv = resourceVersionOf(read);
    if (rv !== undefined && (compareResourceVersions(rv, known.resourceVersion) ?? 0) < 0) return read;
    this.known.set(key, this.knownOf(read));
    this.cache(key, read);
    return read;
  }

  has(id: ResourceID): boolean {
    const key = resourceKey(id);
    return this.known ? this.known.has(key) : this.objects.has(key);
  }

  resourceVersionOf(id: ResourceID): string | undefined {
    const key = resourceKey(id);
    if (this.known) return this.known.get(key)?.resourceVersion;
    const obj = this.objects.get(key);
    return obj === undefined ? undefined : (resourceVersionOf(obj) ?? '');
  }

  list(namespace?: string): T[] {
    if (namespace !== undefined) return this.byIndex(NAMESPACE_INDEX, namespace);
    return this.known ? this.collect([...this.known.keys()]) : [...this.objects.values()];
  }

  byIndex(indexName: string, key: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) {
      throw new Error(`store: no index named '${indexName}' (indexes: ${[...this.indices.keys()].join(', ')})`);
    }
    return this.collect([...(index.get(key) ?? [])]);
  }

  indexKeysOf(indexName: string, obj: T): readonly string[] {
    const indexer = this.indexers.get(indexName);
    if (!indexer) throw new Error(`store: no index named '${indexName}' (indexes: ${[...this.indices.keys()].join(', ')})`);
    return this.runIndexer(indexName, indexer, obj);
  }

  keys(): string[] {
    return [...(this.known ?? this.objects).keys()];
  }

  get size(): number {
    return (this.known ?? this.objects).size;
  }

  get held(): number {
    return this.objects.size;
  }

  /** Keys and resourceVersions of the known objects of one namespace, or of all. */
  versionsIn(namespace: string | undefined): Map<string, string> {
    const out = new Map<string, string>();
    if (this.known) {
      for (const [key, k] of this.known) {
        if (namespace === undefined || (k.id.namespace ?? '') === namespace) out.set(key, k.resourceVersion);
      }
      return out;
    }
    const keys = namespace === undefined ? this.objects.keys() : (this.indices.get(NAMESPACE_INDEX)?.get(namespace) ?? []);
    for (const key of keys) {
      const obj = this.objects.get(key);
      if (obj) out.set(key, resourceVersionOf(obj) ?? '');
    }
    return out;
  }

  /** Keys of the known objects whose id matches. */
  keysWhere(predicate: (id: ResourceID) => boolean): string[] {
    const out: string[] = [];
    if (this.known) {
      for (const [key, k] of this.known) if (predicate(k.id)) out.push(key);
    } else {
      for (const key of this.objects.keys()) if (predicate(idOfKey(key))) out.push(key);
    }
    return out;
  }

  /** Stores an object; returns the previously cached version, if the store still had it. */
  upsert(obj: T): T | undefined {
    const key = resourceKey(resourceIdOf(obj));
    const previous = this.peek(key);
    this.known?.set(key, this.knownOf(obj));
    if (previous === undefined) {
      this.unindex(key);
      this.cache(key, obj);
    } else {
      // A new version of an object held: its key (so its namespace entry) stays; other indexes change only where its values do.
      this.objects.set(key, obj);
      for (const name of this.indexedValues.keys()) this.reindex(key, name, obj);
    }
    return previous;
  }

  /**
   * Forgets an object; returns the last cached version or, when a bounded store had evicted it,
   * a stub with apiVersion, kind, name, namespace, uid and resourceVersion.
   */
  remove(key: string): T | undefined {
    const known = this.known?.get(key);
    const previous = this.peek(key);
    this.unindex(key);
    this.objects.delete(key);
    this.known?.delete(key);
    if (this.reportedFailures.size > 0) for (const name of this.indexers.keys()) this.reportedFailures.delete(`${name}\0${key}`);
    if (previous || !known) return previous;
    const metadata = { name: known.id.name, namespace: known.id.namespace, uid: known.uid, resourceVersion: known.resourceVersion };
    // A stand-in for an evicted object: only its identity is left (like client-go's DeletedFinalStateUnknown).
    return { apiVersion: known.apiVersion, kind: known.kind, metadata } as T;
  }

  clear(): void {
    this.known?.clear();
    this.objects.clear();
    this.reportedFailures.clear();
    for (const index of this.indices.values()) index.clear();
    for (const values of this.indexedValues.values()) values.clear();
  }

  private knownOf(obj: T): Known {
    return {
      id: resourceIdOf(obj),
      resourceVersion: resourceVersionOf(obj) ?? '',
      uid: obj.metadata?.uid,
      apiVersion: obj.apiVersion,
      kind: obj.kind,
    };
  }

  private cache(key: string, obj: T): void {
    this.objects.set(key, obj);
    for (const [name] of this.indexers) this.indexOne(key, name, obj);
  }

  private *heldEntries(): Iterable<[string, T]> {
    if (this.objects instanceof Map) {
      yield* this.objects;
      return;
    }
    for (const key of [...this.objects.keys()]) {
      const obj = this.objects.peek(key);
      if (obj) yield [key, obj];
    }
  }

  private collect(keys: string[]): T[] {
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.objects.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  private peek(key: string): T | undefined {
    return this.objects instanceof LRUCache ? this.objects.peek(key) : this.objects.get(key);
  }

  private indexOne(key: string, name: string, obj: T): void {
    const index = this.indices.get(name);
    if (!index) return;
    // The namespace index needs no record per object: the key names the namespace.
    if (name === NAMESPACE_INDEX) return addTo(index, namespaceOfKey(key), key);
    const indexer = this.indexers.get(name);
    const indexed = this.indexedValues.get(name);
    if (!indexer || !indexed) return;
    const values = distinct(this.runIndexer(name, indexer, obj));
    if (values.length === 0) return;
    indexed.set(key, values);
    for (const value of values) addTo(index, value, key);
  }

  /** Moves `key` to the values `obj` has now in one index, touching nothing when they are the same. */
  private reindex(key: string, name: string, obj: T): void {
    const indexed = this.indexedValues.get(name);
    const indexer = this.indexers.get(name);
    if (!indexed || !indexer) return;
    const before = indexed.get(key);
    const index = this.indices.get(name);
    const forget = (): void => {
      if (before === undefined) return;
      indexed.delete(key);
      for (const value of before) removeFrom(index, value, key);
    };
    let after: readonly string[];
    try {
      after = distinct(this.runIndexer(name, indexer, obj));
    } catch (err) {
      // As a first store would leave it: the object held, not indexed under its old values.
      forget();
      throw err;
    }
    if (before !== undefined && sameValues(before, after)) return;
    forget();
    if (after.length === 0) return;
    indexed.set(key, after);
    if (index) for (const value of after) addTo(index, value, key);
  }

  private unindex(key: string): void {
    removeFrom(this.indices.get(NAMESPACE_INDEX), namespaceOfKey(key), key);
    for (const [name, indexed] of this.indexedValues) {
      const values = indexed.get(key);
      if (!values) continue;
      indexed.delete(key);
      const index = this.indices.get(name);
      for (const value of values) removeFrom(index, value, key);
    }
  }

  private runIndexer(name: string, indexer: Indexer<T>, obj: T): readonly string[] {
    const reportKey = (): string => `${name}\0${obj.metadata?.name ? resourceKey(resourceIdOf(obj)) : '(unnamed object)'}`;
    try {
      // A user's indexer may break its type: what it returns is checked, not trusted.
      const values: unknown = indexer(obj);
      if (!isStringArray(values)) throw new Error(`must return an array of strings (got ${JSON.stringify(values)})`);
      if (this.reportedFailures.size > 0) this.reportedFailures.delete(reportKey());
      return values;
    } catch (err) {
      const rv = resourceVersionOf(obj) ?? '';
      const key = obj.metadata?.name ? resourceKey(resourceIdOf(obj)) : '(unnamed object)';
      const error = new Error(`indexer '${name}' failed on ${obj.kind ?? 'object'} ${key}: ${(err as Error).message ?? String(err)}`, {
        cause: err,
      });
      if (!this.options.onIndexerError) throw error;
      if (this.reportedFailures.get(reportKey()) !== rv) this.options.onIndexerError(error);
      this.reportedFailures.set(reportKey(), rv);
      return [];
    }
  }

  private checkIndexer(name: string, indexer: unknown): void {
    if (typeof name !== 'string' || name === '') throw new Error('store: an index name must be a non-empty string');
    if (name === NAMESPACE_INDEX || name === OWNER_UID_INDEX) throw new Error(`store: index '${name}' is built in and cannot be replaced`);
    if (typeof indexer !== 'function') throw new Error(`store: indexer '${name}' must be a function (obj) => string[]`);
  }

  private lru(bounded: BoundedStoreOptions): LRUCache<string, T> {
    const { maxEntries, timeToIdleMs } = bounded;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new Error(`store.bounded.maxEntries must be a positive integer (got ${String(maxEntries)})`);
    }
    if (timeToIdleMs !== undefined && !(Number.isFinite(timeToIdleMs) && timeToIdleMs > 0)) {
      throw new Error(`store.bounded.timeToIdleMs must be a positive number of milliseconds (got ${String(timeToIdleMs)})`);
    }
    const scheduler = this.options.scheduler ?? asyncScheduler;
    return new LRUCache<string, T>({
      max: maxEntries,
      ...(timeToIdleMs !== undefined ? { ttl: timeToIdleMs, updateAgeOnGet: true, ttlResolution: 0 } : {}),
      // lru-cache reads a start time of 0 as "no TTL"; a virtual clock starts at 0.
      perf: { now: () => scheduler.now() + 1 },
      // Evicted objects leave the indexes but stay known (key and resourceVersion).
      dispose: (_value, key, reason) => {
        if (reason === 'evict' || reason === 'expire') this.unindex(key);
      },
    });
  }
}

function isStringArray(values: unknown): values is string[] {
  if (!Array.isArray(values)) return false;
  for (const value of values) if (typeof value !== 'string') return false;
  return true;
}

/** An indexer's values, each once. */
function distinct(values: readonly string[]): readonly string[] {
  return values.length <= 1 ? values : [...new Set(values)];
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>> | undefined, value: string, key: string): void {
  const keys = index?.get(value);
  if (!keys?.delete(key)) return;
  if (keys.size === 0) index?.delete(value);
}
