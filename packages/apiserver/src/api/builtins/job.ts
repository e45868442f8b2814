/**
 * The built-in Job: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldNotSupported } from '../../base/errors.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { deepEqual, isJsonObject } from '../../base/json.js';
import { age, getPath, nameOf, readMeta } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, num, str } from './builtin.js';
import { defaultPodSpec, validateContainers } from './pod-template.js';
import { objectAt, setDefault } from './defaults.js';

/** The labels the job controller's strategy puts on a Job's pods and selects them by (generateSelector). */
export function jobPodLabels(name: string, uid: string): Record<string, string> {
  return { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name };
}

/** A Job's pod template as Job and CronJob validation check it: containers, and a restartPolicy a Job can run. */
export function validateJobPodSpec(spec: JsonValue | undefined, field: string): StatusCause[] {
  const causes = validateContainers(spec, field);
  const policy = getPath(spec, ['restartPolicy']);
  if (policy !== 'Never' && policy !== 'OnFailure') {
    causes.push(fieldNotSupported(`${field}.restartPolicy`, policy ?? null, ['OnFailure', 'Never']));
  }
  return causes;
}

const jobStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
    const spec = objectAt(obj, 'spec');
    if (spec.manualSelector === true) return;
    const meta = readMeta(obj);
    const labels = jobPodLabels(nameOf(obj), String(meta.uid));
    spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': String(meta.uid) } };
    const templateMeta = objectAt(objectAt(spec, 'template'), 'metadata');
    templateMeta.labels = { ...(isJsonObject(templateMeta.labels) ? templateMeta.labels : {}), ...labels };
  },
  defaults(obj) {
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'completions', 1);
    setDefault(spec, 'parallelism', 1);
    setDefault(spec, 'backoffLimit', 6);
    setDefault(spec, 'completionMode', 'NonIndexed');
    setDefault(spec, 'suspend', false);
    setDefault(spec, 'manualSelector', false);
    setDefault(spec, 'podReplacementPolicy', 'TerminatedOrFailed');
    defaultPodSpec(objectAt(objectAt(spec, 'template'), 'spec'));
  },
  validate(obj, old) {
    const causes = validateJobPodSpec(getPath(obj, ['spec', 'template', 'spec']), 'spec.template.spec');
    if (old && !deepEqual(getPath(obj, ['spec', 'template']), getPath(old, ['spec', 'template']))) {
      causes.push(fieldInvalid('spec.template', getPath(obj, ['spec', 'template']) ?? null, 'field is immutable'));
    }
    return causes;
  },
};

function jobStatus(o: JsonObject): string {
  const conditions = getPath(o, ['status', 'conditions']);
  const trueTypes = Array.isArray(conditions)
    ? conditions.filter((c) => isJsonObject(c) && c.status === 'True').map((c) => (isJsonObject(c) ? str(c.type) : ''))
    : [];
  if (trueTypes.includes('Complete')) return 'Complete';
  if (trueTypes.includes('Failed')) return 'Failed';
  if (getPath(o, ['spec', 'suspend']) === true) return 'Suspended';
  return 'Running';
}

export function jobType(): ResourceType {
  return builtin({
    group: 'batch',
    version: 'v1',
    plural: 'jobs',
    kind: 'Job',
    namespaced: true,
    categories: ['all'],
    status: true,
    generation: true,
    strategy: jobStrategy,
    columns: [
      column('Status', 'string', jobStatus),
      column('Completions', 'string', (o) => `${num(getPath(o, ['status', 'succeeded']))}/${num(getPath(o, ['spec', 'completions']))}`),
      column('Duration', 'string', (o) => {
        const start = getPath(o, ['status', 'startTime']);
        const end = getPath(o, ['status', 'completionTime']);
        return typeof start === 'string' ? age(start, typeof end === 'string' ? Date.parse(end) : Date.now()) : '';
      }),
    ],
  });
}
