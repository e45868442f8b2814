/**
 * The built-in StorageClass: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldForbidden, fieldRequired } from '../../base/errors.js';
import { deepEqual } from '../../base/json.js';
import { getPath, nameOf } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';
import { setDefault } from './defaults.js';

/** The annotation that makes a StorageClass the default for claims that name none. */
export const DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';

const storageClassStrategy: Strategy = {
  defaults(obj) {
    setDefault(obj, 'reclaimPolicy', 'Delete');
    setDefault(obj, 'volumeBindingMode', 'Immediate');
  },
  validate(obj, old) {
    const causes: StatusCause[] = [];
    if (typeof obj.provisioner !== 'string' || obj.provisioner === '') causes.push(fieldRequired('provisioner', ''));
    for (const f of ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode']) {
      if (old && !deepEqual(obj[f] ?? null, old[f] ?? null)) causes.push(fieldForbidden(f, 'updates to ' + f + ' are forbidden.'));
    }
    return causes;
  },
};

export function storageClassType(): ResourceType {
  return builtin({
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'storageclasses',
    kind: 'StorageClass',
    namespaced: false,
    shortNames: ['sc'],
    strategy: storageClassStrategy,
    columns: [
      // The server's printer marks the default class in the name (printStorageClass).
      {
        ...column(
          'Name',
          'string',
          (o) => `${nameOf(o)}${getPath(o, ['metadata', 'annotations', DEFAULT_STORAGE_CLASS]) === 'true' ? ' (default)' : ''}`,
        ),
        format: 'name',
      },
      column('Provisioner', 'string', (o) => str(o.provisioner)),
      column('ReclaimPolicy', 'string', (o) => str(o.reclaimPolicy)),
      column('VolumeBindingMode', 'string', (o) => str(o.volumeBindingMode)),
      column('AllowVolumeExpansion', 'string', (o) => str(o.allowVolumeExpansion ?? false)),
    ],
  });
}
