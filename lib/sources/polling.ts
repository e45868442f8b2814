/** Polling sources: everything at once every interval, or per primary resource while it lives. */
import { isDeepStrictEqual } from 'node:util';
import {
  asyncScheduler,
  catchError,
  EMPTY,
  defer,
  exhaustMap,
  map,
  mergeMap,
  Observable,
  share,
  Subject,
  takeUntil,
  timer,
  type ObservableInput,
  type SchedulerLike,
  type Subscription,
} from 'rxjs';
import { describeError, resourceKey, type ResourceEvent, type ResourceID } from '../core/index.js';

export interface SourceError {
  readonly source: string;
  readonly error: unknown;
  /** The primary a per-resource fetch was for. */
  readonly id?: ResourceID | undefined;
}

export interface PollingCommon<R> {
  /** Event source name. */
  name: string;
  intervalMs: number;
  /** Decides whether a fetched resource changed (default: deep equality). */
  equals?: ((a: R, b: R) => boolean) | undefined;
  scheduler?: SchedulerLike | undefined;
}

export interface PollingSourceOptions<R> extends PollingCommon<R> {
  /** One fetch for all: the current external resource of every primary. */
  fetch: () => ObservableInput<Iterable<readonly [ResourceID, R]>>;
}

/**
 * ES5: polls one fetch for all primaries every `intervalMs` (the first at once), caches what it
 * got and emits a 'trigger' event for each primary whose resource appeared, changed or vanished.
 * A fetch still running when the next one is due makes that one skip. Failed fetches go to
 * `errors$` and polling goes on. Subscribing to `events$` starts polling; the cache is kept.
 */
export class PollingSource<R> {
  readonly name: string;
  readonly events$: Observable<ResourceEvent<R>>;
  private readonly cache = new Map<string, { id: ResourceID; resource: R }>();
  private readonly failures = new Subject<SourceError>();

  constructor(options: PollingSourceOptions<R>) {
    this.name = checkCommon('pollingSource', options);
    if (typeof options.fetch !== 'function') throw new Error(`pollingSource ${this.name}: fetch must be a function`);
    const scheduler = options.scheduler ?? asyncScheduler;
    const equals = options.equals ?? isDeepStrictEqual;
    this.events$ = timer(0, options.intervalMs, scheduler).pipe(
      exhaustMap(() =>
        // defer: a fetch that throws instead of rejecting is a failed fetch too, not the end of polling.
        defer(() => options.fetch()).pipe(
          catchError((error: unknown) => {
            this.failures.next({ source: this.name, error });
            return EMPTY;
          }),
        ),
      ),
      mergeMap((current) => this.diff(current, equals)),
      share(),
    );
  }

  get errors$(): Observable<SourceError> {
    return this.failures.asObservable();
  }

  /** The last fetched resource of a primary. */
  get(id: ResourceID): R | undefined {
    return this.cache.get(resourceKey(id))?.resource;
  }

  private diff(current: Iterable<readonly [ResourceID, R]>, equals: (a: R, b: R) => boolean): ResourceEvent<R>[] {
    const out: ResourceEvent<R>[] = [];
    const seen = new Set<string>();
    for (const [id, resource] of current) {
      const key = resourceKey(id);
      seen.add(key);
      const before = this.cache.get(key);
      if (before && equals(before.resource, resource)) continue;
      this.cache.set(key, { id, resource });
      out.push(trigger(this.name, id, resource, before?.resource));
    }
    for (const [key, before] of [...this.cache]) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      out.push(trigger(this.name, before.id, undefined, before.resource));
    }
    return out;
  }
}

export interface PerResourcePollingOptions<R> extends PollingCommon<R> {
  /** The external resource of one primary; undefined when it has none. */
  fetch: (id: ResourceID) => ObservableInput<R | undefined>;
}

/**
 * ES5: one poll per primary, started by `track(id)` (on the primary's first run) and stopped by
 * `untrack(id)` (on its delete), or automatically with `followPrimaries(events$)`. Emits a
 * 'trigger' event when a primary's resource changed (appeared, changed or vanished).
 */
export class PerResourcePollingSource<R> {
  readonly name: string;
  private readonly polls = new Map<string, Subscription>();
  private readonly cache = new Map<string, R>();
  private readonly triggers = new Subject<ResourceEvent<R>>();
  private readonly failures = new Subject<SourceError>();
  private readonly stopped = new Subject<void>();
  private readonly scheduler: SchedulerLike;
  private readonly equals: (a: R, b: R) => boolean;

  constructor(private readonly options: PerResourcePollingOptions<R>) {
    this.name = checkCommon('perResourcePolling', options);
    if (typeof options.fetch !== 'function') throw new Error(`perResourcePolling ${this.name}: fetch must be a function (id) => resource`);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.equals = options.equals ?? isDeepStrictEqual;
  }

  get events$(): Observable<ResourceEvent<R>> {
    return this.triggers.asObservable();
  }

  get errors$(): Observable<SourceError> {
    return this.failures.asObservable();
  }

  get(id: ResourceID): R | undefined {
    return this.cache.get(resourceKey(id));
  }

  /** The primaries being polled (keys). */
  tracked(): string[] {
    return [...this.polls.keys()];
  }

  /** Starts polling a primary (first fetch at once); idempotent. */
  track(id: ResourceID): void {
    const key = resourceKey(id);
    if (this.polls.has(key)) return;
    const poll = timer(0, this.options.intervalMs, this.scheduler).pipe(
      exhaustMap(() =>
        defer(() => this.options.fetch(id)).pipe(
          map((resource) => ({ resource })),
          catchError((error: unknown) => {
            this.failures.next({
              source: this.name,
              error: new Error(`${this.name}: fetch for ${key} failed: ${describeError(error)}`, { cause: error }),
              id,
            });
            return EMPTY;
          }),
        ),
      ),
      takeUntil(this.stopped),
    );
    this.polls.set(
      key,
      poll.subscribe(({ resource }) => {
        const before = this.cache.get(key);
        if (resource === undefined ? before === undefined : before !== undefined && this.equals(before, resource)) return;
        if (resource === undefined) this.cache.delete(key);
        else this.cache.set(key, resource);
        this.triggers.next(trigger(this.name, id, resource, before));
      }),
    );
  }

  /** Stops polling a primary and forgets its resource (no event). */
  untrack(id: ResourceID): void {
    const key = resourceKey(id);
    this.polls.get(key)?.unsubscribe();
    this.polls.delete(key);
    this.cache.delete(key);
  }

  /** Tracks every primary that has an event, untracks it on its primary delete. */
  followPrimaries(primaryEvents$: Observable<ResourceEvent>): Subscription {
    return primaryEvents$.pipe(takeUntil(this.stopped)).subscribe((event) => {
      if (!event.primary) return;
      if (event.action === 'deleted') this.untrack(event.id);
      else this.track(event.id);
    });
  }

  /** Stops every poll and completes the streams. */
  stop(): void {
    this.stopped.next();
    this.stopped.complete();
    for (const s of this.polls.values()) s.unsubscribe();
    this.polls.clear();
    this.triggers.complete();
    this.failures.complete();
  }
}

export function pollingSource<R>(options: PollingSourceOptions<R>): PollingSource<R> {
  return new PollingSource<R>(options);
}

export function perResourcePolling<R>(options: PerResourcePollingOptions<R>): PerResourcePollingSource<R> {
  return new PerResourcePollingSource<R>(options);
}

/** A 'trigger' event of a non-Kubernetes source for the primary `id`. */
export function trigger<R>(source: string, id: ResourceID, object: R | undefined, oldObject?: R): ResourceEvent<R> {
  return { id, source, action: 'trigger', primary: false, object, oldObject };
}

function checkCommon<R>(what: string, options: PollingCommon<R>): string {
  if (!options || typeof options.name !== 'string' || options.name === '') throw new Error(`${what}: name is required`);
  if (!(Number.isFinite(options.intervalMs) && options.intervalMs > 0)) {
    throw new Error(`${what} ${options.name}: intervalMs must be a positive number of milliseconds (got ${String(options.intervalMs)})`);
  }
  return options.name;
}

/** Throws a clear error for a ResourceID without a name. */
export function requireResourceID(source: string, id: ResourceID): void {
  if (!id || typeof id.name !== 'string' || id.name === '') {
    throw new Error(`${source}: a ResourceID with a non-empty name is required (got ${JSON.stringify(id)})`);
  }
}
