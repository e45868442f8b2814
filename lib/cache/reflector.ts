/** One list+watch loop, forever: lists (paged or streamed), watches, resumes, and relists after 410 (ES1, ES9). */
import type { KubernetesObject } from '@kubernetes/client-node';
import { asyncScheduler, defer, Observable, repeat, retry, throwError, timer, type SchedulerLike } from 'rxjs';
import type { BackoffPolicy } from '../core/index.js';
import { classifyError, errorMessage, KubeApiError, statusCodeOf, statusOf } from '../kube/index.js';
import type { ListWatchClient, ListWatchScope } from './list-watch.js';
import { reconnectWithBackoff, type ReconnectFailure } from './reconnect.js';
import { resourceVersionOf } from './resource-version.js';
import { failWhenSilent } from './silence.js';

/** What one list+watch loop reports. */
export type ReflectorMessage<T> =
  /** A full list (the first one, or a relist after 410): the truth for this scope at that version. */
  | { readonly type: 'listed'; readonly items: readonly T[]; readonly resourceVersion: string }
  /** A watch is open from this resourceVersion: the loop is healthy. */
  | { readonly type: 'watching'; readonly resourceVersion: string }
  | { readonly type: 'event'; readonly action: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'bookmark'; readonly resourceVersion: string }
  /** A streamed list (a watch-list) begins: this scope's objects follow one by one. */
  | { readonly type: 'listStart' }
  | { readonly type: 'listItem'; readonly object: T }
  /** The streamed list is whole at this version: what was not streamed since 'listStart' is gone. */
  | { readonly type: 'listEnd'; readonly resourceVersion: string };

export interface ReflectorFailure extends ReconnectFailure {
  readonly phase: 'list' | 'watch';
}

export interface ReflectorOptions {
  readonly scope: ListWatchScope;
  /** Asked of the server on every watch; it closes the stream after this long. */
  readonly timeoutSeconds: number;
  /**
   * A watch silent for timeoutSeconds plus this is dead: it is closed and resumed. A request
   * (a watch, or one page of a list) that gets no answer within this is abandoned.
   */
  readonly deadMarginMs: number;
  /** A list (all its pages) that has not answered after this long is abandoned and retried. */
  readonly listTimeoutMs: number;
  /**
   * Stream each (re)list as a watch-list where the client can ask for one (default true): the
   * objects arrive one by one on the watch's connection, so no page of the list is held whole.
   */
  readonly watchList?: boolean | undefined;
  readonly backoff?: Partial<BackoffPolicy> | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  readonly random?: (() => number) | undefined;
  readonly onFailure?: ((failure: ReflectorFailure) => void) | undefined;
  /** For error messages, e.g. 'ConfigMap in default'. */
  readonly describe: string;
}

/**
 * ES1: a watch request got no answer within the dead-watch margin (`answered` false), or an open
 * watch was silent for longer than its timeout plus the margin (`answered` true: the connection
 * died, and it is resumed at once like a drop).
 */
export class WatchSilentError extends Error {
  override readonly name = 'WatchSilentError';
  constructor(
    message: string,
    readonly answered: boolean,
  ) {
    super(message);
  }
}

/** ES1: an open watch's connection broke (reset, cut off) rather than the server answering an error. */
export class WatchDroppedError extends Error {
  override readonly name = 'WatchDroppedError';
}

/**
 * A watch event or list item that is no Kubernetes object (no object, null, no metadata, an
 * unknown event type, an ERROR without a Status): the watch ends with it and the informer lists
 * again after its backoff, as client-go's reflector does on a decode error.
 */
export class MalformedWatchEventError extends Error {
  override readonly name = 'MalformedWatchEventError';
}

/** What is wrong with a watch event, or undefined when it is one the reflector can take. */
export function watchEventProblem(type: unknown, object: unknown): string | undefined {
  const what = typeof type === 'string' ? JSON.stringify(type.slice(0, 40)) : String(type);
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
    case 'BOOKMARK': {
      if (object === undefined) return `${what} event without an object`;
      const problem = objectProblem(object);
      if (problem !== undefined) return `${what} event whose object is ${problem}`;
      if (type !== 'BOOKMARK' && typeof (object as { metadata: { name?: unknown } }).metadata.name !== 'string')
        return `${what} event whose object has no metadata.name`;
      return undefined;
    }
    case 'ERROR': {
      if (object === null || typeof object !== 'object' || Array.isArray(object))
        return `ERROR event without a Status (object is ${describeJson(object)})`;
      const code = (object as { code?: unknown }).code;
      if (typeof code !== 'number' || !Number.isInteger(code))
        return `ERROR event whose Status has no numeric code (code is ${describeJson(code)})`;
      return undefined;
    }
    default:
      return `event of unknown type ${what}`;
  }
}

/** Why a value is no object with metadata ('null, not an object'), or undefined. */
function objectProblem(object: unknown): string | undefined {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return `${describeJson(object)}, not an object`;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return 'an object without metadata';
  return undefined;
}

function describeJson(value: unknown): string {
  return value === undefined
    ? 'missing'
    : value === null
      ? 'null'
      : Array.isArray(value)
        ? 'an array'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;
}

/** A failure of a connection that had been working: resumed at once, then backed off (ES1). */
export function isDroppedConnection(error: unknown): boolean {
  return error instanceof WatchDroppedError || (error instanceof WatchSilentError && error.answered);
}

/** The bookmark that closes a watch-list's initial events (KEP-3157). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

function endsInitialEvents(object: unknown): boolean {
  return (object as KubernetesObject | undefined)?.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true';
}

/** A server that does not serve watch-lists refuses the request's options (a 1.26 server: 422; the feature off: 400 or 422). */
function refusesWatchList(error: unknown): boolean {
  const code = error instanceof KubeApiError ? statusCodeOf(error) : undefined;
  return code === 400 || code === 422;
}

/**
 * ES1: one list+watch loop, forever. List, then watch from the list's resourceVersion; when the
 * server closes the stream, watch again from the last resourceVersion seen (events and bookmarks
 * advance it); on 410 Gone (HTTP 410 or an ERROR event with code 410) list again — and a list
 * that itself meets a 410 is retried at once, not failed; when an open watch's connection drops
 * resume at once; on any other failure back off and resume. Unsubscribing closes the open watch
 * and aborts a list in flight.
 */
export function reflector<T extends KubernetesObject>(
  client: ListWatchClient<T>,
  options: ReflectorOptions,
): Observable<ReflectorMessage<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const deadAfterMs = options.timeoutSeconds * 1000 + options.deadMarginMs;

  return defer(() => {
    let resourceVersion: string | undefined;
    let phase: 'list' | 'watch' = 'list';
    // ES9: streamed lists until the server shows it does not serve them; then paged lists.
    let streamLists = client.watchList === true && options.watchList !== false;

    /**
     * A paged list. Where the client hands its pages over as they come, they are streamed as a
     * watch-list is ('listStart', 'listItem's, 'listEnd'), so that the informer builds the new
     * state into its store and no list is held whole beside it; else one 'listed'.
     */
    const listOnce$ = new Observable<ReflectorMessage<T>>((subscriber) => {
      const abort = new AbortController();
      let streamed = false;
      let count = 0;
      const checked = (items: readonly T[], from: number): readonly T[] => {
        items.forEach((item, i) => {
          const problem = objectProblem(item);
          if (problem !== undefined)
            throw new MalformedWatchEventError(`list of ${options.describe} answered a malformed item: items[${from + i}] is ${problem}`);
        });
        return items;
      };
      const onPage = (items: readonly T[]): void => {
        if (subscriber.closed) return;
        checked(items, count);
        count += items.length;
        if (!streamed) subscriber.next({ type: 'listStart' });
        streamed = true;
        for (const object of items) subscriber.next({ type: 'listItem', object });
      };
      client.list(options.scope, { signal: abort.signal, silentAfterMs: options.deadMarginMs, onPage }).then(
        (answer) => {
          try {
            if (!answer.resourceVersion) throw new Error(`list of ${options.describe} answered without metadata.resourceVersion`);
            if (streamed) {
              if (answer.items.length > 0) onPage(answer.items);
              resourceVersion = answer.resourceVersion;
              subscriber.next({ type: 'listEnd', resourceVersion });
            } else {
              const items = checked(answer.items, 0);
              resourceVersion = answer.resourceVersion;
              subscriber.next({ type: 'listed', items, resourceVersion });
            }
            subscriber.complete();
          } catch (error) {
            subscriber.error(error);
          }
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => abort.abort();
    }).pipe(
      // A 410 while listing (a continue token below a compaction) is no failure: list afresh at once.
      retry({ count: 1, delay: (error: unknown) => (classifyError(error) === 'gone' ? timer(0, scheduler) : throwError(() => error)) }),
    );
    /** The whole list, every page, within the list timeout. */
    const list$ = new Observable<ReflectorMessage<T>>((subscriber) => {
      const listing = listOnce$.subscribe(subscriber);
      const deadline = scheduler.schedule(
        () => subscriber.error(new Error(`list of ${options.describe} did not answer within ${options.listTimeoutMs} ms`)),
        options.listTimeoutMs,
      );
      return () => {
        deadline.unsubscribe();
        listing.unsubscribe();
      };
    });

    /** A watch from `from`; with `initial`, a watch-list whose first events are the list. */
    const watch$ = (from: string, initial: boolean) =>
      new Observable<ReflectorMessage<T>>((subscriber) => {
        let ended = false;
        let close: (() => void) | undefined;
        let listing: 'before' | 'streaming' | 'done' = initial ? 'before' : 'done';
        const startListing = (): void => {
          if (listing !== 'before') return;
          listing = 'streaming';
          subscriber.next({ type: 'listStart' });
        };
        const end = (error?: unknown): void => {
          if (ended) return;
          ended = true;
          if (listing !== 'done' && (error === undefined ? true : refusesWatchList(error))) {
            // Refused, or ended without its closing bookmark: this server does not serve watch-lists.
            streamLists = false;
            subscriber.complete();
          } else if (error === undefined) subscriber.complete();
          else if (classifyError(error) === 'gone') {
            resourceVersion = undefined; // history is gone: the next round lists again
            subscriber.complete();
          } else if (close !== undefined && !(error instanceof KubeApiError) && !(error instanceof MalformedWatchEventError)) {
            subscriber.error(new WatchDroppedError(`watch of ${options.describe} dropped: ${errorMessage(error)}`, { cause: error }));
          } else subscriber.error(error);
        };
        const onEvent = (type: string, object: unknown): void => {
          if (ended) return;
          const problem = watchEventProblem(type, object);
          if (problem !== undefined) {
            // An event may have been lost: list again (after the backoff) rather than resume from here.
            resourceVersion = undefined;
            end(new MalformedWatchEventError(`watch of ${options.describe} sent a malformed event: ${problem}`));
            return;
          }
          switch (type) {
            case 'ADDED':
            case 'MODIFIED':
            case 'DELETED': {
              const obj = object as T;
              if (listing !== 'done' && type === 'ADDED') {
                // The initial state comes in key order, not revision order: no resume point until its end.
                startListing();
                subscriber.next({ type: 'listItem', object: obj });
                return;
              }
              resourceVersion = resourceVersionOf(obj) ?? resourceVersion;
              subscriber.next({ type: 'event', action: type, object: obj });
              return;
            }
            case 'BOOKMARK': {
              if (listing !== 'done') {
                if (!endsInitialEvents(object)) return;
                startListing();
                listing = 'done';
                resourceVersion = resourceVersionOf(object as KubernetesObject) ?? from;
                subscriber.next({ type: 'listEnd', resourceVersion });
                return;
              }
              const rv = resourceVersionOf(object as KubernetesObject);
              if (rv) resourceVersion = rv;
              subscriber.next({ type: 'bookmark', resourceVersion: resourceVersion ?? from });
              return;
            }
            case 'ERROR': {
              const status = statusOf(object);
              end(
                classifyError(object) === 'gone'
                  ? object
                  : new KubeApiError(status?.code ?? 500, object, {}, { method: 'WATCH', path: options.describe }),
              );
              return;
            }
          }
        };
        client
          .watch(
            {
              ...options.scope,
              resourceVersion: from,
              timeoutSeconds: options.timeoutSeconds,
              inactivityTimeoutMs: deadAfterMs,
              ...(initial ? { sendInitialEvents: true } : {}),
            },
            onEvent,
            (error) => end(error),
          )
          .then(
            (stop) => {
              if (ended) stop();
              else {
                close = stop;
                subscriber.next({ type: 'watching', resourceVersion: from });
              }
            },
            (error: unknown) => end(error),
          );
        // A watch-list that has not closed its initial events within the list timeout is not served as one.
        const listDeadline = initial ? scheduler.schedule(() => end(), options.listTimeoutMs) : undefined;
        return () => {
          ended = true;
          listDeadline?.unsubscribe();
          close?.();
        };
      }).pipe(
        failWhenSilent(options.deadMarginMs, deadAfterMs, scheduler, (seen) =>
          seen === 0
            ? new WatchSilentError(`watch of ${options.describe} got no answer within ${options.deadMarginMs} ms`, false)
            : new WatchSilentError(`watch of ${options.describe} was silent for ${deadAfterMs} ms`, true),
        ),
      );

    return defer(() => {
      phase = resourceVersion === undefined ? 'list' : 'watch';
      if (resourceVersion !== undefined) return watch$(resourceVersion, false);
      return streamLists ? watch$('', true) : list$;
    }).pipe(
      repeat(),
      reconnectWithBackoff<ReflectorMessage<T>>({
        isDropped: isDroppedConnection,
        backoff: options.backoff,
        scheduler,
        random: options.random,
        onFailure: (failure) => options.onFailure?.({ ...failure, phase }),
      }),
    );
  });
}
