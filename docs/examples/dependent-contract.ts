// The DependentResource contract (docs/dependent-resources.md): traits are optional methods, and a
// missing one switches its step off. No Kubernetes here: `npx tsx docs/examples/dependent-contract.ts`.
import type { KubernetesObject } from '@kubernetes/client-node';
import { deleteDependent, reconcileDependent, type DependentResource } from 'rxkube';

interface Site extends KubernetesObject {
  spec: { sizeGb: number };
}

interface Bucket {
  name: string;
  sizeGb: number;
}

/** Stands in for a storage API. */
const buckets = new Map<string, Bucket>();

// Created once and never resized (no update), and it outlives the Site (no delete).
export const bucket: DependentResource<Bucket, Site> = {
  name: 'bucket',
  desired: (site) => ({ name: site.metadata!.name!, sizeGb: site.spec.sizeGb }),
  getSecondary: (site) => buckets.get(site.metadata!.name!),
  create: (desired) => {
    buckets.set(desired.name, desired);
  },
};

const site = (sizeGb: number): Site => ({ metadata: { name: 'shop', namespace: 'default' }, spec: { sizeGb } });

const show = (result: Awaited<ReturnType<typeof reconcileDependent>>) =>
  `${result.operation}${'reason' in result ? ` (${result.reason})` : ''}: ${JSON.stringify(result.resource)}`;

console.log(show(await reconcileDependent(bucket, site(10), {}))); // absent: created
console.log(show(await reconcileDependent(bucket, site(10), {}))); // matches: unchanged
console.log(show(await reconcileDependent(bucket, site(20), {}))); // differs, no update trait: skipped
console.log((await deleteDependent(bucket, site(20), {})).operation, [...buckets.keys()]); // no delete trait: skipped
