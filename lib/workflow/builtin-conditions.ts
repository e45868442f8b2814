/**
 * Conditions rxkube ships for Kubernetes dependents:
 * - `deploymentReady` (ready postcondition): the Deployment rolled out its current generation;
 * - `resourceDeleted` (delete postcondition): the dependent's objects are gone from the server,
 *   read through the API rather than the cache, so finalizers on them hold the workflow back;
 * - `crdPresent(name)` (activation condition): a CustomResourceDefinition exists, so the
 *   dependent's event source can be registered (WF5).
 * Each answers a detailed result whose `detail` says why, kept in the workflow result (WF3).
 */
import { isMarkedForDeletion, isRecord } from '../core/index.js';
import { type DependentContext, type DependentResource, isServerReadable, requireServerClient } from '../dependent/index.js';
import { builtinResources, type KubeClient } from '../kube/index.js';
import type { ConditionResult } from './conditions.js';

export type ServerContext = DependentContext & { readonly client?: KubeClient };

export interface DeploymentReadiness {
  /** The Deployment exists (in the dependent's cache). */
  readonly exists: boolean;
  readonly replicas?: number;
  readonly readyReplicas?: number;
  readonly availableReplicas?: number;
  readonly generation?: number;
  readonly observedGeneration?: number;
}

function numberAt(obj: unknown, ...path: string[]): number | undefined {
  let node: unknown = obj;
  for (const key of path) node = isRecord(node) ? node[key] : undefined;
  return typeof node === 'number' ? node : undefined;
}

async function secondaryOf<R, P, C extends DependentContext>(
  dependent: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
  condition: string,
): Promise<R | undefined> {
  if (typeof dependent.getSecondary !== 'function') {
    throw new TypeError(`${condition}: dependent '${dependent.name ?? '(unnamed)'}' has no getSecondary() to read its object from`);
  }
  return dependent.getSecondary(primary, ctx);
}

/**
 * Whether a Deployment object has rolled out: the controller observed its generation and
 * `readyReplicas` and `availableReplicas` reach `spec.replicas` (default 1).
 */
export function deploymentReadiness(deployment: unknown): ConditionResult<DeploymentReadiness> {
  if (!isRecord(deployment)) return { met: false, detail: { exists: false } };
  const replicas = numberAt(deployment, 'spec', 'replicas') ?? 1;
  const readyReplicas = numberAt(deployment, 'status', 'readyReplicas') ?? 0;
  const availableReplicas = numberAt(deployment, 'status', 'availableReplicas') ?? 0;
  const generation = numberAt(deployment, 'metadata', 'generation') ?? 0;
  const observedGeneration = numberAt(deployment, 'status', 'observedGeneration') ?? 0;
  const met = observedGeneration >= generation && readyReplicas >= replicas && availableReplicas >= replicas;
  return { met, detail: { exists: true, replicas, readyReplicas, availableReplicas, generation, observedGeneration } };
}

/** Ready postcondition: the dependent's Deployment rolled out its current generation. */
export async function deploymentReady<R, P, C extends DependentContext>(
  dependent: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
): Promise<ConditionResult<DeploymentReadiness>> {
  return deploymentReadiness(await secondaryOf(dependent, primary, ctx, 'deploymentReady'));
}

export interface ResourceDeletedDetail {
  /** The objects still on the server (`namespace/name`), with whether they are terminating. */
  readonly remaining: readonly { readonly name: string; readonly terminating: boolean; readonly finalizers: readonly string[] }[];
}

/**
 * Delete postcondition: none of the dependent's objects of this primary is left on the server —
 * not even one marked for deletion that finalizers still hold. Reads the API server, not the
 * cache. For dependents made by `kubernetesDependent` and `bulkDependent`; needs `ctx.client`.
 */
export async function resourceDeleted<R, P, C extends ServerContext>(
  dependent: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
): Promise<ConditionResult<ResourceDeletedDetail>> {
  if (!isServerReadable<P, C>(dependent)) {
    throw new TypeError(
      `resourceDeleted: dependent '${dependent.name ?? '(unnamed)'}' is not a Kubernetes dependent (kubernetesDependent or bulkDependent)`,
    );
  }
  const remaining = (await dependent.readFromServer(primary, ctx)).map((obj) => ({
    name: obj.metadata?.namespace ? `${obj.metadata.namespace}/${obj.metadata.name ?? ''}` : (obj.metadata?.name ?? ''),
    terminating: isMarkedForDeletion(obj),
    finalizers: obj.metadata?.finalizers ?? [],
  }));
  return { met: remaining.length === 0, detail: { remaining } };
}

export interface CrdPresentOptions {
  /**
   * How long a "present" answer is trusted before the CRD is read again (default 30 s; 0 reads
   * on every evaluation). An absent CRD is read again on every evaluation.
   */
  readonly recheckAfterMs?: number;
  /** Clock (tests). */
  readonly now?: () => number;
}

export interface CrdPresentDetail {
  readonly crd: string;
  readonly present: boolean;
}

const CRD_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/**
 * Activation condition: the CustomResourceDefinition `name` (`<plural>.<group>`) exists. While it
 * does not, the dependent is inactive and its event source is not registered — so an operator
 * can run on clusters without the optional CRD and pick it up once it is installed (WF5).
 */
export function crdPresent(
  name: string,
  options: CrdPresentOptions = {},
): <R, P, C extends ServerContext>(
  dependent: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
) => Promise<ConditionResult<CrdPresentDetail>> {
  if (typeof name !== 'string' || !CRD_NAME.test(name)) {
    throw new TypeError(`crdPresent: '${String(name)}' is not a CRD name (<plural>.<group>, e.g. 'widgets.sample.rxkube.dev')`);
  }
  const recheckAfterMs = options.recheckAfterMs ?? 30_000;
  if (!(Number.isFinite(recheckAfterMs) && recheckAfterMs >= 0)) {
    throw new TypeError(`crdPresent(${name}): recheckAfterMs must be a finite number of milliseconds >= 0, got ${String(recheckAfterMs)}`);
  }
  const now = options.now ?? Date.now;
  const seenAt = new WeakMap<KubeClient, number>();
  return async (_dependent, _primary, ctx) => {
    const client = requireServerClient(ctx, `crdPresent(${name})`);
    const seen = seenAt.get(client);
    if (seen !== undefined && now() - seen < recheckAfterMs) return { met: true, detail: { crd: name, present: true } };
    const crd = await client.resource(builtinResources.customResourceDefinition).find({ name }, { signal: ctx.signal });
    if (crd) seenAt.set(client, now());
    else seenAt.delete(client);
    return { met: crd !== undefined, detail: { crd: name, present: crd !== undefined } };
  };
}
