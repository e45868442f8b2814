/**
 * The built-in Secret: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { fieldInvalid } from '../../base/errors.js';
import { isJsonObject } from '../../base/json.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, count, str } from './builtin.js';
import { immutableData, validateConfigKeys } from './config-data.js';
import { objectAt, setDefault } from './defaults.js';

const secretStrategy: Strategy = {
  defaults(obj) {
    setDefault(obj, 'type', 'Opaque');
    // stringData is write-only: merged into data (base64) and never stored.
    if (isJsonObject(obj.stringData)) {
      const data = objectAt(obj, 'data');
      for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    }
    delete obj.stringData;
  },
  validate(obj, old) {
    const causes = [...validateConfigKeys(obj, ['data']), ...immutableData(obj, old, ['data'])];
    if (old && old.type !== obj.type) causes.push(fieldInvalid('type', obj.type, 'field is immutable'));
    return causes;
  },
};

export function secretType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'secrets',
    kind: 'Secret',
    namespaced: true,
    strategy: secretStrategy,
    columns: [column('Type', 'string', (o) => str(o.type)), column('Data', 'string', (o) => count(o.data))],
  });
}
