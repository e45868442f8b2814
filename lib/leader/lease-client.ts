import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import { createKubeClient, isKubeClient, openWatchStream, resourcePath, watchTargetOf, type KubeClient } from '../kube/index.js';

/**
 * The calls an elector makes on its one Lease. Errors are thrown as the API answered them
 * (classifyError: 'conflict' when someone else wrote first). Every call ends when `signal` aborts.
 */
export interface LeaseClient {
  /** The lease, or undefined when it does not exist. */
  read(signal: AbortSignal): Promise<V1Lease | undefined>;
  create(lease: V1Lease, signal: AbortSignal): Promise<V1Lease>;
  /** A write conditional on `lease.metadata.resourceVersion`. */
  replace(lease: V1Lease, signal: AbortSignal): Promise<V1Lease>;
  /**
   * Sends every version of the lease the server stores from now on (the current one first, if
   * any) until the returned function is called or the stream ends; `onClose` then runs once
   * (no error: the server ended it).
   */
  watch(onLease: (lease: V1Lease) => void, onClose: (error?: unknown) => void): Promise<() => void>;
}

/** How long the server keeps a lease watch open before the client opens a new one. */
const LEASE_WATCH_SECONDS = 300;

const LEASES = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true } as const;

/**
 * A LeaseClient on the KubeClient the rest of the program uses (an Operator passes its own: one
 * client, one connection pool), or on a KubeConfig; the watch is `openWatchStream` with a field
 * selector.
 */
export function kubeLeaseClient(kube: KubeClient | KubeConfig, name: string, namespace: string): LeaseClient {
  const client = isKubeClient(kube) ? kube : createKubeClient(kube);
  const leases = client.resource<V1Lease>(LEASES);
  return {
    read: (signal) => leases.find({ name, namespace }, { signal }),
    create: (body, signal) => leases.create(body, { signal }),
    replace: (body, signal) => leases.replace(body, { signal }),
    // Renewals arrive every retry period; a longer silence is a dead connection or a dead leader,
    // and in both cases the elector's own polling still runs.
    watch: (onLease, onClose) =>
      openWatchStream(
        watchTargetOf(client),
        {
          path: resourcePath(leases.descriptor, { namespace }),
          query: { fieldSelector: `metadata.name=${name}`, timeoutSeconds: LEASE_WATCH_SECONDS },
          inactivityTimeoutMs: (LEASE_WATCH_SECONDS + 30) * 1000,
        },
        (type, object) => {
          if (type === 'ADDED' || type === 'MODIFIED') onLease(object as V1Lease);
        },
        onClose,
      ),
  };
}
