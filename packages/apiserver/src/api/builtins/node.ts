/**
 * The built-in Node: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { isJsonObject } from '../../base/json.js';
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';

const nodeStrategy: Strategy = {};

export function nodeType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    status: true,
    strategy: nodeStrategy,
    columns: [
      column('Status', 'string', (o) => {
        const conditions = getPath(o, ['status', 'conditions']);
        const ready = Array.isArray(conditions) ? conditions.find((c) => isJsonObject(c) && c.type === 'Ready') : undefined;
        return isJsonObject(ready) && ready.status === 'True' ? 'Ready' : 'NotReady';
      }),
      column('Roles', 'string', () => '<none>'),
      column('Version', 'string', (o) => str(getPath(o, ['status', 'nodeInfo', 'kubeletVersion']))),
    ],
  });
}
