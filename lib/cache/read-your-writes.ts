/** The read-your-writes cache in front of an informer: a write's answer is read until the informer catches up (ES4). */
import type { KubernetesObject } from '@kubernetes/client-node';
import { concat, defer, from, Observable, Subject, type Subscription } from 'rxjs';
import { resourceIdOf, resourceKey, type ResourceID } from '../core/index.js';
import type { InformerEvent } from './informer.js';
import { foreignChangeIn, type WriteIntent } from './own-writes.js';
import { compareResourceVersions, resourceVersionOf } from './resource-version.js';
import type { StoreReader } from './store.js';

/** What the read-your-writes cache sits in front of: an informer, or anything shaped like one. */
export interface CachedSource<T> {
  readonly store: StoreReader<T>;
  readonly events$: Observable<InformerEvent<T>>;
}

/** The read side shared by an informer's store and the read-your-writes cache. */
export type CacheReader<T> = Pick<StoreReader<T>, 'get' | 'fetch' | 'list' | 'byIndex'>;

/** Holds events of one object while the controller writes it; see `beginWrite`. */
export interface WriteHandle<T extends KubernetesObject> {
  /** Records the API's answer to one write (several writes in one handle are fine); see `recordWrite`. */
  record(written: T, intent?: WriteIntent<T>): void;
  /** Ends the write: held events are released, except the ones the recorded writes caused. */
  end(): void;
}

interface Written<T> {
  readonly id: ResourceID;
  object: T;
  resourceVersion: string;
  /** Every resourceVersion we wrote since the informer last caught up. */
  readonly own: Set<string>;
}

interface Pending<T> {
  writers: number;
  readonly held: InformerEvent<T>[];
  readonly own: Set<string>;
}

/**
 * UP3 and ES4: a temporary cache in front of an informer. After a write, `recordWrite(answer)`
 * keeps the written version until the informer catches up (an event with a resourceVersion at
 * least as new); `get` returns the newer of the two. The informer event a write of ours caused
 * still updates the informer's store, but it is not passed on by `events$`, so a controller's own
 * write causes no extra run. An answer that carries someone else's change as well (see
 * `WriteIntent`) is not our own: it is passed on as a `modified` event at once, so that change is
 * never mistaken for ours — not when its own event is lost to a relist, nor when our write
 * answered with its version. Subscribe to the informer (create this) before the informer starts.
 */
export class ReadYourWritesCache<T extends KubernetesObject> implements CacheReader<T> {
  private readonly written = new Map<string, Written<T>>();
  private readonly pending = new Map<string, Pending<T>>();
  private readonly passed = new Subject<InformerEvent<T>>();
  private readonly subscription: Subscription;

  /**
   * `recordAs` turns a write's answer into what the informer caches (a metadata-only source keeps
   * the answer's metadata alone), so that reads give one shape whichever of the two answers them.
   */
  constructor(
    private readonly source: CachedSource<T>,
    private readonly recordAs: (written: T) => T = (written) => written,
  ) {
    this.subscription = source.events$.subscribe({
      next: (event) => this.onEvent(event),
      complete: () => this.passed.complete(),
      error: (err: unknown) => this.passed.error(err),
    });
  }

  /** The informer's changes, without the ones our own writes caused. */
  get events$(): Observable<InformerEvent<T>> {
    return this.passed.asObservable();
  }

  /** Every object as 'added' (newest version) first, then the live changes. */
  get cacheAndEvents$(): Observable<InformerEvent<T>> {
    return defer(() => concat(from(this.list().map((object): InformerEvent<T> => ({ type: 'added', object, listed: true }))), this.passed));
  }

  /**
   * Records the API's answer to a write (create, update, patch). `intent` tells what the write may
   * change on top of what it was based on (ES4); without one, the answer is taken as ours alone.
   * An answer that shows more is someone else's change: it is kept for reads (UP3) and passed on
   * as a `modified` event now (unless the informer already has it, so its own event passes). A
   * version the informer already has (e.g. the answer to a no-op write) is not recorded: no event
   * will come for it.
   */
  recordWrite(answer: T, intent: WriteIntent<T> = {}): void {
    const written = this.recordAs(answer);
    const rv = resourceVersionOf(written);
    if (rv === undefined) {
      throw new Error(`recordWrite: ${describe(written)} has no metadata.resourceVersion; record the API's answer to the write`);
    }
    const id = resourceIdOf(written);
    const key = resourceKey(id);
    const foreign = foreignChangeIn(written, intent) !== undefined;
    const known = this.source.store.resourceVersionOf(id);
    const delivered = known !== undefined && (compareResourceVersions(rv, known) ?? 1) <= 0;
    // Delivered, a foreign change passes with its own event (a held one is released by `end`).
    if (foreign && delivered) return;
    this.pending.get(key)?.own.add(rv);
    if (delivered) return;
    const entry = this.written.get(key);
    if (!entry) {
      this.written.set(key, { id, object: written, resourceVersion: rv, own: new Set([rv]) });
    } else {
      entry.own.add(rv);
      if ((compareResourceVersions(rv, entry.resourceVersion) ?? 1) > 0) {
        entry.object = written;
        entry.resourceVersion = rv;
      }
    }
    // Its echo (and a relist at this version) is dropped as ours: this event stands for the change.
    if (foreign) this.passed.next({ type: 'modified', object: written, oldObject: intent.base });
  }

  /**
   * For writes whose event may arrive before the answer: events of the object are held from now
   * until `end()`, then the ones our recorded writes caused are dropped and the rest passed on.
   */
  beginWrite(id: ResourceID): WriteHandle<T> {
    const key = resourceKey(id);
    let pending = this.pending.get(key);
    if (!pending) this.pending.set(key, (pending = { writers: 0, held: [], own: new Set() }));
    pending.writers++;
    const state = pending;
    let ended = false;
    return {
      record: (written, intent) => this.recordWrite(written, intent),
      end: () => {
        if (ended) return;
        ended = true;
        if (--state.writers > 0) return;
        this.pending.delete(key);
        for (const event of state.held) {
          const rv = resourceVersionOf(event.object);
          if (event.type !== 'deleted' && rv !== undefined && state.own.has(rv)) this.dropIfCaughtUp(key, rv);
          else this.pass(key, event);
        }
      },
    };
  }

  /**
   * `beginWrite`, the write, `record` of its answer (when it is an object) and `end`, in one call.
   * Give `intent.base` as this cache had it just before (`get(id)`, or the newer version the
   * write was computed from).
   */
  async trackWrite<R extends T | undefined>(id: ResourceID, write: () => Promise<R>, intent?: WriteIntent<T>): Promise<R> {
    const handle = this.beginWrite(id);
    try {
      const answer = await write();
      if (answer !== undefined && resourceVersionOf(answer) !== undefined) handle.record(answer, intent);
      return answer;
    } finally {
      handle.end();
    }
  }

  /** The newer of the written version and the informer's. */
  get(id: ResourceID): T | undefined {
    const key = resourceKey(id);
    return this.newerWritten(key) ?? this.source.store.get(id);
  }

  async fetch(id: ResourceID): Promise<T | undefined> {
    return this.newerWritten(resourceKey(id)) ?? this.source.store.fetch(id);
  }

  list(namespace?: string): T[] {
    return this.overlay(
      this.source.store.list(namespace),
      (obj) => namespace === undefined || (obj.metadata?.namespace ?? '') === namespace,
    );
  }

  byIndex(indexName: string, key: string): T[] {
    const base = this.source.store.byIndex(indexName, key);
    return this.overlay(base, (obj) => this.source.store.indexKeysOf(indexName, obj).includes(key));
  }

  /** How many written versions wait for the informer (for tests and metrics). */
  get size(): number {
    return this.written.size;
  }

  /** Stops following the informer. */
  dispose(): void {
    this.subscription.unsubscribe();
    this.passed.complete();
  }

  private onEvent(event: InformerEvent<T>): void {
    let key: string;
    try {
      key = resourceKey(resourceIdOf(event.object));
    } catch {
      this.passed.next(event);
      return;
    }
    const pending = this.pending.get(key);
    if (pending) pending.held.push(event);
    else this.pass(key, event);
  }

  private pass(key: string, event: InformerEvent<T>): void {
    const entry = this.written.get(key);
    if (!entry) {
      this.passed.next(event);
      return;
    }
    if (event.type === 'deleted') {
      this.written.delete(key);
      this.passed.next(event);
      return;
    }
    const rv = resourceVersionOf(event.object);
    const own = rv !== undefined && entry.own.has(rv);
    if (rv !== undefined) this.dropIfCaughtUp(key, rv);
    if (!own) this.passed.next(event);
  }

  /** The informer delivered `rv`: forget what we wrote if that is at least as new. */
  private dropIfCaughtUp(key: string, rv: string): void {
    const entry = this.written.get(key);
    if (!entry) return;
    // Versions that cannot be ordered: trust the informer once it delivered anything.
    if ((compareResourceVersions(rv, entry.resourceVersion) ?? 0) >= 0) this.written.delete(key);
  }

  private newerWritten(key: string): T | undefined {
    const entry = this.written.get(key);
    if (!entry) return undefined;
    const known = this.source.store.resourceVersionOf(entry.id);
    if (known === undefined) return entry.object;
    const order = compareResourceVersions(entry.resourceVersion, known);
    if (order === undefined || order > 0) return entry.object;
    this.written.delete(key); // the informer caught up without an event we saw (e.g. a relist)
    return undefined;
  }

  private overlay(base: T[], matches: (obj: T) => boolean): T[] {
    if (this.written.size === 0) return base;
    const out = new Map<string, T>();
    for (const obj of base) out.set(resourceKey(resourceIdOf(obj)), obj);
    for (const key of [...this.written.keys()]) {
      const newer = this.newerWritten(key);
      if (!newer) continue;
      if (matches(newer)) out.set(key, newer);
      else out.delete(key);
    }
    return [...out.values()];
  }
}

/** Puts a read-your-writes cache in front of an informer (or any CachedSource). */
export function readYourWrites<T extends KubernetesObject>(source: CachedSource<T>): ReadYourWritesCache<T> {
  return new ReadYourWritesCache<T>(source);
}

function describe(obj: KubernetesObject): string {
  return `${obj?.kind ?? 'object'} ${obj?.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj?.metadata?.name ?? '(unnamed)'}`;
}
