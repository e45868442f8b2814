/**
 * The built-in Deployment: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, num } from './builtin.js';
import { defaultWorkload, templateColumns, validateWorkload } from './workload.js';
import { objectAt, setDefault } from './defaults.js';

const deploymentStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
  },
  defaults(obj) {
    const spec = defaultWorkload(obj);
    const strategy = objectAt(spec, 'strategy');
    setDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = objectAt(strategy, 'rollingUpdate');
      setDefault(ru, 'maxUnavailable', '25%');
      setDefault(ru, 'maxSurge', '25%');
    }
    setDefault(spec, 'revisionHistoryLimit', 10);
    setDefault(spec, 'progressDeadlineSeconds', 600);
  },
  validate: (obj, old) => validateWorkload(obj, old, 'deployment'),
};

export function deploymentType(): ResourceType {
  return builtin({
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
    generation: true,
    statusKeeps: [['spec'], ['metadata', 'labels']],
    strategy: deploymentStrategy,
    scale: { specReplicasPath: ['spec', 'replicas'], statusReplicasPath: ['status', 'replicas'], labelSelectorPath: ['spec', 'selector'] },
    columns: [
      column('Ready', 'string', (o) => `${num(getPath(o, ['status', 'readyReplicas']))}/${num(getPath(o, ['spec', 'replicas']))}`),
      column('Up-to-date', 'integer', (o) => num(getPath(o, ['status', 'updatedReplicas']))),
      column('Available', 'integer', (o) => num(getPath(o, ['status', 'availableReplicas']))),
      ...templateColumns(true),
    ],
  });
}
