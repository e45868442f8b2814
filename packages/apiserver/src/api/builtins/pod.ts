/**
 * The built-in Pod: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { fieldForbidden } from '../../base/errors.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { deepEqual, isJsonObject } from '../../base/json.js';
import { getPath, readMeta } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';
import { defaultPodSpec, validateContainers } from './pod-template.js';
import { objectAt } from './defaults.js';

const podStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
  },
  defaults(obj) {
    defaultPodSpec(objectAt(obj, 'spec'));
  },
  gracePeriod(obj, requested) {
    // A pod no kubelet runs, or one that has finished, goes at once (pod strategy CheckGracefulDelete).
    const node = getPath(obj, ['spec', 'nodeName']);
    const phase = getPath(obj, ['status', 'phase']);
    if (typeof node !== 'string' || node === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
    const marked = readMeta(obj).deletionGracePeriodSeconds;
    const spec = getPath(obj, ['spec', 'terminationGracePeriodSeconds']);
    return requested ?? (typeof marked === 'number' ? marked : typeof spec === 'number' ? spec : 30);
  },
  validate(obj, old) {
    const causes = validateContainers(obj.spec, 'spec');
    // Binding (pods/binding) sets spec.nodeName once; nothing else of the spec changes.
    const bound =
      old && !getPath(old, ['spec', 'nodeName']) && isJsonObject(obj.spec)
        ? { ...obj.spec, nodeName: getPath(old, ['spec', 'nodeName']) ?? null }
        : obj.spec;
    if (bound && isJsonObject(bound) && bound.nodeName === null) delete bound.nodeName;
    if (old && !deepEqual(withoutImages(bound), withoutImages(old.spec))) {
      causes.push(
        fieldForbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        ),
      );
    }
    return causes;
  },
};

function withoutImages(spec: JsonValue | undefined): JsonValue | undefined {
  if (!isJsonObject(spec)) return spec;
  const out: JsonObject = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    const list = spec[key];
    if (Array.isArray(list)) out[key] = list.map((c) => (isJsonObject(c) ? { ...c, image: '' } : c));
  }
  delete out.activeDeadlineSeconds;
  return out;
}

export function podType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    strategy: podStrategy,
    returnDeletedObject: true,
    extraSubresources: ['binding'],
    columns: [
      column('Ready', 'string', (o) => {
        const containers = getPath(o, ['spec', 'containers']);
        const statuses = getPath(o, ['status', 'containerStatuses']);
        const ready = Array.isArray(statuses) ? statuses.filter((s) => isJsonObject(s) && s.ready === true).length : 0;
        return `${ready}/${Array.isArray(containers) ? containers.length : 0}`;
      }),
      column('Status', 'string', (o) => {
        // The pod printer's reason: Terminating while deleted, the containers' end otherwise.
        if (readMeta(o).deletionTimestamp) return 'Terminating';
        const phase = str(getPath(o, ['status', 'phase']));
        return phase === 'Succeeded' ? 'Completed' : phase === 'Failed' ? 'Error' : phase;
      }),
      column('Restarts', 'string', () => '0'),
      column('IP', 'string', (o) => str(getPath(o, ['status', 'podIP'])) || '<none>', 1),
      column('Node', 'string', (o) => str(getPath(o, ['spec', 'nodeName'])) || '<none>', 1),
      column('Nominated Node', 'string', () => '<none>', 1),
      column('Readiness Gates', 'string', () => '<none>', 1),
    ],
  });
}
