import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import { builtinResources, createKubeClient, isKubeClient, type KubeClient, type ResourceClient } from '../kube/index.js';
import { kubeListWatch, type ListWatchClient } from '../cache/index.js';

/**
 * The one client of coordination.k8s.io Leases, for leader election (one Lease read, written and
 * watched) and for sharding (a member's own Lease written, the group's listed and watched by an
 * informer). Errors are thrown as the API answered them (classifyError: 'conflict' when someone
 * else wrote first, 'notFound'); every call ends when its signal aborts.
 */
export interface LeaseClient extends Pick<ResourceClient<V1Lease>, 'create' | 'replace' | 'get' | 'find' | 'delete'> {
  /** Lists and watches Leases as an informer does. */
  readonly listWatch: ListWatchClient<V1Lease>;
}

/**
 * A LeaseClient on the KubeClient the rest of the program uses (an Operator passes its own: one
 * client, one connection pool), or on a KubeConfig.
 */
export function kubeLeaseClient(kube: KubeClient | KubeConfig): LeaseClient {
  const client = isKubeClient(kube) ? kube : createKubeClient(kube);
  const leases = client.resource<V1Lease>(builtinResources.lease);
  return {
    create: (lease, options) => leases.create(lease, options),
    replace: (lease, options) => leases.replace(lease, options),
    get: (ref, options) => leases.get(ref, options),
    find: (ref, options) => leases.find(ref, options),
    delete: (ref, options) => leases.delete(ref, options),
    listWatch: kubeListWatch<V1Lease>(client, builtinResources.lease),
  };
}

/** How long the server keeps a lease watch open before the client opens a new one. */
const LEASE_WATCH_SECONDS = 300;

/**
 * Sends every version of one Lease the server stores from now on (the current one first, if any:
 * a watch from no resourceVersion) until the returned function is called or the stream ends;
 * `onClose` then runs once (no error: the server ended it). Renewals arrive every retry period; a
 * longer silence is a dead connection or a dead leader, and in both cases the elector's own
 * polling still runs.
 */
export function watchLease(
  client: LeaseClient,
  ref: { readonly name: string; readonly namespace: string },
  onLease: (lease: V1Lease) => void,
  onClose: (error?: unknown) => void,
): Promise<() => void> {
  return client.listWatch.watch(
    {
      namespace: ref.namespace,
      fieldSelector: `metadata.name=${ref.name}`,
      resourceVersion: '',
      timeoutSeconds: LEASE_WATCH_SECONDS,
      inactivityTimeoutMs: (LEASE_WATCH_SECONDS + 30) * 1000,
    },
    (type, object) => {
      if (type === 'ADDED' || type === 'MODIFIED') onLease(object as V1Lease);
    },
    onClose,
  );
}
