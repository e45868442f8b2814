// Sharding one controller across replicas (docs/sharding.md): definitions only — run several
// replicas of an operator built this way against one cluster.
import type { KubernetesObject } from '@kubernetes/client-node';
import { Operator, UpdateControl, type Reconciler } from 'rxkube';

const webPages = { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', plural: 'webpages' } as const;
const reconciler: Reconciler<KubernetesObject> = { reconcile: () => UpdateControl.noUpdate() };

export function shardedOperators(): Operator[] {
  const operator = new Operator({ sharding: {} }); // every controller of this operator, or:
  operator.register(reconciler, { resource: webPages, sharding: { namespace: 'operators' } });
  return [operator];
}
