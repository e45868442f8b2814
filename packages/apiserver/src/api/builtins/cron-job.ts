/**
 * The built-in CronJob: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { cronError, timeZoneError } from '../../grammar/cron.js';
import { fieldInvalid, fieldRequired } from '../../base/errors.js';
import { age, getPath, nameOf } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';
import { defaultPodSpec } from './pod-template.js';
import { objectAt, setDefault } from './defaults.js';
import { validateJobPodSpec } from './job.js';

const cronJobStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
  },
  defaults(obj) {
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'concurrencyPolicy', 'Allow');
    setDefault(spec, 'suspend', false);
    setDefault(spec, 'successfulJobsHistoryLimit', 3);
    setDefault(spec, 'failedJobsHistoryLimit', 1);
    const jobSpec = objectAt(objectAt(spec, 'jobTemplate'), 'spec');
    setDefault(jobSpec, 'backoffLimit', 6);
    defaultPodSpec(objectAt(objectAt(jobSpec, 'template'), 'spec'));
  },
  validate(obj, old) {
    const causes = validateJobPodSpec(
      getPath(obj, ['spec', 'jobTemplate', 'spec', 'template', 'spec']),
      'spec.jobTemplate.spec.template.spec',
    );
    // Its Jobs are named <cronjob>-<minutes since the epoch> (11 more characters), and must stay DNS labels.
    if (!old && nameOf(obj).length > 52) causes.push(fieldInvalid('metadata.name', nameOf(obj), 'must be no more than 52 characters'));
    const schedule = getPath(obj, ['spec', 'schedule']);
    if (typeof schedule !== 'string' || schedule === '') return [fieldRequired('spec.schedule', ''), ...causes];
    const error = cronError(schedule);
    if (error) causes.unshift(fieldInvalid('spec.schedule', schedule, error));
    const timeZone = getPath(obj, ['spec', 'timeZone']);
    const zoneError = typeof timeZone === 'string' ? timeZoneError(timeZone) : undefined;
    if (zoneError) causes.push(fieldInvalid('spec.timeZone', timeZone ?? null, zoneError));
    return causes;
  },
};

export function cronJobType(): ResourceType {
  return builtin({
    group: 'batch',
    version: 'v1',
    plural: 'cronjobs',
    kind: 'CronJob',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    status: true,
    generation: true,
    strategy: cronJobStrategy,
    columns: [
      column('Schedule', 'string', (o) => str(getPath(o, ['spec', 'schedule']))),
      column('Timezone', 'string', (o) => str(getPath(o, ['spec', 'timeZone'])) || '<none>'),
      // printBoolPtr: True, False, or <unset>.
      column('Suspend', 'boolean', (o) => {
        const suspend = getPath(o, ['spec', 'suspend']);
        return typeof suspend === 'boolean' ? (suspend ? 'True' : 'False') : '<unset>';
      }),
      column('Active', 'integer', (o) => {
        const active = getPath(o, ['status', 'active']);
        return Array.isArray(active) ? active.length : 0;
      }),
      column('Last Schedule', 'date', (o) => {
        const last = getPath(o, ['status', 'lastScheduleTime']);
        return typeof last === 'string' ? age(last) : '<none>';
      }),
    ],
  });
}
