/**
 * SH1, OB4 at the moment of each decision: a replica acts on a primary only while it may be sure
 * it holds its Lease (leader or shard member), judged on the clock when it is about to act — not
 * when a timer says the renew deadline passed, since a process frozen past its lease wakes with
 * every timer due at once and fires them in whatever order the runtime picks.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { LeaseLostError } from '../core/index.js';
import type { KubeClient, ResourceClient } from '../kube/index.js';

/** Answers, at the moment it is asked, whether this replica still holds its Lease. */
export type LeaseCheck = () => boolean;

const WRITES = [
  'create',
  'replace',
  'replaceStatus',
  'delete',
  'apply',
  'applyStatus',
  'mergePatch',
  'mergePatchStatus',
  'jsonPatch',
  'jsonPatchStatus',
  'patch',
] as const;

/** Throws LeaseLostError, naming `what()`, unless `holdsLease()` says the Lease is held now (the name is built only then). */
export function requireLease(holdsLease: LeaseCheck, what: () => string): void {
  if (!holdsLease()) throw new LeaseLostError(what());
}

/**
 * `client`, whose every write (any request but a GET, and every write method of its resource
 * clients) asks `holdsLease` first and is refused with a LeaseLostError, unsent, when it answers
 * false. Reads pass.
 */
export function leaseGatedClient(client: KubeClient, holdsLease: LeaseCheck): KubeClient {
  return {
    kubeConfig: client.kubeConfig,
    discover: (apiVersion, kind, options) => client.discover(apiVersion, kind, options),
    request: async (req) => {
      if (req.method !== 'GET') requireLease(holdsLease, () => `${req.method} ${req.path}`);
      return client.request(req);
    },
    resource: <T extends KubernetesObject = KubernetesObject>(descriptor: Parameters<KubeClient['resource']>[0]): ResourceClient<T> => {
      const inner = client.resource<T>(descriptor);
      const gated: Record<string, unknown> = { ...inner };
      for (const verb of WRITES) {
        // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with `apply(inner, …)`
        const write = inner[verb] as (...args: unknown[]) => Promise<unknown>;
        gated[verb] = async (...args: unknown[]) => {
          requireLease(holdsLease, () => `${verb} of ${inner.descriptor.plural}`);
          return write.apply(inner, args);
        };
      }
      return gated as unknown as ResourceClient<T>;
    },
  };
}
