/**
 * The built-in PersistentVolumeClaim: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { parseQuantity } from '../../grammar/cel.js';
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldRequired } from '../../base/errors.js';
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { accessModes } from './persistent-volume.js';
import { builtin, column, str } from './builtin.js';
import { objectAt, setDefault } from './defaults.js';

const pvcStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending' };
  },
  defaults(obj) {
    setDefault(objectAt(obj, 'spec'), 'volumeMode', 'Filesystem');
  },
  validate(obj) {
    const causes: StatusCause[] = [];
    const modes = getPath(obj, ['spec', 'accessModes']);
    if (!Array.isArray(modes) || modes.length === 0) causes.push(fieldRequired('spec.accessModes', 'at least 1 access mode is required'));
    const storage = getPath(obj, ['spec', 'resources', 'requests', 'storage']);
    if (storage === undefined) causes.push(fieldRequired('spec.resources[storage]', ''));
    else if ((parseQuantity(String(storage)) ?? 0n) <= 0n)
      causes.push(fieldInvalid('spec.resources[storage]', String(storage), 'must be greater than zero'));
    return causes;
  },
};

export function persistentVolumeClaimType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    status: true,
    strategy: pvcStrategy,
    columns: [
      column('Status', 'string', (o) => str(getPath(o, ['status', 'phase']))),
      column('Volume', 'string', (o) => str(getPath(o, ['spec', 'volumeName']))),
      column('Capacity', 'string', (o) => str(getPath(o, ['status', 'capacity', 'storage']))),
      column('Access Modes', 'string', (o) => accessModes(getPath(o, ['status', 'accessModes']))),
      column('StorageClass', 'string', (o) => str(getPath(o, ['spec', 'storageClassName'])) || '<unset>'),
    ],
  });
}
