/**
 * The built-in StatefulSet: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, num } from './builtin.js';
import { defaultWorkload, templateColumns, validateWorkload } from './workload.js';
import { objectAt, setDefault } from './defaults.js';

const statefulSetStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { replicas: 0, availableReplicas: 0 };
  },
  defaults(obj) {
    const spec = defaultWorkload(obj);
    setDefault(spec, 'podManagementPolicy', 'OrderedReady');
    const update = objectAt(spec, 'updateStrategy');
    setDefault(update, 'type', 'RollingUpdate');
    if (update.type === 'RollingUpdate') setDefault(objectAt(update, 'rollingUpdate'), 'partition', 0);
    setDefault(spec, 'revisionHistoryLimit', 10);
    const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy');
    setDefault(retention, 'whenDeleted', 'Retain');
    setDefault(retention, 'whenScaled', 'Retain');
  },
  validate: (obj, old) => validateWorkload(obj, old, 'statefulset'),
};

export function statefulSetType(): ResourceType {
  return builtin({
    group: 'apps',
    version: 'v1',
    plural: 'statefulsets',
    kind: 'StatefulSet',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    status: true,
    generation: true,
    statusKeeps: [['spec'], ['metadata', 'labels']],
    strategy: statefulSetStrategy,
    scale: { specReplicasPath: ['spec', 'replicas'], statusReplicasPath: ['status', 'replicas'], labelSelectorPath: ['spec', 'selector'] },
    columns: [
      column('Ready', 'string', (o) => `${num(getPath(o, ['status', 'readyReplicas']))}/${num(getPath(o, ['spec', 'replicas']))}`),
      ...templateColumns(false),
    ],
  });
}
