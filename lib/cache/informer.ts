/** The informer: list+watch loops per namespace into one store, with sync, health and a stream of changes (ES1, ES2, ES6). */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import {
  asyncScheduler,
  BehaviorSubject,
  concat,
  defer,
  distinctUntilChanged,
  filter,
  firstValueFrom,
  from,
  map,
  merge,
  Observable,
  Subject,
  timer,
  type SchedulerLike,
  type Subscription,
} from 'rxjs';
import { resourceIdOf, resourceKey, type BackoffPolicy, type ResourceID } from '../core/index.js';
import {
  errorMessage,
  formatFieldSelector,
  formatLabelSelector,
  resolveDescriptor,
  type FieldSelector,
  type LabelSelector,
  type ResolvedDescriptor,
  type ResourceDescriptor,
} from '../kube/index.js';
import { kubeListWatch, type ListWatchClient } from './list-watch.js';
import { reflector, type ReflectorFailure, type ReflectorMessage } from './reflector.js';
import { resourceVersionOf } from './resource-version.js';
import { InformerStore, type BoundedStoreOptions, type IndexedStore, type Indexer } from './store.js';
import { compactManagedFields, type ObjectTransform } from './transform.js';

export type InformerEventType = 'added' | 'modified' | 'deleted';

/** A change of one cached object. `oldObject` is the cached version before a modify or delete. */
export interface InformerEvent<T> {
  readonly type: InformerEventType;
  readonly object: T;
  readonly oldObject?: T | undefined;
  /** Derived from a list (the first one, a relist, a new namespace, a replay of the cache), not from a watch event. */
  readonly listed?: boolean | undefined;
}

/** ES6: every namespace, or the listed ones (one list+watch per namespace). */
export type Namespaces = 'all' | readonly string[];

export interface InformerOptions<T extends KubernetesObject> {
  resource: ResourceDescriptor;
  /** Where to list and watch; or pass `client`. */
  kubeConfig?: KubeConfig | undefined;
  /** Replaces the client-node based list/watch (kubeConfig is then not needed). */
  client?: ListWatchClient<T> | undefined;
  /** Name for events, logs and errors (default: the resource's plural). */
  name?: string | undefined;
  /** Default 'all'. Must be 'all' for a cluster-scoped resource. */
  namespaces?: Namespaces | undefined;
  /** ES8: applied to every list and watch. */
  labelSelector?: LabelSelector | undefined;
  fieldSelector?: FieldSelector | undefined;
  /** Extra indexes for `store.byIndex` (namespace and owner uid are built in). */
  indexers?: Readonly<Record<string, Indexer<T>>> | undefined;
  /**
   * Rewrites every listed and watched object before it is cached and emitted (default
   * `compactManagedFields`; pass `(object) => object` to keep objects as the server sent them).
   */
  transform?: ObjectTransform<T> | undefined;
  /**
   * List and watch the objects' metadata only (`PartialObjectMetadata`: names, labels,
   * annotations, owner references, finalizers, deletion marks), as client-go's metadata informer
   * does: declare the informer's type as `PartialObjectMetadata`. A cache of Secrets or Pods that
   * only maps them to their owners then holds none of their data.
   */
  metadataOnly?: boolean | undefined;
  /** ES7: bound the cache (LRU with time-to-idle); misses read from the API via `store.fetch`. */
  bounded?: BoundedStoreOptions | undefined;
  /** Asked of the server on every watch (default 290 s). */
  timeoutSeconds?: number | undefined;
  /** A watch silent for timeoutSeconds plus this is dead; a request unanswered this long is abandoned (default 30 s). */
  deadMarginMs?: number | undefined;
  /** A list slower than this is abandoned and retried (default 60 s). */
  listTimeoutMs?: number | undefined;
  /**
   * ES9: stream the initial list and every relist as a watch-list (`sendInitialEvents`) where the
   * server serves one (default true), objects going into the cache as they arrive; paged lists
   * where it refuses (a server before 1.27, or with the feature off).
   */
  watchList?: boolean | undefined;
  /** Reconnect backoff (default ES1: 800 ms → 30 s, factor 2, jitter, reset after 30 s of health). */
  backoff?: Partial<BackoffPolicy> | undefined;
  scheduler?: SchedulerLike | undefined;
  /** Jitter source, [0, 1). */
  random?: (() => number) | undefined;
}

/** A failed list or watch; the informer retries it after `delayMs` (a drop resumed at once is none: see `ScopeStatus.drops`). */
export interface InformerError extends Omit<ReflectorFailure, 'dropped'> {
  readonly informer: string;
  /** undefined for the all-namespaces (or cluster-scoped) list+watch. */
  readonly namespace: string | undefined;
}

export type ScopeState = 'starting' | 'listed' | 'watching' | 'failing';

/** The state of one list+watch (one per namespace, or one for all). */
export interface ScopeStatus {
  readonly namespace: string | undefined;
  readonly state: ScopeState;
  readonly synced: boolean;
  /** The last resourceVersion seen (from the list, events and bookmarks). */
  readonly resourceVersion: string | undefined;
  readonly lastError: unknown;
  /** Successful lists: 1 after the start, one more per relist (410). */
  readonly lists: number;
  /** Watch connections that dropped (or died silent) and were resumed at once, not counted as failures. */
  readonly drops: number;
}

export interface WhenSyncedOptions {
  /** Default 2 min (ES2). */
  timeoutMs?: number | undefined;
  /** Reject on the first list/watch failure before the sync (ES2 stopOnInformerErrorDuringStartup, default true). */
  failOnError?: boolean | undefined;
}

interface Scope {
  readonly namespace: string | undefined;
  subscription: Subscription | undefined;
  state: ScopeState;
  synced: boolean;
  resourceVersion: string | undefined;
  lastError: unknown;
  lists: number;
  drops: number;
  /** A streamed (re)list in progress: what the cache held when it began, and what came since. */
  listing: Listing | undefined;
}

interface Listing {
  readonly namespace: string | undefined;
  readonly before: Map<string, string>;
  readonly seen: Set<string>;
}

const ALL = '*';

/**
 * What the users of an informer rely on: an `Informer`, or a user's share of an informer that an
 * `InformerPool` shares between users (then `stop()` ends only that share).
 */
export interface InformerLike<T extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  readonly resource: ResolvedDescriptor;
  /** The cache. Objects are the server's JSON; treat them as read-only. */
  readonly store: IndexedStore<T>;
  /** Live changes, from now on (hot). The store is updated before each change is emitted. */
  readonly events$: Observable<InformerEvent<T>>;
  /** Every cached object as 'added' first, then the live changes. */
  readonly cacheAndEvents$: Observable<InformerEvent<T>>;
  /** Failed lists and watches (each is retried). */
  readonly errors$: Observable<InformerError>;
  /** Indexers that threw: the object is left out of that index. */
  readonly indexerErrors$: Observable<Error>;
  readonly synced$: Observable<boolean>;
  readonly healthy$: Observable<boolean>;
  /** The namespaces asked for: 'all' or the list. */
  readonly namespaces: Namespaces;
  hasSynced(): boolean;
  isHealthy(): boolean;
  status(): ScopeStatus[];
  start(): this;
  stop(): void;
  setNamespaces(namespaces: Namespaces): void;
  whenSynced(options?: WhenSyncedOptions): Promise<void>;
}

/** ES6: 'all' as [undefined], or the namespaces sorted and unique; an error naming the informer otherwise. */
export function checkNamespaces(informer: string, resource: ResolvedDescriptor, namespaces: Namespaces): readonly (string | undefined)[] {
  if (namespaces === 'all') return [undefined];
  if (!Array.isArray(namespaces) || namespaces.length === 0) {
    throw new Error(`informer ${informer}: namespaces must be 'all' or a non-empty list of namespace names`);
  }
  if (!resource.namespaced) {
    throw new Error(`informer ${informer}: ${resource.kind} is cluster-scoped; namespaces must be 'all'`);
  }
  for (const ns of namespaces) {
    if (typeof ns !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) {
      throw new Error(`informer ${informer}: '${String(ns)}' is not a valid namespace name`);
    }
  }
  return [...new Set(namespaces)].sort();
}

/**
 * ES1, ES2, ES6, ES7, ES8: a cache of one resource type kept up to date by list+watch loops
 * (one per namespace, or one for all), with a store, a sync signal, a health signal and a hot
 * stream of changes. `start()` opens the watches, `stop()` closes all of them.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> implements InformerLike<T> {
  readonly name: string;
  readonly resource: ResolvedDescriptor;
  /** The cache. Objects are the server's JSON; treat them as read-only. */
  readonly store: IndexedStore<T>;

  private readonly cache: InformerStore<T>;
  private readonly transform: ObjectTransform<T>;
  private readonly client: ListWatchClient<T>;
  private readonly scheduler: SchedulerLike;
  private readonly labelSelector: string;
  private readonly fieldSelector: string;
  private readonly changes = new Subject<InformerEvent<T>>();
  private readonly failures = new Subject<InformerError>();
  private readonly indexFailures = new Subject<Error>();
  private readonly syncedState = new BehaviorSubject(false);
  private readonly healthyState = new BehaviorSubject(true);
  private readonly scopes = new Map<string, Scope>();
  private wanted: readonly (string | undefined)[];
  private started = false;
  private stopped = false;

  constructor(private readonly options: InformerOptions<T>) {
    this.resource = resolveDescriptor(options.resource);
    this.name = options.name ?? this.resource.plural;
    if (!options.client && !options.kubeConfig) {
      throw new Error(`informer ${this.name}: pass kubeConfig (or a ListWatchClient as client)`);
    }
    for (const key of ['timeoutSeconds', 'deadMarginMs', 'listTimeoutMs'] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
        throw new Error(`informer ${this.name}: ${key} must be a positive number (got ${String(value)})`);
      }
    }
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.transform = options.transform ?? compactManagedFields;
    this.client =
      options.client ?? kubeListWatch<T>(options.kubeConfig as KubeConfig, this.resource, { metadataOnly: options.metadataOnly });
    this.labelSelector = formatLabelSelector(options.labelSelector);
    this.fieldSelector = formatFieldSelector(options.fieldSelector);
    this.wanted = this.checkNamespaces(options.namespaces ?? 'all');
    this.cache = new InformerStore<T>({
      indexers: options.indexers,
      bounded: options.bounded,
      find: async (id) => {
        const object = await this.client.find(id);
        return object === undefined ? undefined : this.transform(object);
      },
      scheduler: this.scheduler,
      // An indexer that throws leaves that object out of its index; the list+watch goes on.
      onIndexerError: (error) => this.indexFailures.next(error),
    });
    this.store = this.cache;
  }

  /** Live changes, from now on (hot). The store is updated before each change is emitted. */
  get events$(): Observable<InformerEvent<T>> {
    return this.changes.asObservable();
  }

  /** Every cached object as 'added' first, then the live changes: what a late subscriber needs. */
  get cacheAndEvents$(): Observable<InformerEvent<T>> {
    return defer(() =>
      concat(from(this.cache.list().map((object): InformerEvent<T> => ({ type: 'added', object, listed: true }))), this.changes),
    );
  }

  /** Failed lists and watches (each is retried). */
  get errors$(): Observable<InformerError> {
    return this.failures.asObservable();
  }

  /** Indexers that threw, once per index and object version: the object is left out of that index. */
  get indexerErrors$(): Observable<Error> {
    return this.indexFailures.asObservable();
  }

  /** ES2: true once every list+watch has listed (false again while a newly added namespace lists). */
  get synced$(): Observable<boolean> {
    return this.syncedState.pipe(distinctUntilChanged());
  }

  hasSynced(): boolean {
    return this.syncedState.value;
  }

  /** False while any list or watch is failing or found dead (readiness, OB3). */
  get healthy$(): Observable<boolean> {
    return this.healthyState.pipe(distinctUntilChanged());
  }

  isHealthy(): boolean {
    return this.healthyState.value;
  }

  /** The namespaces asked for: 'all' or the list. */
  get namespaces(): Namespaces {
    return this.wanted[0] === undefined ? 'all' : (this.wanted as string[]);
  }

  status(): ScopeStatus[] {
    return [...this.scopes.values()].map(({ namespace, state, synced, resourceVersion, lastError, lists, drops }) => ({
      namespace,
      state,
      synced,
      resourceVersion,
      lastError,
      lists,
      drops,
    }));
  }

  /** Opens the list+watch loops (idempotent). */
  start(): this {
    if (this.stopped) throw new Error(`informer ${this.name} was stopped; create a new one`);
    if (this.started) return this;
    this.started = true;
    this.reconcileScopes();
    return this;
  }

  /** Closes every watch and timer; completes the streams. The store keeps its last content. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const scope of this.scopes.values()) scope.subscription?.unsubscribe();
    this.scopes.clear();
    this.changes.complete();
    this.failures.complete();
    this.indexFailures.complete();
    this.syncedState.complete();
    this.healthyState.complete();
  }

  /**
   * ES6: changes the namespaces at run time. Watches of removed namespaces close and their
   * objects are emitted as deleted; added namespaces are listed and their objects emitted as added.
   */
  setNamespaces(namespaces: Namespaces): void {
    if (this.stopped) throw new Error(`informer ${this.name} was stopped`);
    this.wanted = this.checkNamespaces(namespaces);
    if (this.started) this.reconcileScopes();
  }

  /** ES2: resolves when synced; rejects on timeout, on stop, or (failOnError) on a failure first. */
  whenSynced(options: WhenSyncedOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const failOnError = options.failOnError ?? true;
    if (this.hasSynced()) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`informer ${this.name} was stopped before its cache synced`));
    const failed = failOnError ? [...this.scopes.values()].find((s) => s.state === 'failing') : undefined;
    if (failed) return Promise.reject(this.startupError(failed.namespace, failed.lastError));
    return firstValueFrom(
      merge(
        this.syncedState.pipe(filter(Boolean)),
        new Observable<never>((subscriber) =>
          this.syncedState.subscribe({
            complete: () => subscriber.error(new Error(`informer ${this.name} was stopped before its cache synced`)),
          }),
        ),
        failOnError
          ? this.failures.pipe(
              map((f): never => {
                throw this.startupError(f.namespace, f.error);
              }),
            )
          : [],
        timer(timeoutMs, this.scheduler).pipe(
          map((): never => {
            throw new Error(`informer ${this.name}: cache did not sync within ${timeoutMs} ms`);
          }),
        ),
      ),
    ).then(() => undefined);
  }

  private startupError(namespace: string | undefined, error: unknown): Error {
    const where = namespace === undefined ? '' : ` in namespace ${namespace}`;
    return new Error(`informer ${this.name}${where} failed before its cache synced: ${errorMessage(error)}`, { cause: error });
  }

  private checkNamespaces(namespaces: Namespaces): readonly (string | undefined)[] {
    return checkNamespaces(this.name, this.resource, namespaces);
  }

  private covers(namespace: string | undefined): boolean {
    return this.wanted[0] === undefined || (namespace !== undefined && this.wanted.includes(namespace));
  }

  private reconcileScopes(): void {
    const wantedKeys = new Map(this.wanted.map((ns) => [ns ?? ALL, ns]));
    for (const [key, scope] of this.scopes) {
      if (wantedKeys.has(key)) continue;
      scope.subscription?.unsubscribe();
      this.scopes.delete(key);
    }
    for (const key of this.cache.keysWhere((id) => !this.covers(id.namespace))) {
      const removed = this.cache.remove(key);
      if (removed) this.changes.next({ type: 'deleted', object: removed, oldObject: removed });
    }
    for (const [key, namespace] of wantedKeys) {
      if (this.scopes.has(key)) continue;
      const scope: Scope = {
        namespace,
        subscription: undefined,
        state: 'starting',
        synced: false,
        resourceVersion: undefined,
        lastError: undefined,
        lists: 0,
        drops: 0,
        listing: undefined,
      };
      this.scopes.set(key, scope);
      scope.subscription = this.loop(scope).subscribe((message) => this.apply(scope, message));
    }
    this.updateSignals();
  }

  private loop(scope: Scope): Observable<ReflectorMessage<T>> {
    const where = scope.namespace === undefined ? '' : ` in ${scope.namespace}`;
    return reflector<T>(this.client, {
      scope: { namespace: scope.namespace, labelSelector: this.labelSelector, fieldSelector: this.fieldSelector },
      timeoutSeconds: this.options.timeoutSeconds ?? 290,
      deadMarginMs: this.options.deadMarginMs ?? 30_000,
      listTimeoutMs: this.options.listTimeoutMs ?? 60_000,
      watchList: this.options.watchList,
      backoff: this.options.backoff,
      scheduler: this.scheduler,
      random: this.options.random,
      describe: `${this.resource.kind}${where}`,
      onFailure: (failure) => {
        if (this.scopes.get(scope.namespace ?? ALL) !== scope) return;
        if (failure.dropped) {
          scope.drops++; // resumed at once: neither unhealthy nor an error to log
          return;
        }
        scope.state = 'failing';
        scope.lastError = failure.error;
        this.updateSignals();
        const { dropped: _resumedAtOnce, ...rest } = failure;
        this.failures.next({ ...rest, informer: this.name, namespace: scope.namespace });
      },
    });
  }

  private apply(scope: Scope, message: ReflectorMessage<T>): void {
    switch (message.type) {
      case 'listed': {
        scope.resourceVersion = message.resourceVersion;
        scope.state = 'listed';
        scope.synced = true;
        scope.lists++;
        const listing = this.startListing(scope.namespace);
        for (const object of message.items) this.listItem(listing, this.transform(object));
        this.endListing(listing);
        break;
      }
      case 'listStart':
        scope.listing = this.startListing(scope.namespace);
        return;
      case 'listItem':
        if (scope.listing) this.listItem(scope.listing, this.transform(message.object));
        return;
      case 'listEnd':
        if (scope.listing) this.endListing(scope.listing);
        scope.listing = undefined;
        if (scope.state !== 'watching') scope.state = 'listed'; // a paged list streamed; a watch-list is watching already
        scope.resourceVersion = message.resourceVersion;
        scope.synced = true;
        scope.lists++;
        break;
      case 'watching':
        scope.state = 'watching';
        scope.lastError = undefined;
        break;
      case 'bookmark':
        scope.resourceVersion = message.resourceVersion;
        return;
      case 'event':
        scope.resourceVersion = resourceVersionOf(message.object) ?? scope.resourceVersion;
        this.applyEvent(message.action, this.transform(message.object));
        return;
    }
    this.updateSignals();
  }

  /**
   * A (re)list is the truth for one namespace (or all): its objects go into the cache one by one
   * as they come (a page's, or a watch-list's), each emitted as the difference against what the
   * cache held; at its end, what it did not bring is deleted. The cache is the only copy: a relist
   * never holds the old state and the new one whole side by side.
   */
  private startListing(namespace: string | undefined): Listing {
    return { namespace, before: this.cache.versionsIn(namespace), seen: new Set() };
  }

  private listItem(listing: Listing, object: T): void {
    const key = resourceKey(resourceIdOf(object));
    listing.seen.add(key);
    const previousVersion = listing.before.get(key);
    if (previousVersion === undefined && !this.cache.has(resourceIdOf(object))) {
      this.cache.upsert(object);
      this.changes.next({ type: 'added', object, listed: true });
    } else if (
      previousVersion !== resourceVersionOf(object) &&
      this.cache.resourceVersionOf(resourceIdOf(object)) !== resourceVersionOf(object)
    ) {
      const oldObject = this.cache.upsert(object);
      this.changes.next({ type: 'modified', object, oldObject, listed: true });
    }
  }

  private endListing(listing: Listing): void {
    for (const key of listing.before.keys()) {
      if (listing.seen.has(key)) continue;
      const removed = this.cache.remove(key);
      if (removed) this.changes.next({ type: 'deleted', object: removed, oldObject: removed, listed: true });
    }
  }

  private applyEvent(action: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): void {
    let id: ResourceID;
    try {
      id = resourceIdOf(object);
    } catch {
      return; // not an object of ours (e.g. a malformed line)
    }
    if (!this.covers(id.namespace)) return;
    const known = this.cache.resourceVersionOf(id);
    if (action === 'DELETED') {
      if (known === undefined) return;
      const oldObject = this.cache.remove(resourceKey(id));
      this.changes.next({ type: 'deleted', object, oldObject });
      return;
    }
    if (known !== undefined && known === resourceVersionOf(object)) return; // already have it (no duplicates)
    const oldObject = this.cache.upsert(object);
    this.changes.next(known === undefined ? { type: 'added', object } : { type: 'modified', object, oldObject });
  }

  private updateSignals(): void {
    if (this.stopped) return;
    const scopes = [...this.scopes.values()];
    const synced = this.started && scopes.every((s) => s.synced);
    const healthy = scopes.every((s) => s.state !== 'failing');
    if (this.syncedState.value !== synced) this.syncedState.next(synced);
    if (this.healthyState.value !== healthy) this.healthyState.next(healthy);
  }
}

/** Creates an informer (not started). */
export function informer<T extends KubernetesObject = KubernetesObject>(options: InformerOptions<T>): Informer<T> {
  return new Informer<T>(options);
}

/** A cold informer: subscribing starts one, unsubscribing closes all its watches. */
export function informer$<T extends KubernetesObject = KubernetesObject>(options: InformerOptions<T>): Observable<InformerEvent<T>> {
  return new Observable<InformerEvent<T>>((subscriber) => {
    const inf = new Informer<T>(options);
    const subscription = inf.events$.subscribe(subscriber);
    inf.start();
    return () => {
      subscription.unsubscribe();
      inf.stop();
    };
  });
}
