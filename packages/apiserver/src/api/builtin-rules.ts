/**
 * The common range and enum checks of the real server's Go validation (pkg/apis/.../validation)
 * that OpenAPI definitions do not carry, as a table: ports, enums, counts. Keyed by group/kind
 * with field paths (`[*]` for every item), so a kind added to builtins.ts gets its rows here.
 * 422 causes in the real server's wording.
 */
import type { StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject, ownValue } from '../base/json.js';

type Check = (v: JsonValue) => string | undefined;
interface Rule {
  path: string;
  check: Check;
  reason?: 'FieldValueInvalid' | 'FieldValueNotSupported';
}

const shown = (v: JsonValue): string => JSON.stringify(v);

const port: Check = (v) => (typeof v === 'number' && (v < 1 || v > 65535) ? 'must be between 1 and 65535, inclusive' : undefined);
/** nodePort 0 means "allocate one". */
const optionalPort: Check = (v) => (v === 0 ? undefined : port(v));
/** A targetPort number (a name is a string and checked elsewhere). */
const intOrNamedPort: Check = (v) => (typeof v === 'number' ? port(v) : undefined);
const atLeast =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && v < min
      ? min === 0
        ? 'must be greater than or equal to 0'
        : `must be greater than or equal to ${min}`
      : undefined;
const positive: Check = (v) => (typeof v === 'number' && v <= 0 ? 'must be greater than 0' : undefined);
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === 'string' && !values.includes(v) ? `supported values: ${values.map((x) => shown(x)).join(', ')}` : undefined;

const enumRule = (path: string, ...values: string[]): Rule => ({ path, check: oneOf(...values), reason: 'FieldValueNotSupported' });

function podSpecRules(prefix: string): Rule[] {
  const containers = ['containers', 'initContainers'].map((c) => `${prefix}.${c}[*]`);
  return [
    enumRule(`${prefix}.restartPolicy`, 'Always', 'Never', 'OnFailure'),
    enumRule(`${prefix}.dnsPolicy`, 'ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'),
    { path: `${prefix}.terminationGracePeriodSeconds`, check: atLeast(0) },
    { path: `${prefix}.activeDeadlineSeconds`, check: positive },
    ...containers.flatMap((c) => [
      { path: `${c}.ports[*].containerPort`, check: port },
      { path: `${c}.ports[*].hostPort`, check: optionalPort },
      enumRule(`${c}.ports[*].protocol`, 'SCTP', 'TCP', 'UDP'),
      enumRule(`${c}.imagePullPolicy`, 'Always', 'IfNotPresent', 'Never'),
    ]),
  ];
}

const replicas: Rule = { path: 'spec.replicas', check: atLeast(0) };
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

const RULES: Record<string, Rule[]> = {
  '/Service': [
    enumRule('spec.type', 'ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'),
    enumRule('spec.sessionAffinity', 'ClientIP', 'None'),
    { path: 'spec.ports[*].port', check: port },
    { path: 'spec.ports[*].nodePort', check: optionalPort },
    { path: 'spec.ports[*].targetPort', check: intOrNamedPort },
    enumRule('spec.ports[*].protocol', 'SCTP', 'TCP', 'UDP'),
  ],
  '/Pod': podSpecRules('spec'),
  '/PodTemplate': podSpecRules('template.spec'),
  'apps/Deployment': [
    replicas,
    { path: 'spec.revisionHistoryLimit', check: atLeast(0) },
    { path: 'spec.minReadySeconds', check: atLeast(0) },
    ...podSpecRules('spec.template.spec'),
  ],
  'apps/ReplicaSet': [replicas, ...podSpecRules('spec.template.spec')],
  'apps/StatefulSet': [
    replicas,
    // Go validation words this one as Invalid, not NotSupported.
    {
      path: 'spec.podManagementPolicy',
      check: (v) =>
        typeof v === 'string' && v !== 'OrderedReady' && v !== 'Parallel' ? "must be 'OrderedReady' or 'Parallel'" : undefined,
    },
    enumRule('spec.updateStrategy.type', 'OnDelete', 'RollingUpdate'),
    { path: 'spec.updateStrategy.rollingUpdate.partition', check: atLeast(0) },
    enumRule('spec.persistentVolumeClaimRetentionPolicy.whenDeleted', 'Delete', 'Retain'),
    enumRule('spec.persistentVolumeClaimRetentionPolicy.whenScaled', 'Delete', 'Retain'),
    { path: 'spec.revisionHistoryLimit', check: atLeast(0) },
    ...podSpecRules('spec.template.spec'),
  ],
  '/PersistentVolumeClaim': [enumRule('spec.accessModes[*]', ...ACCESS_MODES), enumRule('spec.volumeMode', 'Block', 'Filesystem')],
  '/PersistentVolume': [
    enumRule('spec.accessModes[*]', ...ACCESS_MODES),
    enumRule('spec.persistentVolumeReclaimPolicy', 'Delete', 'Recycle', 'Retain'),
    enumRule('spec.volumeMode', 'Block', 'Filesystem'),
  ],
  'storage.k8s.io/StorageClass': [
    enumRule('reclaimPolicy', 'Delete', 'Retain'),
    enumRule('volumeBindingMode', 'Immediate', 'WaitForFirstConsumer'),
  ],
  'apps/DaemonSet': podSpecRules('spec.template.spec'),
  'batch/Job': [
    { path: 'spec.parallelism', check: atLeast(0) },
    { path: 'spec.completions', check: atLeast(0) },
    { path: 'spec.backoffLimit', check: atLeast(0) },
    ...podSpecRules('spec.template.spec'),
  ],
  'batch/CronJob': [
    enumRule('spec.concurrencyPolicy', 'Allow', 'Forbid', 'Replace'),
    { path: 'spec.startingDeadlineSeconds', check: atLeast(0) },
    { path: 'spec.successfulJobsHistoryLimit', check: atLeast(0) },
    { path: 'spec.failedJobsHistoryLimit', check: atLeast(0) },
    ...podSpecRules('spec.jobTemplate.spec.template.spec'),
  ],
  'coordination.k8s.io/Lease': [
    { path: 'spec.leaseDurationSeconds', check: positive },
    { path: 'spec.leaseTransitions', check: atLeast(0) },
  ],
};

/** The values at a dotted path with `[*]` items, with their concrete paths (`spec.ports[1].port`). */
function valuesAt(obj: JsonValue, path: string): [string, JsonValue][] {
  let current: [string, JsonValue][] = [['', obj]];
  for (const segment of path.split('.')) {
    const every = segment.endsWith('[*]');
    const key = every ? segment.slice(0, -3) : segment;
    const next: [string, JsonValue][] = [];
    for (const [at, v] of current) {
      if (!isJsonObject(v) || ownValue(v, key) === undefined || v[key] === null) continue;
      const child = v[key];
      const childAt = at ? `${at}.${key}` : key;
      if (!every) next.push([childAt, child]);
      else if (Array.isArray(child)) child.forEach((item, i) => next.push([`${childAt}[${i}]`, item]));
    }
    current = next;
  }
  return current;
}

/** The table's 422 causes for a built-in object (none for a kind without rows). */
export function builtinRuleCauses(group: string, kind: string, obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const rule of RULES[`${group}/${kind}`] ?? []) {
    for (const [field, v] of valuesAt(obj, rule.path)) {
      const detail = rule.check(v);
      if (detail === undefined) continue;
      const reason = rule.reason ?? 'FieldValueInvalid';
      const prefix = reason === 'FieldValueNotSupported' ? 'Unsupported value' : 'Invalid value';
      causes.push({ reason, message: `${prefix}: ${shown(v)}: ${detail}`, field });
    }
  }
  return causes;
}
