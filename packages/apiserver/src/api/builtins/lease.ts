/**
 * The built-in Lease: the columns `kubectl get` prints for it.
 */
import { getPath } from '../../base/meta.js';
import type { ResourceType } from '../registry.js';
import { builtin, column, str } from './builtin.js';

export function leaseType(): ResourceType {
  return builtin({
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
    createOnUpdate: true,
    columns: [column('Holder', 'string', (o) => str(getPath(o, ['spec', 'holderIdentity'])))],
  });
}
