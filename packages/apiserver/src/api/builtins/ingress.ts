/**
 * The built-in Ingress: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { isJsonObject } from '../../base/json.js';
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';

const ingressStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
  },
};

export function ingressType(): ResourceType {
  return builtin({
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'ingresses',
    kind: 'Ingress',
    namespaced: true,
    shortNames: ['ing'],
    status: true,
    generation: true,
    strategy: ingressStrategy,
    columns: [
      column('Class', 'string', (o) => str(getPath(o, ['spec', 'ingressClassName'])) || '<none>'),
      column('Hosts', 'string', (o) => {
        const rules = getPath(o, ['spec', 'rules']);
        const hosts = Array.isArray(rules) ? rules.map((r) => (isJsonObject(r) ? str(r.host) : '')).filter(Boolean) : [];
        return hosts.length ? hosts.join(',') : '*';
      }),
      column('Address', 'string', () => ''),
      column('Ports', 'string', () => '80'),
    ],
  });
}
