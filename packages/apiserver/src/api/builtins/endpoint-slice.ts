/**
 * The built-in EndpointSlice: the columns `kubectl get` prints for it.
 */
import { isJsonObject } from '../../base/json.js';
import type { ResourceType } from '../registry.js';
import { builtin, column, str } from './builtin.js';

export function endpointSliceType(): ResourceType {
  return builtin({
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    kind: 'EndpointSlice',
    namespaced: true,
    columns: [
      column('AddressType', 'string', (o) => str(o.addressType)),
      column('Ports', 'string', (o) => {
        const ports = o.ports;
        return Array.isArray(ports) && ports.length ? ports.map((p) => (isJsonObject(p) ? str(p.port) : '')).join(',') : '<unset>';
      }),
      column('Endpoints', 'string', (o) => {
        const eps = o.endpoints;
        const addresses = Array.isArray(eps)
          ? eps.flatMap((e) => (isJsonObject(e) && Array.isArray(e.addresses) ? e.addresses.map(str) : []))
          : [];
        return addresses.length
          ? addresses.slice(0, 3).join(',') + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : '')
          : '<unset>';
      }),
    ],
  });
}
