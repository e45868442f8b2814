/**
 * The built-in ConfigMap: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, count } from './builtin.js';
import { immutableData, validateConfigKeys } from './config-data.js';

const configMapStrategy: Strategy = {
  validate(obj, old) {
    return [...validateConfigKeys(obj, ['data', 'binaryData']), ...immutableData(obj, old, ['data', 'binaryData'])];
  },
};

export function configMapType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    shortNames: ['cm'],
    strategy: configMapStrategy,
    columns: [column('Data', 'string', (o) => count(o.data) + count(o.binaryData))],
  });
}
