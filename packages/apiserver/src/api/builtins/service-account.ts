/**
 * The built-in ServiceAccount: the columns `kubectl get` prints for it.
 */
import type { ResourceType } from '../registry.js';
import { builtin, column } from './builtin.js';

export function serviceAccountType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
    extraSubresources: ['token'],
    columns: [column('Secrets', 'string', (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0))],
  });
}
