/**
 * What the embedded API server knows about the structure of built-in kinds: which lists merge by
 * key, which are sets, which are atomic; which maps and structs are owned as a whole. Strategic
 * merge patch and server-side apply both read it.
 *
 * A field the schema does not describe is "deduced" from its value, the way Kubernetes treats
 * custom resources without a schema: objects merge field by field, lists are atomic, scalars
 * are scalars. So a TypeInfo only needs to describe the paths that differ from that default
 * (keyed lists, sets, atomic maps/structs) and the structs on the way to them.
 *
 * Two vocabularies meet here, as in Kubernetes:
 * - server-side apply uses `listType` (atomic | set | map) with `keys` (+listMapKey) and
 *   `atomic` maps/structs (+mapType=atomic, +structType=atomic);
 * - strategic merge patch uses `patchStrategy` (merge | replace) with one `patchMergeKey`.
 *   Defaults: map-lists merge on their first key, sets merge as a union, atomic lists replace.
 *   Some fields disagree (Service ports: SSA keys port+protocol, SMP merges on port alone;
 *   Job conditions: SSA atomic, SMP merges on type), hence both.
 */
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject, ownValue, setOwn } from '../base/json.js';

export interface ScalarType {
  readonly kind: 'scalar';
}

/** An object with named fields. Fields not listed are deduced from their value. */
export interface StructType {
  readonly kind: 'struct';
  readonly fields: Readonly<Record<string, FieldType>>;
  /** Server-side apply owns it as one value (+structType=atomic, e.g. metav1.LabelSelector). */
  readonly atomic?: boolean;
  /**
   * Go serializes it even when empty (a non-pointer struct, a slice without omitempty), so a
   * write that first fills it does not own the node itself — only what it put inside. This only
   * shapes the `.` entries of Update-operation managed fields, to look like a real server's.
   */
  readonly presentWhenEmpty?: boolean;
}

/** A map with arbitrary string keys (labels, annotations, ConfigMap data). */
export interface MapType {
  readonly kind: 'map';
  /** The type of every value; undefined: deduced. */
  readonly values?: FieldType;
  /** Server-side apply owns it as one value (+mapType=atomic, e.g. Service spec.selector). */
  readonly atomic?: boolean;
  readonly presentWhenEmpty?: boolean;
}

export interface ListType {
  readonly kind: 'list';
  /** atomic: one value. set: unique scalars, owned per value. map: objects identified by `keys`. */
  readonly listType: 'atomic' | 'set' | 'map';
  /** For listType map: the fields that identify an item (+listMapKey), in declaration order. */
  readonly keys?: readonly string[];
  /** Values of key fields that an item may omit (Kubernetes defaults protocol to TCP). */
  readonly keyDefaults?: Readonly<Record<string, JsonValue>>;
  /** The type of each item; undefined: deduced. */
  readonly items?: FieldType;
  /** Strategic merge patch strategy; default merge for map and set lists, replace for atomic. */
  readonly patchStrategy?: 'merge' | 'replace';
  /** Strategic merge patch key for lists of objects; default keys[0]. */
  readonly patchMergeKey?: string;
  readonly presentWhenEmpty?: boolean;
}

export type FieldType = ScalarType | StructType | MapType | ListType;

export interface TypeInfo {
  /** API group ("" for core). */
  readonly group: string;
  readonly kind: string;
  /** The whole object. */
  readonly root: StructType;
}

// ---------------------------------------------------------------------------------------------
// Builders

const scalar: ScalarType = { kind: 'scalar' };

function struct(fields: Record<string, FieldType>, options: { atomic?: boolean; presentWhenEmpty?: boolean } = {}): StructType {
  return {
    kind: 'struct',
    fields,
    presentWhenEmpty: options.presentWhenEmpty ?? !options.atomic,
    ...(options.atomic ? { atomic: true } : {}),
  };
}

function map(options: { atomic?: boolean; values?: FieldType } = {}): MapType {
  return { kind: 'map', values: options.values ?? scalar, ...(options.atomic ? { atomic: true } : {}) };
}

const atomicList: ListType = { kind: 'list', listType: 'atomic' };

function setList(): ListType {
  return { kind: 'list', listType: 'set', items: scalar };
}

function mapList(
  keys: readonly string[],
  items?: StructType,
  options: Omit<ListType, 'kind' | 'listType' | 'keys' | 'items'> = {},
): ListType {
  return { kind: 'list', listType: 'map', keys, ...(items ? { items } : {}), ...options };
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

const conditions = mapList(['type']);

export const objectMetaType: StructType = struct({
  labels: map(),
  annotations: map(),
  finalizers: setList(),
  ownerReferences: mapList(['uid']),
  managedFields: atomicList,
});

const labelSelector = struct({}, { atomic: true });

const resourceRequirements = struct({ limits: map(), requests: map(), claims: mapList(['name']) });

const container = struct({
  ports: mapList(['containerPort', 'protocol'], undefined, { keyDefaults: { protocol: 'TCP' }, patchMergeKey: 'containerPort' }),
  env: mapList(['name']),
  envFrom: atomicList,
  volumeMounts: mapList(['mountPath']),
  volumeDevices: mapList(['devicePath']),
  command: atomicList,
  args: atomicList,
  resources: resourceRequirements,
  resizePolicy: atomicList,
});

const podSpec = struct({
  containers: mapList(['name'], container, { presentWhenEmpty: true }),
  initContainers: mapList(['name'], container),
  ephemeralContainers: mapList(['name'], container),
  volumes: mapList(['name']),
  imagePullSecrets: mapList(['name']),
  tolerations: atomicList,
  hostAliases: mapList(['ip']),
  topologySpreadConstraints: mapList(['topologyKey', 'whenUnsatisfiable'], undefined, { patchMergeKey: 'topologyKey' }),
  readinessGates: atomicList,
  nodeSelector: map({ atomic: true }),
  resourceClaims: mapList(['name']),
  schedulingGates: mapList(['name']),
});

const podStatus = struct({
  conditions,
  podIPs: mapList(['ip']),
  hostIPs: mapList(['ip']),
  containerStatuses: atomicList,
  initContainerStatuses: atomicList,
  ephemeralContainerStatuses: atomicList,
});

const podTemplateSpec = struct({ metadata: objectMetaType, spec: podSpec });

const workloadStatus = struct({ conditions });

const jobSpec = struct({ selector: labelSelector, template: podTemplateSpec });

const loadBalancerStatus = struct({ ingress: atomicList });

function kind(group: string, name: string, fields: Record<string, FieldType>): TypeInfo {
  return { group, kind: name, root: struct({ metadata: objectMetaType, ...fields }) };
}

const BUILT_INS: readonly TypeInfo[] = [
  kind('', 'Namespace', { spec: struct({ finalizers: atomicList }), status: struct({ conditions }) }),
  kind('', 'ConfigMap', { data: map(), binaryData: map() }),
  kind('', 'Secret', { data: map(), stringData: map() }),
  kind('', 'ServiceAccount', { secrets: mapList(['name']), imagePullSecrets: atomicList }),
  kind('', 'Service', {
    spec: struct({
      ports: mapList(['port', 'protocol'], undefined, { keyDefaults: { protocol: 'TCP' }, patchMergeKey: 'port' }),
      selector: map({ atomic: true }),
      clusterIPs: atomicList,
      externalIPs: atomicList,
      ipFamilies: atomicList,
      loadBalancerSourceRanges: atomicList,
    }),
    status: struct({ loadBalancer: loadBalancerStatus, conditions }),
  }),
  kind('', 'Pod', { spec: podSpec, status: podStatus }),
  kind('', 'PodTemplate', { template: podTemplateSpec }),
  kind('', 'Event', {}),
  kind('events.k8s.io', 'Event', {}),
  kind('apps', 'Deployment', {
    spec: struct({ selector: labelSelector, template: podTemplateSpec, strategy: struct({}) }),
    status: workloadStatus,
  }),
  kind('apps', 'ReplicaSet', { spec: struct({ selector: labelSelector, template: podTemplateSpec }), status: workloadStatus }),
  kind('apps', 'StatefulSet', {
    spec: struct({ selector: labelSelector, template: podTemplateSpec, volumeClaimTemplates: atomicList, updateStrategy: struct({}) }),
    status: workloadStatus,
  }),
  kind('apps', 'DaemonSet', {
    spec: struct({ selector: labelSelector, template: podTemplateSpec, updateStrategy: struct({}) }),
    status: workloadStatus,
  }),
  kind('batch', 'Job', {
    spec: jobSpec,
    status: struct({ conditions: { ...atomicList, patchStrategy: 'merge', patchMergeKey: 'type' } }),
  }),
  kind('batch', 'CronJob', {
    spec: struct({ jobTemplate: struct({ metadata: objectMetaType, spec: jobSpec }) }),
    status: struct({ active: atomicList }),
  }),
  kind('networking.k8s.io', 'Ingress', {
    spec: struct({ rules: atomicList, tls: atomicList }),
    status: struct({ loadBalancer: loadBalancerStatus }),
  }),
  kind('coordination.k8s.io', 'Lease', { spec: struct({}) }),
  kind('apiextensions.k8s.io', 'CustomResourceDefinition', {
    spec: struct({ versions: atomicList, names: struct({ shortNames: atomicList, categories: atomicList }) }),
    status: struct({
      conditions: mapList(['type'], undefined, { patchStrategy: 'replace' }),
      acceptedNames: struct({ shortNames: atomicList, categories: atomicList }),
      storedVersions: atomicList,
    }),
  }),
];

const BY_GROUP_KIND: ReadonlyMap<string, TypeInfo> = new Map(BUILT_INS.map((t) => [`${t.group}/${t.kind}`, t]));

/**
 * The structure of a built-in kind, or undefined for kinds the server does not know (custom
 * resources): their lists are atomic and their maps granular, except metadata which every kind
 * shares (see `typeInfoOrGeneric`).
 */
export function typeInfoFor(group: string, kind: string): TypeInfo | undefined {
  return BY_GROUP_KIND.get(`${group}/${kind}`);
}

/** The kinds typeInfoFor knows, as [group, kind] pairs. */
export function builtInKinds(): Array<[group: string, kind: string]> {
  return BUILT_INS.map((t) => [t.group, t.kind]);
}

/** What any object has in common: ObjectMeta. Everything else is deduced. */
export const genericTypeInfo: TypeInfo = { group: '', kind: '', root: struct({ metadata: objectMetaType }) };

export function typeInfoOrGeneric(type: TypeInfo | undefined): TypeInfo {
  return type ?? genericTypeInfo;
}

// ---------------------------------------------------------------------------------------------
// Custom resources: the structure their CRD's schema declares

/** The FieldType of a CRD schema node; undefined where the schema leaves it open (deduced). */
function fromSchema(s: JsonValue | undefined): FieldType | undefined {
  if (!isJsonObject(s)) return undefined;
  if (s.type === 'array') {
    const listType = s['x-kubernetes-list-type'];
    const items = fromSchema(s.items);
    if (listType === 'set') return { kind: 'list', listType: 'set', items: scalar };
    if (listType !== 'map') return { ...atomicList, ...(items ? { items } : {}) };
    const keys = Array.isArray(s['x-kubernetes-list-map-keys'])
      ? s['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
      : [];
    const itemProps = isJsonObject(s.items) && isJsonObject(s.items.properties) ? s.items.properties : {};
    const keyDefaults: Record<string, JsonValue> = {};
    for (const k of keys) {
      const prop = ownValue(itemProps, k);
      if (isJsonObject(prop) && prop.default !== undefined) setOwn(keyDefaults, k, prop.default);
    }
    return {
      kind: 'list',
      listType: 'map',
      keys,
      ...(items ? { items } : {}),
      ...(Object.keys(keyDefaults).length ? { keyDefaults } : {}),
    };
  }
  if (s.type === 'object' || s.properties !== undefined || s.additionalProperties !== undefined) {
    const atomic = s['x-kubernetes-map-type'] === 'atomic';
    if (isJsonObject(s.properties)) return structFromSchema(s, atomic);
    if (isJsonObject(s.additionalProperties))
      return {
        kind: 'map',
        ...(fromSchema(s.additionalProperties) ? { values: fromSchema(s.additionalProperties) } : {}),
        ...(atomic ? { atomic } : {}),
      };
    return atomic ? { kind: 'struct', fields: {}, atomic } : undefined;
  }
  return s.type === undefined ? undefined : scalar;
}

function structFromSchema(s: JsonObject, atomic: boolean, skip: ReadonlySet<string> = new Set()): StructType {
  const fields: Record<string, FieldType> = {};
  for (const [name, sub] of Object.entries(isJsonObject(s.properties) ? s.properties : {})) {
    if (skip.has(name)) continue;
    const t = fromSchema(sub);
    if (t) setOwn(fields, name, t);
  }
  // An unstructured object is only present when someone wrote it, so its writer owns the node itself.
  return { kind: 'struct', fields, presentWhenEmpty: false, ...(atomic ? { atomic } : {}) };
}

const fromCrdSchemas = new WeakMap<JsonObject, TypeInfo>();

/**
 * The structure a CRD version's openAPIV3Schema declares, for server-side apply and merges:
 * x-kubernetes-list-type (atomic, set, map with x-kubernetes-list-map-keys) and
 * x-kubernetes-map-type (granular, atomic). Without a schema: the generic structure.
 */
export function typeInfoFromCrdSchema(group: string, kind: string, schema: JsonValue | undefined): TypeInfo {
  if (!isJsonObject(schema)) return genericTypeInfo;
  let info = fromCrdSchemas.get(schema);
  if (!info) {
    const root = structFromSchema(schema, false, new Set(['metadata', 'apiVersion', 'kind']));
    info = { group, kind, root: { ...root, fields: { metadata: objectMetaType, ...root.fields } } };
    fromCrdSchemas.set(schema, info);
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Navigation

/** The declared type of field `key` of an object of type `t` (undefined: deduce from the value). */
export function fieldTypeOf(t: FieldType | undefined, key: string): FieldType | undefined {
  if (!t) return undefined;
  if (t.kind === 'struct') return Object.prototype.hasOwnProperty.call(t.fields, key) ? t.fields[key] : undefined;
  if (t.kind === 'map') return t.values;
  return undefined;
}

/** The declared type of the items of list type `t`. */
export function itemTypeOf(t: FieldType | undefined): FieldType | undefined {
  return t?.kind === 'list' ? t.items : undefined;
}

/** The strategic-merge-patch behaviour of a list field. */
export function listPatchStrategy(t: FieldType | undefined): { strategy: 'merge' | 'replace'; mergeKey?: string } {
  if (t?.kind !== 'list') return { strategy: 'replace' };
  const strategy = t.patchStrategy ?? (t.listType === 'atomic' ? 'replace' : 'merge');
  const mergeKey = t.patchMergeKey ?? t.keys?.[0];
  return mergeKey === undefined ? { strategy } : { strategy, mergeKey };
}
