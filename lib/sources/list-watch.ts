import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { ResourceID } from '../core/index.js';
import { createKubeClient, resourcePath, type ResourceDescriptor } from '../kube/index.js';

/** Which objects one list+watch covers. Selectors are in their query-string form ('' = none). */
export interface ListWatchScope {
  /** undefined: all namespaces (or a cluster-scoped type). */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

export interface ListAnswer<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export interface WatchRequest extends ListWatchScope {
  readonly resourceVersion: string;
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
  list(scope: ListWatchScope): Promise<ListAnswer<T>>;
  watch(
    request: WatchRequest,
    onEvent: (type: WatchEventType, object: unknown) => void,
    onClose: (error?: unknown) => void,
  ): Promise<() => void>;
  /** One object, or undefined when it does not exist. */
  read(id: ResourceID): Promise<T | undefined>;
}

/**
 * List and read with rxkube's resource client (client-node's request machinery, pages of 500),
 * watch with client-node's `Watch`: allowWatchBookmarks and timeoutSeconds on every watch.
 */
export function kubeListWatch<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  resource: ResourceDescriptor,
): ListWatchClient<T> {
  const client = createKubeClient(kubeConfig).resource<T>(resource);
  const d = client.descriptor;
  return {
    list: (scope) =>
      client.listAll({
        namespace: d.namespaced ? scope.namespace : undefined,
        labelSelector: scope.labelSelector || undefined,
        fieldSelector: scope.fieldSelector || undefined,
      }),
    read: (id) => client.find({ name: id.name, namespace: d.namespaced ? id.namespace : undefined }),
    watch: async (request, onEvent, onClose) => {
      const watch = new Watch(kubeConfig);
      // client-node aborts a silent connection after its private 30 s default; align it with ours
      // so a quiet but healthy watch is not cut every 30 s, and a stall before the headers ends.
      Object.assign(watch, { requestTimeoutMs: request.inactivityTimeoutMs });
      const path = resourcePath(d, { namespace: d.namespaced ? request.namespace : undefined });
      const controller = await watch.watch(
        path,
        {
          resourceVersion: request.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: request.timeoutSeconds,
          labelSelector: request.labelSelector || undefined,
          fieldSelector: request.fieldSelector || undefined,
        },
        (type: string, object: unknown) => onEvent(type, object),
        (error: unknown) => onClose(error ?? undefined),
      );
      return () => controller.abort();
    },
  };
}
