/** The three calls an informer makes (list, watch, find) and their implementation over rxkube's resource client. */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ResourceID } from '../core/index.js';
import {
  classifyError,
  createKubeClient,
  formatFieldSelector,
  formatLabelSelector,
  isKubeClient,
  METADATA_LIST_ACCEPT,
  METADATA_OBJECT_ACCEPT,
  openWatchStream,
  resourcePath,
  toPartialObjectMetadata,
  watchTargetOf,
  type KubeClient,
  type KubeList,
  type ListOptions,
  type ResourceDescriptor,
} from '../kube/index.js';

/** Which objects one list+watch covers. Selectors are in their query-string form ('' = none). */
export interface ListWatchScope {
  /** undefined: all namespaces (or a cluster-scoped type). */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

export interface ListRequest<T = unknown> {
  /** Aborts the list (the informer gave up on it). */
  readonly signal?: AbortSignal | undefined;
  /** A request (one page) that gets no answer within this is abandoned (ES1 dead-watch margin). */
  readonly silentAfterMs?: number | undefined;
  /**
   * Takes each page's items as it arrives (an empty list: one empty page), so that no list is held
   * whole; the answer's items are then what was not handed over (none). A client may ignore it
   * and answer every item.
   */
  readonly onPage?: ((items: readonly T[]) => void) | undefined;
}

export interface ListAnswer<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export interface WatchRequest extends ListWatchScope {
  readonly resourceVersion: string;
  /**
   * A watch-list (KEP-3157): the current state as ADDED events first, then a BOOKMARK annotated
   * `k8s.io/initial-events-end`, then the changes — the initial list streamed on one connection.
   */
  readonly sendInitialEvents?: boolean | undefined;
  readonly timeoutSeconds: number;
  /** The client gives up on a connection silent for this long (also before the answer's headers). */
  readonly inactivityTimeoutMs: number;
}

/** The raw type of a watch line: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
export type WatchEventType = string;

/**
 * The three calls an informer makes. `watch` resolves, once the server answered, to a function
 * that closes the stream; `onClose` runs exactly once (no error: the server ended the stream).
 */
export interface ListWatchClient<T> {
  list(scope: ListWatchScope, request?: ListRequest<T>): Promise<ListAnswer<T>>;
  watch(
    request: WatchRequest,
    onEvent: (type: WatchEventType, object: unknown) => void,
    onClose: (error?: unknown) => void,
  ): Promise<() => void>;
  /** One object, or undefined when it does not exist. */
  find(id: ResourceID): Promise<T | undefined>;
  /**
   * The client can ask for a watch-list (`sendInitialEvents`). An informer then streams its
   * initial lists, and falls back to paged lists when the server refuses.
   */
  readonly watchList?: boolean | undefined;
}

export interface KubeListWatchOptions {
  /** Items per list page (default 500, as client-go's reflector). */
  readonly pageSize?: number | undefined;
  /**
   * List, read and watch the objects' metadata only (`PartialObjectMetadata`, as client-go's
   * metadata informer asks for it): declare the client's type as `PartialObjectMetadata`.
   */
  readonly metadataOnly?: boolean | undefined;
  /** Stream initial lists as a watch-list where the server offers it (default true; false: paged lists). */
  readonly watchList?: boolean | undefined;
}

/**
 * List and read with rxkube's resource client (client-node's request machinery, pages of 500),
 * watch with `openWatchStream` (client-node's authentication, our own line reader):
 * allowWatchBookmarks and timeoutSeconds on every watch. Pass the KubeClient the rest of the
 * program uses (an Operator's: one client, one connection pool), or a KubeConfig for a client of
 * its own. When a continue token has expired (410: history compacted while paging), the list is
 * taken again in one request without a limit, as client-go's pager does (`FullListIfExpired`).
 */
export function kubeListWatch<T extends KubernetesObject>(
  kube: KubeClient | KubeConfig,
  resource: ResourceDescriptor,
  options: KubeListWatchOptions = {},
): ListWatchClient<T> {
  const kubeClient = isKubeClient(kube) ? kube : createKubeClient(kube);
  const client = kubeClient.resource<T>(resource);
  const d = client.descriptor;
  const pageSize = options.pageSize ?? 500;
  const metadataOnly = options.metadataOnly === true;
  // ES10: the client's type is the caller's declaration: PartialObjectMetadata for a metadata-only client.
  const asDeclared = (object: KubernetesObject): T => (metadataOnly ? toPartialObjectMetadata(object) : object) as T;
  const listPage = async (o: ListOptions): Promise<KubeList<T>> => {
    if (!metadataOnly) return client.list(o);
    const answer = (await kubeClient.request({
      method: 'GET',
      path: resourcePath(d, { namespace: o.namespace }),
      query: {
        labelSelector: formatLabelSelector(o.labelSelector) || undefined,
        fieldSelector: formatFieldSelector(o.fieldSelector) || undefined,
        limit: o.limit || undefined,
        continue: o.continue || undefined,
      },
      signal: o.signal,
      accept: METADATA_LIST_ACCEPT,
    })) as KubeList<KubernetesObject>;
    return { ...answer, items: (answer.items ?? []).map(asDeclared) };
  };
  const findOne = async (id: ResourceID): Promise<T | undefined> => {
    const namespace = d.namespaced ? id.namespace : undefined;
    if (!metadataOnly) return client.find({ name: id.name, namespace });
    try {
      return asDeclared(
        (await kubeClient.request({
          method: 'GET',
          path: resourcePath(d, { namespace, name: id.name }),
          accept: METADATA_OBJECT_ACCEPT,
        })) as KubernetesObject,
      );
    } catch (error) {
      if (classifyError(error) === 'notFound') return undefined;
      throw error;
    }
  };
  return {
    list: async (scope, request = {}) => {
      const query = {
        namespace: d.namespaced ? scope.namespace : undefined,
        labelSelector: scope.labelSelector || undefined,
        fieldSelector: scope.fieldSelector || undefined,
      };
      const page = (limit: number, next: string | undefined) => {
        const { signal, silentAfterMs } = request;
        const timeout = silentAfterMs === undefined ? undefined : AbortSignal.timeout(silentAfterMs);
        const bounded = signal && timeout ? AbortSignal.any([signal, timeout]) : (signal ?? timeout);
        return listPage({ ...query, limit, continue: next, signal: bounded }).catch((error: unknown) => {
          if (timeout?.aborted && !signal?.aborted) {
            // Named as fetch names its timeouts, so it is classified (and logged) as transient.
            throw Object.assign(new Error(`list of ${d.kind} got no answer within ${silentAfterMs} ms`, { cause: error }), {
              name: 'TimeoutError',
            });
          }
          throw error;
        });
      };
      const items: T[] = [];
      const take = request.onPage ?? ((page: readonly T[]) => items.push(...page));
      let next: string | undefined;
      let resourceVersion = '';
      do {
        let answer;
        try {
          answer = await page(pageSize, next);
        } catch (error) {
          if (next === undefined || classifyError(error) !== 'gone') throw error;
          const full = await page(0, undefined);
          items.length = 0; // the whole list again: what earlier pages brought is in it
          take(full.items);
          return { items, resourceVersion: full.metadata?.resourceVersion ?? '' };
        }
        take(answer.items);
        resourceVersion = answer.metadata?.resourceVersion ?? resourceVersion;
        next = answer.metadata?.continue || undefined;
      } while (next);
      return { items, resourceVersion };
    },
    find: findOne,
    watchList: options.watchList ?? true,
    watch: (request, onEvent, onClose) =>
      openWatchStream(
        watchTargetOf(kubeClient),
        {
          path: resourcePath(d, { namespace: d.namespaced ? request.namespace : undefined }),
          query: {
            // '' is no resourceVersion: the current objects first, then what changes.
            resourceVersion: request.resourceVersion || undefined,
            allowWatchBookmarks: true,
            ...(request.sendInitialEvents ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : {}),
            timeoutSeconds: request.timeoutSeconds,
            labelSelector: request.labelSelector || undefined,
            fieldSelector: request.fieldSelector || undefined,
          },
          inactivityTimeoutMs: request.inactivityTimeoutMs,
          accept: metadataOnly ? METADATA_OBJECT_ACCEPT : undefined,
          userAgent: kubeClient.userAgent,
        },
        metadataOnly
          ? (type, object) => onEvent(type, type === 'ERROR' || !isObject(object) ? object : toPartialObjectMetadata(object))
          : onEvent,
        onClose,
      ),
  };
}

function isObject(value: unknown): value is KubernetesObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
