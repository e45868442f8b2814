/**
 * The built-in PersistentVolume: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';
import { objectAt, setDefault } from './defaults.js';

const pvStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending' };
  },
  defaults(obj) {
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    setDefault(spec, 'volumeMode', 'Filesystem');
  },
};

const ACCESS_MODES: Readonly<Record<string, string>> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

export const accessModes = (modes: JsonValue | undefined): string =>
  Array.isArray(modes) ? modes.map((m) => ACCESS_MODES[str(m)] ?? str(m)).join(',') : '';

export function persistentVolumeType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    status: true,
    strategy: pvStrategy,
    columns: [
      column('Capacity', 'string', (o) => str(getPath(o, ['spec', 'capacity', 'storage']))),
      column('Access Modes', 'string', (o) => accessModes(getPath(o, ['spec', 'accessModes']))),
      column('Reclaim Policy', 'string', (o) => str(getPath(o, ['spec', 'persistentVolumeReclaimPolicy']))),
      column('Status', 'string', (o) => str(getPath(o, ['status', 'phase']))),
      column('Claim', 'string', (o) => {
        const ref = getPath(o, ['spec', 'claimRef']);
        return isJsonObject(ref) ? `${str(ref.namespace)}/${str(ref.name)}` : '';
      }),
      column('StorageClass', 'string', (o) => str(getPath(o, ['spec', 'storageClassName']))),
      column('Reason', 'string', (o) => str(getPath(o, ['status', 'reason']))),
    ],
  });
}
