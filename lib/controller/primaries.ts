import type { KubernetesObject } from '@kubernetes/client-node';
import { filter, type Observable } from 'rxjs';
import {
  ConfigurationError,
  describeValue,
  generationGrew,
  isMarkedForDeletion,
  requireKnownKeys,
  type ResourceEvent,
  type ResourceID,
} from '../core/index.js';
import { ReadYourWritesCache, type CacheReader, type InformerLike } from '../cache/index.js';
import { toResourceEvents } from '../sources/index.js';
import { requireFinalizerName } from './config.js';

export interface PrimariesOptions {
  /** The source name of the primaries' events (`ctx.cause.source`). Default: the informer's name. */
  readonly name?: string;
  /**
   * The finalizer the controller keeps on its primaries (FZ1): give it when the reconciler has
   * `cleanup` or its workflow deletes a dependent, and only then.
   */
  readonly finalizerName?: string;
  /** EP6: drop primary updates that do not change the generation. Default true. */
  readonly generationAware?: boolean;
}

const PRIMARIES_OPTIONS = { name: true, finalizerName: true, generationAware: true } as const satisfies Record<
  keyof PrimariesOptions,
  true
>;

/**
 * A controller's primaries: their informer, the read-your-writes cache in front of it (UP3, ES4)
 * and the finalizer rule (FZ1, EP6). `controllerEvents`, `reconcilerRun` and `reconcileEach` all
 * take this one object, so the events a run is owed, the primary it reads, the writes it
 * records and whether a due run still has a primary come from one place.
 *
 * Create it before the informer starts (the cache must see every event); `dispose()` stops it
 * following the informer (the informer is its owner's to stop).
 */
export class Primaries<P extends KubernetesObject = KubernetesObject> implements CacheReader<P> {
  readonly informer: InformerLike<P>;
  /** What the run reads and records its writes in; its `events$` leave out the changes our writes caused. */
  readonly cache: ReadYourWritesCache<P>;
  /** The events' source name. */
  readonly name: string;
  /** The finalizer the controller keeps on its primaries; undefined when it keeps none. */
  readonly finalizerName: string | undefined;
  readonly generationAware: boolean;

  constructor(informer: InformerLike<P>, options: PrimariesOptions = {}) {
    if (informer === null || typeof informer !== 'object' || informer.events$ === undefined || informer.store === undefined) {
      throw new ConfigurationError('informer', `must be an informer (informer(...) or an InformerPool's), got ${describeValue(informer)}`);
    }
    requireKnownKeys('', options, PRIMARIES_OPTIONS);
    this.informer = informer;
    this.name = options.name ?? informer.name;
    this.finalizerName = options.finalizerName === undefined ? undefined : requireFinalizerName('finalizerName', options.finalizerName);
    this.generationAware = options.generationAware ?? true;
    this.cache = new ReadYourWritesCache<P>(informer);
  }

  /**
   * The primaries' changes as ResourceEvent triggers, without those our own writes caused (ES4), and
   * with generation awareness (EP6): an update passes when its generation grew, it was just
   * marked for deletion, or it still lacks our finalizer.
   */
  get events$(): Observable<ResourceEvent<P>> {
    const events$ = this.cache.events$.pipe(toResourceEvents<P>(this.name));
    if (!this.generationAware) return events$;
    return events$.pipe(
      filter((event) => event.action !== 'modified' || this.needsFinalizer(event.object) || generationGrew(event.oldObject, event.object)),
    );
  }

  /** FZ1, FZ2: the controller keeps a finalizer and this primary, not marked for deletion, lacks it. */
  needsFinalizer(primary: P | undefined): boolean {
    return primary !== undefined && this.finalizerName !== undefined && !isMarkedForDeletion(primary) && !this.hasFinalizer(primary);
  }

  /** Whether the primary carries our finalizer. */
  hasFinalizer(primary: P): boolean {
    return this.finalizerName !== undefined && (primary.metadata?.finalizers?.includes(this.finalizerName) ?? false);
  }

  /**
   * EP3, ES7: whether a primary is there to run for — the informer knows it (a bounded cache
   * may have evicted the object itself; the run fetches it) or we wrote it.
   */
  has(id: ResourceID): boolean {
    return this.informer.store.has(id) || this.cache.get(id) !== undefined;
  }

  /** The newest version: what we wrote, until the informer catches up (UP3). */
  get(id: ResourceID): P | undefined {
    return this.cache.get(id);
  }

  /** `get`, or from the API when a bounded cache evicted it (ES7). */
  fetch(id: ResourceID): Promise<P | undefined> {
    return this.cache.fetch(id);
  }

  list(namespace?: string): P[] {
    return this.cache.list(namespace);
  }

  byIndex(indexName: string, key: string): P[] {
    return this.cache.byIndex(indexName, key);
  }

  /** Stops following the informer. */
  dispose(): void {
    this.cache.dispose();
  }
}

/** A controller's primaries on `informer` (see `Primaries`). */
export function primaries<P extends KubernetesObject>(informer: InformerLike<P>, options?: PrimariesOptions): Primaries<P> {
  return new Primaries<P>(informer, options);
}
