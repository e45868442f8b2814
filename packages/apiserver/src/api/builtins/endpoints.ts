/**
 * The built-in Endpoints: the columns `kubectl get` prints for it.
 */
import type { JsonObject } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import type { ResourceType } from '../registry.js';
import { builtin, column, str } from './builtin.js';

function endpointsColumn(o: JsonObject): string {
  const subsets = o.subsets;
  const out: string[] = [];
  if (Array.isArray(subsets)) {
    for (const s of subsets) {
      if (!isJsonObject(s) || !Array.isArray(s.addresses)) continue;
      const ports = Array.isArray(s.ports) ? s.ports.map((p) => (isJsonObject(p) ? str(p.port) : '')) : [''];
      for (const a of s.addresses) for (const p of ports) out.push(`${isJsonObject(a) ? str(a.ip) : ''}${p ? `:${p}` : ''}`);
    }
  }
  return out.length ? out.slice(0, 3).join(',') + (out.length > 3 ? ` + ${out.length - 3} more...` : '') : '<none>';
}

export function endpointsType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'endpoints',
    kind: 'Endpoints',
    namespaced: true,
    shortNames: ['ep'],
    createOnUpdate: true,
    columns: [column('Endpoints', 'string', endpointsColumn)],
  });
}
