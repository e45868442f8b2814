/**
 * The built-in ReplicaSet: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, num } from './builtin.js';
import { defaultWorkload, templateColumns, validateWorkload } from './workload.js';

const replicaSetStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { replicas: 0 };
  },
  defaults: defaultWorkload,
  validate: (obj, old) => validateWorkload(obj, old, 'replicaset'),
};

export function replicaSetType(): ResourceType {
  return builtin({
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    status: true,
    generation: true,
    statusKeeps: [['spec'], ['metadata', 'labels']],
    strategy: replicaSetStrategy,
    scale: { specReplicasPath: ['spec', 'replicas'], statusReplicasPath: ['status', 'replicas'], labelSelectorPath: ['spec', 'selector'] },
    columns: [
      column('Desired', 'integer', (o) => num(getPath(o, ['spec', 'replicas']))),
      column('Current', 'integer', (o) => num(getPath(o, ['status', 'replicas']))),
      column('Ready', 'integer', (o) => num(getPath(o, ['status', 'readyReplicas']))),
      ...templateColumns(true),
    ],
  });
}
