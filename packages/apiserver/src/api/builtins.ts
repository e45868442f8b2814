/**
 * The built-in resource types a controller needs, with the parts of their REST strategies that
 * clients can observe: defaults, status resets, immutable fields, validation and table columns.
 */
import { parseQuantity } from './cel.js';
import { crdStrategy } from './crds.js';
import { cronError, timeZoneError } from './cron.js';
import { CORE_EVENT, EVENT_COLUMNS, eventsV1Strategy } from './events.js';
import type { StatusCause } from './errors.js';
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';
import { deepEqual, isJsonObject } from './json.js';
import { age, getPath, labelsOf, metaOf, nameOf, readMeta } from './meta.js';
import { formatLabelSelector, labelSelectorFromObject, matchesLabelSelector, SelectorError } from './label-selector.js';
import type { PrinterColumn, ResourceType, ScaleInfo, Strategy, VersionInfo } from './registry.js';
import { AGE_COLUMN } from './columns.js';
import type { NameRule } from './validation.js';
import { dns1123Label, validateLabels } from './validation.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export { ALL_VERBS };

export interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  generation?: boolean;
  nameRule?: NameRule;
  createOnUpdate?: boolean;
  statusKeeps?: string[][];
  strategy?: Strategy;
  columns?: PrinterColumn[];
  returnDeletedObject?: boolean;
  extraSubresources?: string[];
  /** Whether `kubectl get` shows an Age column last (all but a few types). */
  age?: boolean;
  scale?: ScaleInfo;
  /** A view of another group's objects: stored under its key, in the form of this apiVersion. */
  storedAs?: { key: string; apiVersion: string };
}

/** Events in either group (core v1 and events.k8s.io/v1 are the same objects). */
const EVENT = {
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  createOnUpdate: true,
  columns: EVENT_COLUMNS,
  age: false,
} as const satisfies Omit<BuiltinSpec, 'group'>;

/** Age closes the default columns; the wide ones (priority > 0) follow it, as the real printers order them. */
function withAge(columns: PrinterColumn[], age: boolean): PrinterColumn[] {
  return age ? [...columns.filter((c) => !c.priority), AGE_COLUMN, ...columns.filter((c) => c.priority)] : columns;
}

/** A built-in type from its spec (also used by auth/ for the RBAC and review types). */
export function builtin(s: BuiltinSpec): ResourceType {
  const version: VersionInfo = {
    name: s.version,
    served: true,
    storage: true,
    statusSubresource: s.status ?? false,
    printerColumns: withAge(s.columns ?? [], s.age !== false),
    // Built-in field selectors are listed per kind in selectors.ts.
    selectableFields: [],
    scale: s.scale,
  };
  return {
    key: s.storedAs?.key ?? `${s.group}/${s.plural}`,
    group: s.group,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    versions: [version],
    storageVersion: s.version,
    custom: false,
    tracksGeneration: s.generation ?? false,
    nameRule: s.nameRule ?? 'subdomain',
    allowCreateOnUpdate: s.createOnUpdate ?? false,
    allowUnconditionalUpdate: true,
    statusKeeps: s.statusKeeps ?? [['spec']],
    strategy: s.strategy ?? {},
    returnDeletedObject: s.returnDeletedObject ?? false,
    extraSubresources: s.extraSubresources,
    ...(s.storedAs ? { storedAs: s.storedAs.apiVersion } : {}),
  };
}

// ---- defaulting -------------------------------------------------------------------------

function objectAt(obj: JsonObject, key: string): JsonObject {
  const v = obj[key];
  if (isJsonObject(v)) return v;
  const fresh: JsonObject = {};
  obj[key] = fresh;
  return fresh;
}

function setDefault(obj: JsonObject, key: string, value: JsonValue): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

function defaultContainer(c: JsonValue): void {
  if (!isJsonObject(c)) return;
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  const image = typeof c.image === 'string' ? c.image : '';
  const tag = /:([^/:@]+)$/.exec(image.split('@')[0] ?? '')?.[1];
  setDefault(c, 'imagePullPolicy', image.includes('@') || (tag !== undefined && tag !== 'latest') ? 'IfNotPresent' : 'Always');
  setDefault(c, 'resources', {});
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isJsonObject(p)) setDefault(p, 'protocol', 'TCP');
}

function defaultPodSpec(spec: JsonObject): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const key of ['containers', 'initContainers']) {
    const list = spec[key];
    if (Array.isArray(list)) list.forEach(defaultContainer);
  }
}

function validateContainers(spec: JsonValue | undefined, field: string): StatusCause[] {
  const containers = isJsonObject(spec) ? spec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) return [fieldRequired(`${field}.containers`, '')];
  const causes: StatusCause[] = [];
  containers.forEach((c, i) => {
    const at = `${field}.containers[${i}]`;
    if (!isJsonObject(c)) {
      causes.push(fieldInvalid(at, c, 'must be an object'));
      return;
    }
    if (typeof c.name !== 'string' || c.name === '') causes.push(fieldRequired(`${at}.name`, ''));
    else for (const e of dns1123Label(c.name)) causes.push(fieldInvalid(`${at}.name`, c.name, e));
    if (typeof c.image !== 'string' || c.image.trim() === '') causes.push(fieldRequired(`${at}.image`, ''));
  });
  return causes;
}

// ---- strategies -------------------------------------------------------------------------

const namespaceStrategy: Strategy = {
  prepareForCreate(obj) {
    objectAt(obj, 'spec').finalizers = ['kubernetes'];
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    const oldFinalizers = getPath(old, ['spec', 'finalizers']);
    const spec = objectAt(obj, 'spec');
    if (oldFinalizers === undefined) delete spec.finalizers;
    else spec.finalizers = oldFinalizers;
  },
  prepareForDelete(obj) {
    objectAt(obj, 'status').phase = 'Terminating';
  },
  blocksDeletion(obj) {
    const finalizers = getPath(obj, ['spec', 'finalizers']);
    return Array.isArray(finalizers) && finalizers.length > 0;
  },
  defaults(obj) {
    // The server labels every namespace with its own name (NamespaceDefaultLabelName).
    const meta = metaOf(obj);
    const labels = isJsonObject(meta.labels) ? meta.labels : {};
    labels['kubernetes.io/metadata.name'] = nameOf(obj);
    meta.labels = labels;
  },
};

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function validateConfigKeys(obj: JsonObject, fields: string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const f of fields) {
    const data = obj[f];
    if (data === undefined || data === null) continue;
    if (!isJsonObject(data)) {
      causes.push(fieldInvalid(f, data, 'must be a map of strings'));
      continue;
    }
    for (const [k, v] of Object.entries(data)) {
      if (!CONFIG_KEY.test(k) || k.length > 253) {
        causes.push(
          fieldInvalid(
            `${f}[${k}]`,
            k,
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
          ),
        );
      }
      if (typeof v !== 'string') causes.push(fieldInvalid(`${f}[${k}]`, v, 'must be a string'));
    }
  }
  return causes;
}

function immutableData(obj: JsonObject, old: JsonObject | undefined, fields: string[]): StatusCause[] {
  if (!old || old.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (obj.immutable !== true) causes.push(fieldForbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (!deepEqual(obj[f] ?? {}, old[f] ?? {})) causes.push(fieldForbidden(f, 'field is immutable when `immutable` is set'));
  }
  return causes;
}

const configMapStrategy: Strategy = {
  validate(obj, old) {
    return [...validateConfigKeys(obj, ['data', 'binaryData']), ...immutableData(obj, old, ['data', 'binaryData'])];
  },
};

const secretStrategy: Strategy = {
  defaults(obj) {
    setDefault(obj, 'type', 'Opaque');
    // stringData is write-only: merged into data (base64) and never stored.
    if (isJsonObject(obj.stringData)) {
      const data = objectAt(obj, 'data');
      for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    }
    delete obj.stringData;
  },
  validate(obj, old) {
    const causes = [...validateConfigKeys(obj, ['data']), ...immutableData(obj, old, ['data'])];
    if (old && old.type !== obj.type) causes.push(fieldInvalid('type', obj.type, 'field is immutable'));
    return causes;
  },
};

/** Validation a Deployment, ReplicaSet and StatefulSet share: the selector, replicas, the pod template. */
function validateWorkload(obj: JsonObject, old: JsonObject | undefined, kind: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isJsonObject(obj.spec) ? obj.spec : {};
  const selector = spec.selector;
  if (!isJsonObject(selector)) causes.push(fieldRequired('spec.selector', ''));
  const templateLabels = labelsOf(isJsonObject(spec.template) ? spec.template : {});
  if (isJsonObject(selector)) {
    try {
      const parsed = labelSelectorFromObject(selector);
      if (parsed.requirements.length === 0) causes.push(fieldInvalid('spec.selector', selector, `empty selector is invalid for ${kind}`));
      else if (!matchesLabelSelector(parsed, templateLabels)) {
        causes.push(fieldInvalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
      }
    } catch (err) {
      if (!(err instanceof SelectorError)) throw err;
      causes.push(fieldInvalid('spec.selector', selector, err.message));
    }
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) {
    causes.push(fieldInvalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  }
  causes.push(...validateContainers(getPath(spec, ['template', 'spec']), 'spec.template.spec'));
  // A controller that keeps its Pods running takes no Pod that is meant to stop (after the defaults: Always).
  const restartPolicy = getPath(spec, ['template', 'spec', 'restartPolicy']);
  if (restartPolicy !== undefined && restartPolicy !== 'Always') {
    causes.push(fieldNotSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  }
  causes.push(...validateLabels(getPath(spec, ['template', 'metadata', 'labels']), 'spec.template.metadata.labels'));
  if (old && isJsonObject(old.spec) && !deepEqual(spec.selector, old.spec.selector)) {
    causes.push(fieldInvalid('spec.selector', spec.selector ?? null, 'field is immutable'));
  }
  return causes;
}

function defaultWorkload(obj: JsonObject): JsonObject {
  const spec = objectAt(obj, 'spec');
  setDefault(spec, 'replicas', 1);
  defaultPodSpec(objectAt(objectAt(spec, 'template'), 'spec'));
  return spec;
}

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

const replicaSetStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { replicas: 0 };
  },
  defaults: defaultWorkload,
  validate: (obj, old) => validateWorkload(obj, old, 'replicaset'),
};

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

/** The labels the job controller's strategy puts on a Job's pods and selects them by (generateSelector). */
export function jobPodLabels(name: string, uid: string): Record<string, string> {
  return { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name };
}

/** A Job's pod template as Job and CronJob validation check it: containers, and a restartPolicy a Job can run. */
function validateJobPodSpec(spec: JsonValue | undefined, field: string): StatusCause[] {
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
    const causes = validateJobPodSpec(getPath(obj, ['spec', 'jobTemplate', 'spec', 'template', 'spec']), 'spec.jobTemplate.spec.template.spec');
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
    else if ((parseQuantity(String(storage)) ?? 0n) <= 0n) causes.push(fieldInvalid('spec.resources[storage]', String(storage), 'must be greater than zero'));
    return causes;
  },
};

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

const controllerRevisionStrategy: Strategy = {
  validate(obj, old) {
    const causes: StatusCause[] = [];
    if (typeof obj.revision !== 'number' || obj.revision < 0) causes.push(fieldInvalid('revision', obj.revision ?? null, 'must be greater than or equal to 0'));
    if (old && !deepEqual(obj.data ?? null, old.data ?? null)) causes.push(fieldInvalid('data', obj.data ?? null, 'field is immutable'));
    return causes;
  },
};

const nodeStrategy: Strategy = {};

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
    const bound = old && !getPath(old, ['spec', 'nodeName']) && isJsonObject(obj.spec) ? { ...obj.spec, nodeName: getPath(old, ['spec', 'nodeName']) ?? null } : obj.spec;
    if (bound && isJsonObject(bound) && bound.nodeName === null) delete bound.nodeName;
    if (old && !deepEqual(withoutImages(bound), withoutImages(old.spec))) {
      causes.push(
        fieldForbidden('spec', 'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'),
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

const serviceStrategy: Strategy = {
  prepareForCreate(obj, ctx) {
    obj.status = { loadBalancer: {} };
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'type', 'ClusterIP');
    if (spec.type !== 'ExternalName' && (spec.clusterIP === undefined || spec.clusterIP === '')) {
      spec.clusterIP = ctx.allocateClusterIP();
    }
  },
  prepareForUpdate(obj, old) {
    const spec = objectAt(obj, 'spec');
    const oldIP = getPath(old, ['spec', 'clusterIP']);
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldIP !== undefined) spec.clusterIP = oldIP;
  },
  defaults(obj) {
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'type', 'ClusterIP');
    if (spec.type === 'ExternalName') return;
    setDefault(spec, 'sessionAffinity', 'None');
    if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '') setDefault(spec, 'clusterIPs', [spec.clusterIP]);
    setDefault(spec, 'ipFamilies', ['IPv4']);
    setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
    setDefault(spec, 'internalTrafficPolicy', 'Cluster');
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) {
        if (!isJsonObject(p)) continue;
        setDefault(p, 'protocol', 'TCP');
        if (p.port !== undefined) setDefault(p, 'targetPort', p.port);
      }
    }
  },
  validate(obj, old) {
    const spec = isJsonObject(obj.spec) ? obj.spec : {};
    const causes: StatusCause[] = [];
    const headless = spec.clusterIP === 'None';
    if (spec.type !== 'ExternalName' && !headless && (!Array.isArray(spec.ports) || spec.ports.length === 0)) {
      causes.push(fieldRequired('spec.ports', ''));
    }
    const oldIP = getPath(old, ['spec', 'clusterIP']);
    if (old && oldIP !== undefined && spec.clusterIP !== oldIP && spec.type === getPath(old, ['spec', 'type'])) {
      causes.push(fieldInvalid('spec.clusterIPs[0]', spec.clusterIP ?? null, 'may not change once set'));
    }
    return causes;
  },
};

const ingressStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
  },
};

// ---- table columns ------------------------------------------------------------------------

const str = (v: JsonValue | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const count = (v: JsonValue | undefined): number => (isJsonObject(v) ? Object.keys(v).length : 0);
const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);

function servicePorts(obj: JsonObject): string {
  const ports = getPath(obj, ['spec', 'ports']);
  if (!Array.isArray(ports) || ports.length === 0) return '<none>';
  return ports
    .map((p) => (isJsonObject(p) ? `${str(p.port)}${p.nodePort !== undefined ? `:${str(p.nodePort)}` : ''}/${str(p.protocol ?? 'TCP')}` : ''))
    .join(',');
}

const ACCESS_MODES: Readonly<Record<string, string>> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };

const accessModes = (modes: JsonValue | undefined): string => (Array.isArray(modes) ? modes.map((m) => ACCESS_MODES[str(m)] ?? str(m)).join(',') : '');

function jobStatus(o: JsonObject): string {
  const conditions = getPath(o, ['status', 'conditions']);
  const trueTypes = Array.isArray(conditions) ? conditions.filter((c) => isJsonObject(c) && c.status === 'True').map((c) => (isJsonObject(c) ? str(c.type) : '')) : [];
  if (trueTypes.includes('Complete')) return 'Complete';
  if (trueTypes.includes('Failed')) return 'Failed';
  if (getPath(o, ['spec', 'suspend']) === true) return 'Suspended';
  return 'Running';
}

function endpointsColumn(o: JsonObject): string {
  const subsets = o.subsets;
  const out: string[] = [];
  if (Array.isArray(subsets)) {
    for (const s of subsets) {
      if (!isJsonObject(s) || !Array.isArray(s.addresses)) continue;
      const ports = Array.isArray(s.ports) ? s.ports.map((p) => (isJsonObject(p) ? str(p.port) : '')) : [''];
      for (const a of s.addresses) for (const p of ports) out.push(`${isJsonObject(a) ? str(a.ip) : ''}${p ? `:${p}` : ''}`);
    }
  }
  return out.length ? out.slice(0, 3).join(',') + (out.length > 3 ? ` + ${out.length - 3} more...` : '') : '<none>';
}

export const column = (name: string, type: string, cell: (o: JsonObject) => string | number, priority = 0): PrinterColumn => ({
  name,
  type,
  cell,
  priority,
});

/** The wide columns of the workload printers: the pod template's containers and images, and the selector. */
function templateColumns(withSelector: boolean): PrinterColumn[] {
  const containers = (o: JsonObject): JsonObject[] => {
    const list = getPath(o, ['spec', 'template', 'spec', 'containers']);
    return Array.isArray(list) ? list.filter(isJsonObject) : [];
  };
  const selector = (o: JsonObject): string => {
    const sel = getPath(o, ['spec', 'selector']);
    try {
      return isJsonObject(sel) ? formatLabelSelector(labelSelectorFromObject(sel)) || '<none>' : '<none>';
    } catch (err) {
      if (err instanceof SelectorError) return '<error>';
      throw err;
    }
  };
  return [
    column('Containers', 'string', (o) => containers(o).map((c) => str(c.name)).join(','), 1),
    column('Images', 'string', (o) => containers(o).map((c) => str(c.image)).join(','), 1),
    ...(withSelector ? [column('Selector', 'string', selector, 1)] : []),
  ];
}

// ---- the list ---------------------------------------------------------------------------

export function builtinTypes(): ResourceType[] {
  return [
    builtin({
      group: '',
      version: 'v1',
      plural: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      status: true,
      nameRule: 'label',
      strategy: namespaceStrategy,
      returnDeletedObject: true,
      extraSubresources: ['finalize'],
      columns: [column('Status', 'string', (o) => str(getPath(o, ['status', 'phase'])))],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      strategy: configMapStrategy,
      columns: [column('Data', 'string', (o) => count(o.data) + count(o.binaryData))],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'secrets',
      kind: 'Secret',
      namespaced: true,
      strategy: secretStrategy,
      columns: [column('Type', 'string', (o) => str(o.type)), column('Data', 'string', (o) => count(o.data))],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      nameRule: 'dns1035',
      strategy: serviceStrategy,
      columns: [
        column('Type', 'string', (o) => str(getPath(o, ['spec', 'type']))),
        column('Cluster-IP', 'string', (o) => str(getPath(o, ['spec', 'clusterIP'])) || '<none>'),
        column('External-IP', 'string', () => '<none>'),
        column('Port(s)', 'string', servicePorts),
      ],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      extraSubresources: ['token'],
      columns: [column('Secrets', 'string', (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0))],
    }),
    builtin({
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
    }),
    builtin({ group: '', ...EVENT }),
    // The same objects through events.k8s.io/v1, as the real server serves them (api/events.ts).
    builtin({ group: 'events.k8s.io', ...EVENT, strategy: eventsV1Strategy, storedAs: { key: '/events', apiVersion: CORE_EVENT } }),
    builtin({
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
    }),
    builtin({
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
    }),
    builtin({
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
      columns: [column('Ready', 'string', (o) => `${num(getPath(o, ['status', 'readyReplicas']))}/${num(getPath(o, ['spec', 'replicas']))}`), ...templateColumns(false)],
    }),
    builtin({
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
    }),
    builtin({
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
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'nodes',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      status: true,
      strategy: nodeStrategy,
      columns: [
        column('Status', 'string', (o) => {
          const conditions = getPath(o, ['status', 'conditions']);
          const ready = Array.isArray(conditions) ? conditions.find((c) => isJsonObject(c) && c.type === 'Ready') : undefined;
          return isJsonObject(ready) && ready.status === 'True' ? 'Ready' : 'NotReady';
        }),
        column('Roles', 'string', () => '<none>'),
        column('Version', 'string', (o) => str(getPath(o, ['status', 'nodeInfo', 'kubeletVersion']))),
      ],
    }),
    builtin({
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
    }),
    builtin({
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
    }),
    builtin({
      group: 'storage.k8s.io',
      version: 'v1',
      plural: 'storageclasses',
      kind: 'StorageClass',
      namespaced: false,
      shortNames: ['sc'],
      strategy: storageClassStrategy,
      columns: [
        // The server's printer marks the default class in the name (printStorageClass).
        { ...column('Name', 'string', (o) => `${nameOf(o)}${getPath(o, ['metadata', 'annotations', DEFAULT_STORAGE_CLASS]) === 'true' ? ' (default)' : ''}`), format: 'name' },
        column('Provisioner', 'string', (o) => str(o.provisioner)),
        column('ReclaimPolicy', 'string', (o) => str(o.reclaimPolicy)),
        column('VolumeBindingMode', 'string', (o) => str(o.volumeBindingMode)),
        column('AllowVolumeExpansion', 'string', (o) => str(o.allowVolumeExpansion ?? false)),
      ],
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      plural: 'controllerrevisions',
      kind: 'ControllerRevision',
      namespaced: true,
      strategy: controllerRevisionStrategy,
      columns: [
        column('Controller', 'string', (o) => {
          const owner = (Array.isArray(readMeta(o).ownerReferences) ? (readMeta(o).ownerReferences as JsonValue[]) : []).find((r) => isJsonObject(r) && r.controller === true);
          if (!isJsonObject(owner)) return '<none>';
          const group = str(owner.apiVersion).includes('/') ? `.${str(owner.apiVersion).split('/')[0]}` : '';
          return `${str(owner.kind).toLowerCase()}${group}/${str(owner.name)}`;
        }),
        column('Revision', 'integer', (o) => num(o.revision)),
      ],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'endpoints',
      kind: 'Endpoints',
      namespaced: true,
      shortNames: ['ep'],
      createOnUpdate: true,
      columns: [column('Endpoints', 'string', endpointsColumn)],
    }),
    builtin({
      group: 'discovery.k8s.io',
      version: 'v1',
      plural: 'endpointslices',
      kind: 'EndpointSlice',
      namespaced: true,
      columns: [
        column('AddressType', 'string', (o) => str(o.addressType)),
        column('Ports', 'string', (o) => {
          const ports = o.ports;
          return Array.isArray(ports) && ports.length ? ports.map((p) => (isJsonObject(p) ? str(p.port) : '')).join(',') : '<unset>';
        }),
        column('Endpoints', 'string', (o) => {
          const eps = o.endpoints;
          const addresses = Array.isArray(eps) ? eps.flatMap((e) => (isJsonObject(e) && Array.isArray(e.addresses) ? e.addresses.map(str) : [])) : [];
          return addresses.length ? addresses.slice(0, 3).join(',') + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : '') : '<unset>';
        }),
      ],
    }),
    builtin({
      group: 'networking.k8s.io',
      version: 'v1',
      plural: 'ingresses',
      kind: 'Ingress',
      namespaced: true,
      shortNames: ['ing'],
      status: true,
      generation: true,
      strategy: ingressStrategy,
      columns: [
        column('Class', 'string', (o) => str(getPath(o, ['spec', 'ingressClassName'])) || '<none>'),
        column('Hosts', 'string', (o) => {
          const rules = getPath(o, ['spec', 'rules']);
          const hosts = Array.isArray(rules) ? rules.map((r) => (isJsonObject(r) ? str(r.host) : '')).filter(Boolean) : [];
          return hosts.length ? hosts.join(',') : '*';
        }),
        column('Address', 'string', () => ''),
        column('Ports', 'string', () => '80'),
      ],
    }),
    builtin({
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      kind: 'Lease',
      namespaced: true,
      createOnUpdate: true,
      columns: [column('Holder', 'string', (o) => str(getPath(o, ['spec', 'holderIdentity'])))],
    }),
    builtin({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      status: true,
      generation: true,
      returnDeletedObject: true,
      strategy: crdStrategy,
      age: false,
      columns: [column('Created At', 'date', (o) => str(readMeta(o).creationTimestamp))],
    }),
  ];
}
