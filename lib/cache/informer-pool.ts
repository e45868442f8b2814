/** One shared informer per resource type and scope for the controllers of an Operator, reference-counted, with each user's indexes. */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  BehaviorSubject,
  concat,
  defer,
  distinctUntilChanged,
  filter,
  from,
  type Observable,
  type SchedulerLike,
  Subject,
  Subscription,
  take,
} from 'rxjs';
import { resourceIdOf, resourceKey } from '../core/index.js';
import { formatFieldSelector, formatLabelSelector, resolveDescriptor, type KubeClient, type ResolvedDescriptor } from '../kube/index.js';
import {
  checkNamespaces,
  Informer,
  type InformerError,
  type InformerEvent,
  type InformerLike,
  type InformerOptions,
  type Namespaces,
  type ScopeStatus,
  type WhenSyncedOptions,
} from './informer.js';
import { kubeListWatch, type ListWatchClient } from './list-watch.js';
import { resourceVersionOf } from './resource-version.js';
import { NAMESPACE_INDEX, OWNER_UID_INDEX, type IndexedStore, type Indexer } from './store.js';
import { compactManagedFields } from './transform.js';

/** What a user asks an `InformerPool` for: an informer's options, less the client and the clock (the pool's). */
export type SharedInformerOptions<T extends KubernetesObject> = Omit<InformerOptions<T>, 'kubeConfig' | 'client' | 'scheduler' | 'random'>;

export interface InformerPoolOptions {
  /** Every informer of the pool lists, reads and watches with this client (one client, one connection pool). */
  readonly client: KubeClient;
  /** Replaces `kubeListWatch(client, resource)` (a test's fake list+watch). */
  readonly listWatch?: ((resource: ResolvedDescriptor) => ListWatchClient<KubernetesObject>) | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  /** Jitter source, [0, 1). */
  readonly random?: (() => number) | undefined;
}

/** One informer the pool holds. */
export interface PooledInformer {
  /** What users must ask alike to share it (see `InformerPool`); undefined once it changed namespaces in place onto a key another holds. */
  readonly key: string | undefined;
  readonly informer: Informer;
  /** The names its users gave. */
  readonly users: readonly string[];
}

interface Entry {
  key: string | undefined;
  readonly informer: Informer;
  readonly users: Set<Share<KubernetesObject>>;
}

/** What a share needs of its pool. */
interface Membership {
  join(user: Share<KubernetesObject>, namespaces: readonly (string | undefined)[]): Entry;
  leave(entry: Entry, user: Share<KubernetesObject>): void;
  /** The entry's informer changed namespaces in place (its one user asked). */
  moved(entry: Entry, namespaces: readonly (string | undefined)[], user: Share<KubernetesObject>): void;
}

/**
 * ES1, ES6: the informers of one operator, shared. Users that ask for the same informer get a
 * share of one: one list+watch per namespace and one cache, however many controllers, secondary
 * sources and dependents use it. Each share behaves as an informer of its own — its own name,
 * indexes, events from its `start()` on (a late share first gets the cache as adds, as a fresh
 * informer's first list would give them) — and `stop()` ends only that share; the informer stops
 * when its last share does (activation conditions release theirs so).
 *
 * The key: two asks share an informer when they agree on all of
 * - the resource (apiVersion, kind, plural);
 * - the namespaces ('all', or the same set);
 * - the label selector and the field selector, as query strings;
 * - the transform, by identity (none = the default `compactManagedFields`);
 * - the bounds of the store, and the watch tuning (timeoutSeconds, deadMarginMs, listTimeoutMs, watchList, backoff).
 * Names and indexers are not part of it: each share adds its indexers under its own names (an
 * index name another share holds is suffixed `#2`, `#3`, ... in the shared store).
 *
 * ES6 on a share: alone on its informer it changes that informer's namespaces in place, as an
 * informer of its own would; sharing it, it moves to the informer of the new key (created or
 * shared) once that has synced, and emits the difference (deletes, then adds and updates).
 */
export class InformerPool {
  private readonly byKey = new Map<string, Entry>();
  private readonly entries = new Set<Entry>();
  /** Transforms by identity: a function's number in the key. */
  private readonly transforms = new WeakMap<object, number>();
  private transformCount = 0;
  private disposed = false;
  private readonly membership: Membership = {
    join: (user, namespaces) => this.join(user, namespaces),
    leave: (entry, user) => this.leave(entry, user),
    moved: (entry, namespaces, user) => {
      if (entry.key !== undefined && this.byKey.get(entry.key) === entry) this.byKey.delete(entry.key);
      const key = this.keyOf(user.resource, user.options, namespaces);
      entry.key = this.byKey.has(key) ? undefined : key;
      if (entry.key !== undefined) this.byKey.set(entry.key, entry);
    },
  };

  constructor(private readonly options: InformerPoolOptions) {}

  /** A share of the informer these options name (created on the first ask; not started). */
  acquire<T extends KubernetesObject = KubernetesObject>(options: SharedInformerOptions<T>): InformerLike<T> {
    if (this.disposed) throw new Error('informer pool: acquire() after dispose()');
    return new Share<T>(this.membership, options);
  }

  /** The informers held now, with their keys and users. */
  informers(): PooledInformer[] {
    return [...this.entries].map((entry) => ({
      key: entry.key,
      informer: entry.informer,
      users: [...entry.users].map((user) => user.name),
    }));
  }

  /** Stops every informer; their shares' streams complete. */
  dispose(): void {
    this.disposed = true;
    for (const entry of this.entries) entry.informer.stop();
    this.entries.clear();
    this.byKey.clear();
  }

  private join(user: Share<KubernetesObject>, namespaces: readonly (string | undefined)[]): Entry {
    if (this.disposed) throw new Error('informer pool: acquire() after dispose()');
    const key = this.keyOf(user.resource, user.options, namespaces);
    let entry = this.byKey.get(key);
    if (!entry) {
      const { indexers: _eachShareAddsItsOwn, ...options } = user.options;
      const informer = new Informer<KubernetesObject>({
        ...options,
        name: user.name,
        namespaces: namespaces[0] === undefined ? 'all' : (namespaces as string[]),
        client:
          this.options.listWatch?.(user.resource) ??
          kubeListWatch(this.options.client, user.resource, { metadataOnly: options.metadataOnly }),
        scheduler: this.options.scheduler,
        random: this.options.random,
      });
      entry = { key, informer, users: new Set() };
      this.byKey.set(key, entry);
      this.entries.add(entry);
    }
    entry.users.add(user);
    return entry;
  }

  private leave(entry: Entry, user: Share<KubernetesObject>): void {
    if (!entry.users.delete(user) || entry.users.size > 0) return;
    entry.informer.stop();
    this.entries.delete(entry);
    if (entry.key !== undefined && this.byKey.get(entry.key) === entry) this.byKey.delete(entry.key);
  }

  private keyOf(
    resource: ResolvedDescriptor,
    options: SharedInformerOptions<KubernetesObject>,
    namespaces: readonly (string | undefined)[],
  ): string {
    const transform = options.transform ?? compactManagedFields;
    let transformId = this.transforms.get(transform);
    if (transformId === undefined) this.transforms.set(transform, (transformId = ++this.transformCount));
    return JSON.stringify([
      resource.apiVersion,
      resource.kind,
      resource.plural,
      namespaces[0] === undefined ? 'all' : namespaces,
      formatLabelSelector(options.labelSelector),
      formatFieldSelector(options.fieldSelector),
      transformId,
      options.metadataOnly === true,
      sorted(options.bounded),
      options.timeoutSeconds ?? null,
      options.deadMarginMs ?? null,
      options.listTimeoutMs ?? null,
      options.watchList !== false,
      sorted(options.backoff),
    ]);
  }
}

function sorted(value: object | undefined): unknown {
  return value === undefined ? null : Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const BUILT_IN_INDEXES: ReadonlySet<string> = new Set([NAMESPACE_INDEX, OWNER_UID_INDEX]);

/** One user's share of a pooled informer: an informer of its own as far as the user can tell. */
class Share<T extends KubernetesObject> implements InformerLike<T> {
  readonly name: string;
  readonly resource: ResolvedDescriptor;
  readonly store: IndexedStore<T>;
  private entry: Entry;
  /** ES6 on a shared informer: the informer of the new namespaces, until it has synced. */
  private pending: { readonly entry: Entry; readonly subscription: Subscription } | undefined;
  private wanted: readonly (string | undefined)[];
  private wiring = new Subscription();
  /** This share's index names → the names in the shared store. */
  private readonly indexes = new Map<string, { actual: string; readonly indexer: Indexer<T> }>();
  private readonly changes = new Subject<InformerEvent<T>>();
  private readonly failures = new Subject<InformerError>();
  private readonly indexFailures = new Subject<Error>();
  private readonly syncedState = new BehaviorSubject(false);
  private readonly healthyState = new BehaviorSubject(true);
  private started = false;
  private stopped = false;

  constructor(
    private readonly membership: Membership,
    readonly options: SharedInformerOptions<T>,
  ) {
    this.resource = resolveDescriptor(options.resource);
    this.name = options.name ?? this.resource.plural;
    this.wanted = checkNamespaces(this.name, this.resource, options.namespaces ?? 'all');
    this.entry = membership.join(this.asUser(), this.wanted);
    this.store = this.storeView();
    this.attach();
    try {
      for (const [name, indexer] of Object.entries(options.indexers ?? {})) this.store.addIndexer(name, indexer);
    } catch (err) {
      this.stop();
      throw err;
    }
  }

  get events$(): Observable<InformerEvent<T>> {
    return this.changes.asObservable();
  }

  get cacheAndEvents$(): Observable<InformerEvent<T>> {
    return defer(() =>
      concat(from(this.store.list().map((object): InformerEvent<T> => ({ type: 'added', object, listed: true }))), this.changes),
    );
  }

  get errors$(): Observable<InformerError> {
    return this.failures.asObservable();
  }

  get indexerErrors$(): Observable<Error> {
    return this.indexFailures.asObservable();
  }

  get synced$(): Observable<boolean> {
    return this.syncedState.pipe(distinctUntilChanged());
  }

  get healthy$(): Observable<boolean> {
    return this.healthyState.pipe(distinctUntilChanged());
  }

  get namespaces(): Namespaces {
    return this.wanted[0] === undefined ? 'all' : (this.wanted as string[]);
  }

  hasSynced(): boolean {
    return this.syncedState.value;
  }

  isHealthy(): boolean {
    return this.healthyState.value;
  }

  status(): ScopeStatus[] {
    return this.informer.status();
  }

  start(): this {
    if (this.stopped) throw new Error(`informer ${this.name} was stopped; create a new one`);
    if (this.started) return this;
    // Another share may have started the informer: what it holds is new to this user, as a
    // fresh informer's first list would be.
    const cached = this.informer.store.list();
    this.started = true;
    for (const object of cached) this.changes.next({ type: 'added', object, listed: true });
    this.informer.start();
    this.updateSignals();
    return this;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelPending();
    this.detach();
    this.complete();
  }

  setNamespaces(namespaces: Namespaces): void {
    if (this.stopped) throw new Error(`informer ${this.name} was stopped`);
    const wanted = checkNamespaces(this.name, this.resource, namespaces);
    this.cancelPending(); // the newest change wins
    if (wanted.length === this.wanted.length && wanted.every((ns, i) => ns === this.wanted[i])) return;
    this.wanted = wanted;
    if (this.entry.users.size === 1) {
      // Alone on it: change it in place, as an informer of its own would (deletes at once, adds as listed).
      this.informer.setNamespaces(namespaces);
      this.membership.moved(this.entry, wanted, this.asUser());
      return;
    }
    const next = this.membership.join(this.asUser(), wanted);
    if (!this.started) {
      this.moveTo(next, false);
      return;
    }
    const pending = { entry: next, subscription: new Subscription() };
    this.pending = pending;
    this.updateSignals();
    next.informer.start();
    pending.subscription.add(
      next.informer.synced$.pipe(filter(Boolean), take(1)).subscribe(() => {
        if (this.pending === pending) this.moveTo(next, true);
      }),
    );
  }

  whenSynced(options?: WhenSyncedOptions): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`informer ${this.name} was stopped before its cache synced`));
    return ((this.pending?.entry.informer ?? this.informer) as Informer<T>).whenSynced(options);
  }

  private get informer(): Informer<T> {
    return this.entry.informer as unknown as Informer<T>;
  }

  private asUser(): Share<KubernetesObject> {
    return this as unknown as Share<KubernetesObject>;
  }

  private attach(): void {
    const inf = this.informer;
    this.wiring = new Subscription();
    this.wiring.add(
      inf.events$.subscribe({
        next: (event) => {
          if (this.started) this.changes.next(event);
        },
        complete: () => this.onInformerStopped(),
      }),
    );
    this.wiring.add(inf.errors$.subscribe((error) => this.failures.next({ ...error, informer: this.name })));
    // The store reports every share's indexers: pass on only this share's.
    this.wiring.add(
      inf.indexerErrors$.subscribe((error) => {
        for (const { actual } of this.indexes.values()) {
          if (error.message.startsWith(`indexer '${actual}' `)) return this.indexFailures.next(error);
        }
      }),
    );
    this.wiring.add(inf.synced$.subscribe(() => this.updateSignals()));
    this.wiring.add(inf.healthy$.subscribe(() => this.updateSignals()));
  }

  /** Leaves the current informer, taking this share's indexes along (unless it was the last user). */
  private detach(): void {
    this.wiring.unsubscribe();
    if (this.entry.users.size > 1) {
      for (const { actual } of this.indexes.values()) this.informer.store.removeIndexer(actual);
    }
    this.membership.leave(this.entry, this.asUser());
  }

  /** ES6 on a shared informer: switch to `next` and, when `announce`, emit what changed for this user. */
  private moveTo(next: Entry, announce: boolean): void {
    this.pending = undefined;
    const before = announce ? this.informer.store.list() : [];
    this.detach();
    this.entry = next;
    for (const [name, index] of this.indexes) {
      index.actual = this.freeIndexName(name);
      this.informer.store.addIndexer(index.actual, index.indexer);
    }
    this.attach();
    if (announce) this.announceDifference(before, this.informer.store.list());
    this.updateSignals();
  }

  private announceDifference(before: readonly T[], after: readonly T[]): void {
    const previous = new Map(before.map((object) => [resourceKey(resourceIdOf(object)), object]));
    const changed: InformerEvent<T>[] = [];
    for (const object of after) {
      const key = resourceKey(resourceIdOf(object));
      const oldObject = previous.get(key);
      previous.delete(key);
      if (oldObject === undefined) changed.push({ type: 'added', object, listed: true });
      else if (resourceVersionOf(oldObject) !== resourceVersionOf(object))
        changed.push({ type: 'modified', object, oldObject, listed: true });
    }
    for (const object of previous.values()) this.changes.next({ type: 'deleted', object, oldObject: object, listed: true });
    for (const event of changed) this.changes.next(event);
  }

  private cancelPending(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    pending.subscription.unsubscribe();
    this.membership.leave(pending.entry, this.asUser());
    this.updateSignals();
  }

  private onInformerStopped(): void {
    // The pool was disposed under this share.
    if (this.stopped) return;
    this.stopped = true;
    this.cancelPending();
    this.wiring.unsubscribe();
    this.complete();
  }

  private complete(): void {
    this.changes.complete();
    this.failures.complete();
    this.indexFailures.complete();
    this.syncedState.complete();
    this.healthyState.complete();
  }

  private updateSignals(): void {
    if (this.stopped) return;
    const synced = this.started && this.pending === undefined && this.informer.hasSynced();
    const healthy = this.informer.isHealthy();
    if (this.syncedState.value !== synced) this.syncedState.next(synced);
    if (this.healthyState.value !== healthy) this.healthyState.next(healthy);
  }

  private freeIndexName(name: string): string {
    let actual = name;
    for (let n = 2; this.informer.store.hasIndexer(actual); n++) actual = `${name}#${n}`;
    return actual;
  }

  /** The shared store as this user sees it: its own indexes under its own names, and the built-in ones. */
  private storeView(): IndexedStore<T> {
    const share = this;
    const store = (): IndexedStore<T> => share.informer.store;
    const indexName = (name: string): string | undefined => (BUILT_IN_INDEXES.has(name) ? name : share.indexes.get(name)?.actual);
    const known = (name: string): string => {
      const actual = indexName(name);
      if (actual !== undefined) return actual;
      throw new Error(`store: no index named '${name}' (indexes: ${[...BUILT_IN_INDEXES, ...share.indexes.keys()].join(', ')})`);
    };
    return {
      get: (id) => store().get(id),
      fetch: (id) => store().fetch(id),
      has: (id) => store().has(id),
      resourceVersionOf: (id) => store().resourceVersionOf(id),
      list: (namespace) => store().list(namespace),
      byIndex: (name, key) => {
        const actual = known(name);
        // A run that ends after its share stopped may still ask; the index left with the share.
        return share.stopped && !store().hasIndexer(actual) ? [] : store().byIndex(actual, key);
      },
      indexKeysOf: (name, obj) => store().indexKeysOf(known(name), obj),
      keys: () => store().keys(),
      get size() {
        return store().size;
      },
      get held() {
        return store().held;
      },
      addIndexer: (name, indexer) => {
        if (BUILT_IN_INDEXES.has(name)) return store().addIndexer(name, indexer); // the store's own error
        const own = share.indexes.get(name);
        const actual = own?.actual ?? share.freeIndexName(name);
        store().addIndexer(actual, indexer);
        share.indexes.set(name, { actual, indexer });
      },
      hasIndexer: (name) => indexName(name) !== undefined,
      removeIndexer: (name) => {
        if (BUILT_IN_INDEXES.has(name)) return store().removeIndexer(name); // the store's own error
        const own = share.indexes.get(name);
        if (!own) return;
        share.indexes.delete(name);
        store().removeIndexer(own.actual);
      },
    };
  }
}
