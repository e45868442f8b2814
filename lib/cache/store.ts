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

interface ObjectMap<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  delete(key: string): void;
  clear(): void;
  readonly size: number;
}

/**
 * The informer's cache: objects by key, with indexes (by namespace, by owner uid, and user
 * indexers). Optionally bounded (ES7): an LRU with time-to-idle; what it evicts stays known by
 * key and resourceVersion so relists still diff correctly, and `fetch` reads it back.
 */
export class InformerStore<T extends KubernetesObject> implements StoreReader<T> {
  private readonly known = new Map<string, Known>();
  private readonly objects: ObjectMap<T>;
  private readonly indexers = new Map<string, Indexer<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly indexedKeys = new Map<string, Map<string, readonly string[]>>();
  /** `index\0key` → the resourceVersion whose indexer failure was reported (report each once). */
  private readonly reportedFailures = new Map<string, string>();

  constructor(private readonly options: InformerStoreOptions<T> = {}) {
    this.indexers.set(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
    this.indexers.set(OWNER_UID_INDEX, (obj) => (obj.metadata?.ownerReferences ?? []).map((ref) => ref.uid));
    for (const [name, indexer] of Object.entries(options.indexers ?? {})) this.checkIndexer(name, indexer);
    for (const [name, indexer] of Object.entries(options.indexers ?? {})) this.indexers.set(name, indexer);
    for (const name of this.indexers.keys()) this.indices.set(name, new Map());
    this.objects = options.bounded ? this.lru(options.bounded) : new Map<string, T>();
  }

  /** Adds an index at any time; the objects already cached are indexed at once. */
  addIndexer(name: string, indexer: Indexer<T>): void {
    this.checkIndexer(name, indexer);
    this.indexers.set(name, indexer);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const key of this.indexedKeys.keys()) {
      const obj = this.peek(key);
      if (obj) this.indexOne(key, name, obj);
    }
  }

  /** Drops an index added with `addIndexer` or `indexers` (a user of a shared informer takes its indexes along when it goes). */
  removeIndexer(name: string): void {
    if (name === NAMESPACE_INDEX || name === OWNER_UID_INDEX) throw new Error(`store: index '${name}' is built in and cannot be removed`);
    this.indexers.delete(name);
    this.indices.delete(name);
    for (const perKey of this.indexedKeys.values()) perKey.delete(name);
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
    if (cached || !this.known.has(key) || !this.options.find) return cached;
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
    return this.known.has(resourceKey(id));
  }

  resourceVersionOf(id: ResourceID): string | undefined {
    return this.known.get(resourceKey(id))?.resourceVersion;
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return this.collect([...this.indexedKeys.keys()]);
    return this.byIndex(NAMESPACE_INDEX, namespace);
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
    return [...this.known.keys()];
  }

  get size(): number {
    return this.known.size;
  }

  get held(): number {
    return this.objects.size;
  }

  /** Keys and resourceVersions of the known objects of one namespace, or of all. */
  versionsIn(namespace: string | undefined): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, k] of this.known) {
      if (namespace === undefined || (k.id.namespace ?? '') === namespace) out.set(key, k.resourceVersion);
    }
    return out;
  }

  /** Keys of the known objects whose id matches. */
  keysWhere(predicate: (id: ResourceID) => boolean): string[] {
    const out: string[] = [];
    for (const [key, k] of this.known) if (predicate(k.id)) out.push(key);
    return out;
  }

  /** Stores an object; returns the previously cached version, if the store still had it. */
  upsert(obj: T): T | undefined {
    const key = resourceKey(resourceIdOf(obj));
    const previous = this.peek(key);
    this.unindex(key);
    this.known.set(key, this.knownOf(obj));
    this.cache(key, obj);
    return previous;
  }

  /**
   * Forgets an object; returns the last cached version or, when a bounded store had evicted it,
   * a stub with apiVersion, kind, name, namespace, uid and resourceVersion.
   */
  remove(key: string): T | undefined {
    const known = this.known.get(key);
    const previous = this.peek(key);
    this.unindex(key);
    this.objects.delete(key);
    this.known.delete(key);
    for (const name of this.indexers.keys()) this.reportedFailures.delete(`${name}\0${key}`);
    if (previous || !known) return previous;
    const metadata = { name: known.id.name, namespace: known.id.namespace, uid: known.uid, resourceVersion: known.resourceVersion };
    // A stand-in for an evicted object: only its identity is left (like client-go's DeletedFinalStateUnknown).
    return { apiVersion: known.apiVersion, kind: known.kind, metadata } as T;
  }

  clear(): void {
    this.known.clear();
    this.objects.clear();
    this.indexedKeys.clear();
    this.reportedFailures.clear();
    for (const index of this.indices.values()) index.clear();
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

  private collect(keys: string[]): T[] {
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.objects.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  private peek(key: string): T | undefined {
    return this.objects instanceof LRUCache ? (this.objects.peek(key) as T | undefined) : this.objects.get(key);
  }

  private indexOne(key: string, name: string, obj: T): void {
    const indexer = this.indexers.get(name);
    const index = this.indices.get(name);
    if (!indexer || !index) return;
    const values = [...new Set(this.runIndexer(name, indexer, obj))];
    let perKey = this.indexedKeys.get(key);
    if (!perKey) this.indexedKeys.set(key, (perKey = new Map()));
    perKey.set(name, values);
    for (const value of values) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string): void {
    const perKey = this.indexedKeys.get(key);
    if (!perKey) return;
    this.indexedKeys.delete(key);
    for (const [name, values] of perKey) {
      const index = this.indices.get(name);
      for (const value of values) {
        const keys = index?.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index?.delete(value);
      }
    }
  }

  private runIndexer(name: string, indexer: Indexer<T>, obj: T): readonly string[] {
    const key = obj.metadata?.name ? resourceKey(resourceIdOf(obj)) : '(unnamed object)';
    const reportKey = `${name}\0${key}`;
    try {
      const values = indexer(obj);
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
        throw new Error(`must return an array of strings (got ${JSON.stringify(values)})`);
      }
      this.reportedFailures.delete(reportKey);
      return values;
    } catch (err) {
      const rv = resourceVersionOf(obj) ?? '';
      const error = new Error(`indexer '${name}' failed on ${obj.kind ?? 'object'} ${key}: ${(err as Error).message ?? String(err)}`, {
        cause: err,
      });
      if (!this.options.onIndexerError) throw error;
      if (this.reportedFailures.get(reportKey) !== rv) this.options.onIndexerError(error);
      this.reportedFailures.set(reportKey, rv);
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
