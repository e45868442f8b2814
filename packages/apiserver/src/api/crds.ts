/**
 * CustomResourceDefinitions: validation of the CRD itself, the resource type it declares, and the
 * controller that serves it (NamesAccepted/Established), and on deletion removes every custom
 * resource before letting the CRD go.
 */
import type { InternalWrites } from './internal-writes.js';
import type { StatusCause } from '../base/errors.js';
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired } from '../base/errors.js';
import { clientConfigCauses } from './builtins/admission-webhooks.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { finalizersOf, getPath, isBeingDeleted, metaOf, nameOf, namespaceOf, timestamp } from '../base/meta.js';
import { WorkQueue } from '../base/work-queue.js';
import type { PrinterColumn, Registry, ResourceType, ScaleInfo, Strategy, VersionInfo } from './registry.js';
import type { Store, StoreEvent } from '../storage/store.js';
import { dns1035Label, dns1123Label, dns1123Subdomain } from './validation.js';
import type { WatchHub } from './watch.js';
import { pruneUnknownCrdFields, schemaProblems } from './crd-structure.js';

export const CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions';
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');
const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function setCondition(status: JsonObject, type: string, value: string, reason: string, message: string, now: string): void {
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isJsonObject) : [];
  const existing = conditions.find((c) => c.type === type);
  if (existing && existing.status === value && existing.reason === reason && existing.message === message) {
    status.conditions = conditions;
    return;
  }
  const next: JsonObject = {
    type,
    status: value,
    lastTransitionTime: existing && existing.status === value ? (existing.lastTransitionTime ?? now) : now,
    reason,
    message,
  };
  status.conditions = existing ? conditions.map((c) => (c === existing ? next : c)) : [...conditions, next];
}

const API_APPROVED = 'api-approved.kubernetes.io';

/** Groups owned by the Kubernetes project, where the real server wants an API review's approval. */
export function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/**
 * The real server's API approval rule: a CRD in a protected group needs the
 * `api-approved.kubernetes.io` annotation, a URL of the approving review or a value starting with
 * "unapproved" (an explicit bypass). Without it any user allowed to create CRDs could claim
 * rbac.authorization.k8s.io and the like.
 */
function apiApprovalProblem(group: string, annotations: JsonValue | undefined): StatusCause | undefined {
  if (!isProtectedGroup(group)) return undefined;
  const field = `metadata.annotations[${API_APPROVED}]`;
  const value = isJsonObject(annotations) ? annotations[API_APPROVED] : undefined;
  if (typeof value !== 'string' || value === '') {
    return fieldRequired(
      field,
      `protected groups must have approval annotation "${API_APPROVED}", see https://github.com/kubernetes/enhancements/pull/1111`,
    );
  }
  if (value.startsWith('unapproved')) return undefined;
  try {
    new URL(value);
    return undefined;
  } catch {
    return fieldInvalid(
      field,
      value,
      'protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved"',
    );
  }
}

/** spec.conversion: a Webhook strategy needs its webhook, with a v1 review version and a valid client config. */
function conversionCauses(conversion: JsonValue | undefined): StatusCause[] {
  if (!isJsonObject(conversion)) return [];
  const strategy = conversion.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook')
    return [fieldNotSupported('spec.conversion.strategy', strategy ?? '', ['None', 'Webhook'])];
  if (strategy === 'None') {
    return isJsonObject(conversion.webhook)
      ? [fieldForbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook')]
      : [];
  }
  if (!isJsonObject(conversion.webhook)) return [fieldRequired('spec.conversion.webhook', 'required when strategy is set to Webhook')];
  const causes: StatusCause[] = [];
  const versions = Array.isArray(conversion.webhook.conversionReviewVersions) ? conversion.webhook.conversionReviewVersions : [];
  if (versions.length === 0)
    causes.push(fieldRequired('spec.conversion.webhook.conversionReviewVersions', 'must specify one of v1, v1beta1'));
  else if (!versions.some((v) => v === 'v1' || v === 'v1beta1'))
    causes.push(fieldInvalid('spec.conversion.webhook.conversionReviewVersions', versions, 'must include at least one of v1, v1beta1'));
  causes.push(...clientConfigCauses('spec.conversion.webhook.clientConfig', conversion.webhook.clientConfig));
  return causes;
}

export const crdStrategy: Strategy = {
  pruneUnknownFields: pruneUnknownCrdFields,
  prepareForCreate(obj) {
    obj.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
  },
  defaults(obj) {
    const spec = isJsonObject(obj.spec) ? obj.spec : (obj.spec = {});
    const names = isJsonObject(spec.names) ? spec.names : (spec.names = {});
    if (typeof names.kind === 'string') {
      if (!names.singular) names.singular = names.kind.toLowerCase();
      if (!names.listKind) names.listKind = `${names.kind}List`;
    }
    if (!isJsonObject(spec.conversion)) spec.conversion = { strategy: 'None' };
    const hook = isJsonObject(spec.conversion.webhook) ? spec.conversion.webhook : undefined;
    const service =
      hook && isJsonObject(hook.clientConfig) && isJsonObject(hook.clientConfig.service) ? hook.clientConfig.service : undefined;
    if (service && (service.port === undefined || service.port === null)) service.port = 443;
    if (Array.isArray(spec.versions)) {
      for (const v of spec.versions) {
        if (!isJsonObject(v)) continue;
        if (v.served === undefined) v.served = true;
        if (v.storage === undefined) v.storage = spec.versions.length === 1;
      }
    }
  },
  validate(obj, old) {
    const causes: StatusCause[] = [];
    const spec = isJsonObject(obj.spec) ? obj.spec : {};
    const group = str(spec.group);
    const names = isJsonObject(spec.names) ? spec.names : {};
    const plural = str(names.plural);
    if (!group) causes.push(fieldRequired('spec.group', ''));
    else {
      for (const e of dns1123Subdomain(group)) causes.push(fieldInvalid('spec.group', group, e));
      if (!group.includes('.')) causes.push(fieldInvalid('spec.group', group, 'should be a domain with at least one dot'));
      const approval = apiApprovalProblem(group, metaOf(obj).annotations);
      if (approval) causes.push(approval);
    }
    if (!plural) causes.push(fieldRequired('spec.names.plural', ''));
    else for (const e of dns1123Label(plural)) causes.push(fieldInvalid('spec.names.plural', plural, e));
    if (!str(names.kind)) causes.push(fieldRequired('spec.names.kind', ''));
    if (str(names.singular))
      for (const e of dns1123Label(str(names.singular))) causes.push(fieldInvalid('spec.names.singular', names.singular, e));
    strings(names.shortNames).forEach((short, i) => {
      for (const e of dns1123Label(short)) causes.push(fieldInvalid(`spec.names.shortNames[${i}]`, short, e));
    });
    if (spec.preserveUnknownFields === true) {
      causes.push(
        fieldInvalid(
          'spec.preserveUnknownFields',
          true,
          'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
        ),
      );
    }
    if (plural && group && nameOf(obj) !== `${plural}.${group}`) {
      causes.push(fieldInvalid('metadata.name', nameOf(obj), 'must be spec.names.plural+"."+spec.group'));
    }
    if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
      causes.push(fieldInvalid('spec.scope', spec.scope ?? '', 'supported values: "Cluster", "Namespaced"'));
    }
    const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
    if (versions.length === 0) causes.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
    else {
      const storage = versions.filter((v) => v.storage === true).length;
      if (storage !== 1) causes.push(fieldInvalid('spec.versions', storage, 'must have exactly one version marked as storage version'));
      const seen = new Set<string>();
      versions.forEach((v, i) => {
        const name = str(v.name);
        if (!name) causes.push(fieldRequired(`spec.versions[${i}].name`, ''));
        else for (const e of dns1035Label(name)) causes.push(fieldInvalid(`spec.versions[${i}].name`, name, e));
        if (name && seen.has(name)) causes.push(fieldInvalid(`spec.versions[${i}].name`, name, 'must be unique'));
        seen.add(name);
        const schema = isJsonObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
        causes.push(...schemaProblems(schema, `spec.versions[${i}].schema.openAPIV3Schema`));
      });
    }
    if (old && isJsonObject(old.spec)) {
      if (old.spec.scope !== spec.scope) causes.push(fieldInvalid('spec.scope', spec.scope ?? '', 'field is immutable'));
      if (old.spec.group !== spec.group) causes.push(fieldInvalid('spec.group', spec.group ?? '', 'field is immutable'));
    }
    causes.push(...conversionCauses(spec.conversion));
    return causes;
  },
  prepareForDelete(obj, ctx) {
    const meta = metaOf(obj);
    const finalizers = finalizersOf(obj);
    if (!finalizers.includes(CLEANUP_FINALIZER)) meta.finalizers = [...finalizers, CLEANUP_FINALIZER];
    const status = isJsonObject(obj.status) ? obj.status : (obj.status = {});
    setCondition(
      status,
      'Terminating',
      'True',
      'InstanceDeletionPending',
      'CustomResourceDefinition marked for deletion; instance deletion pending',
      ctx.now,
    );
  },
};

function printerColumns(v: JsonObject): PrinterColumn[] {
  const cols = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.filter(isJsonObject) : [];
  return cols.map((c) => ({
    name: str(c.name),
    type: str(c.type) || 'string',
    jsonPath: str(c.jsonPath),
    description: str(c.description) || undefined,
    priority: typeof c.priority === 'number' ? c.priority : 0,
    format: str(c.format) || undefined,
  }));
}

function jsonPathToPath(p: JsonValue | undefined): string[] | undefined {
  return typeof p === 'string' && p.startsWith('.') ? p.slice(1).split('.') : undefined;
}

function scaleOf(scale: JsonValue | undefined): ScaleInfo | undefined {
  if (!isJsonObject(scale)) return undefined;
  const spec = jsonPathToPath(scale.specReplicasPath);
  const status = jsonPathToPath(scale.statusReplicasPath);
  if (!spec || !status) return undefined;
  return { specReplicasPath: spec, statusReplicasPath: status, labelSelectorPath: jsonPathToPath(scale.labelSelectorPath) };
}

/** The resource type a CRD declares (undefined if the CRD is not usable). */
export function typeOfCrd(crd: JsonObject): ResourceType | undefined {
  const spec = isJsonObject(crd.spec) ? crd.spec : undefined;
  const names = isJsonObject(spec?.names) ? spec.names : undefined;
  if (!spec || !names) return undefined;
  const group = str(spec.group);
  const plural = str(names.plural);
  const kind = str(names.kind);
  const versionObjs = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const storage = versionObjs.find((v) => v.storage === true);
  if (!group || !plural || !kind || !storage) return undefined;
  const versions: VersionInfo[] = versionObjs.map((v) => ({
    name: str(v.name),
    served: v.served !== false,
    storage: v.storage === true,
    statusSubresource: isJsonObject(getPath(v, ['subresources', 'status'])),
    printerColumns: printerColumns(v),
    selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields.filter(isJsonObject) : []).map((f) =>
      str(f.jsonPath).replace(/^\./, ''),
    ),
    schema: getPath(v, ['schema', 'openAPIV3Schema']),
    scale: scaleOf(getPath(v, ['subresources', 'scale'])),
  }));
  return {
    key: `${group}/${plural}`,
    group,
    plural,
    singular: str(names.singular) || kind.toLowerCase(),
    kind,
    listKind: str(names.listKind) || `${kind}List`,
    namespaced: spec.scope !== 'Cluster',
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    versions,
    storageVersion: str(storage.name),
    custom: true,
    tracksGeneration: true,
    nameRule: 'subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    statusKeeps: [],
    strategy: {},
    returnDeletedObject: true,
  };
}

/** Serves the types of established CRDs and cleans up after deleted ones. */
export class CrdController {
  private readonly queue: WorkQueue;
  /** CR resource key -> CRD name, for CRDs being deleted. */
  private readonly terminatingKeys = new Map<string, string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writes: InternalWrites,
    private readonly registry: Registry,
    private readonly store: Store,
    private readonly hub: WatchHub,
    /** Shared with the HTTP layer, which refuses creates of these resources. */
    readonly terminating: Set<string>,
  ) {
    this.queue = new WorkQueue('crd controller', (name) => this.reconcile(name));
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === CRD_KEY) {
      if (e.type === 'DELETED') this.unserve(e.object);
      // Serving starts synchronously, so a client may create resources right after the CRD.
      else this.reconcile(nameOf(e.object));
      return;
    }
    const crdName = this.terminatingKeys.get(e.resource);
    if (crdName && e.type === 'DELETED') this.queue.add(crdName);
  }

  /** Serves every CRD in storage (after loading saved state). */
  serveAll(): void {
    for (const crd of this.store.list(CRD_KEY)) this.reconcile(nameOf(crd));
  }

  private reconcile(name: string): void {
    const crd = this.store.get(CRD_KEY, '', name);
    if (!crd) return;
    const type = typeOfCrd(crd);
    if (!type) return;
    const existing = this.registry.get(type.key);
    // A CRD never replaces a built-in (nor, deleted, takes it and its objects along).
    if (existing && !existing.custom) return this.refuseBuiltin(name, type);
    if (!existing || !deepEqual(serializable(existing), serializable(type))) this.registry.add(type);
    if (isBeingDeleted(crd)) {
      this.terminating.add(type.key);
      this.terminatingKeys.set(type.key, name);
      this.cleanup(crd, type);
      return;
    }
    this.updateStatus(name, (status, now, obj) => {
      const names = getPath(obj, ['spec', 'names']);
      status.acceptedNames = isJsonObject(names) ? { ...names } : {};
      setCondition(status, 'NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', now);
      setCondition(status, 'Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', now);
      const stored = strings(status.storedVersions);
      if (!stored.includes(type.storageVersion)) status.storedVersions = [...stored, type.storageVersion];
    });
  }

  /** Changes a CRD's status as the server (its /status, manager kube-apiserver); no write when nothing changed. */
  private updateStatus(name: string, change: (status: JsonObject, now: string, crd: JsonObject) => void): void {
    this.writes.mutate(
      CRD_KEY,
      '',
      name,
      (obj) => {
        const status = isJsonObject(obj.status) ? obj.status : (obj.status = {});
        const before = JSON.stringify(status);
        change(status, timestamp(), obj);
        return JSON.stringify(status) !== before;
      },
      { subresource: 'status', manager: 'kube-apiserver' },
    );
  }

  private cleanup(crd: JsonObject, type: ResourceType): void {
    for (const obj of this.store.list(type.key)) {
      if (!isBeingDeleted(obj)) this.writes.deleteInternal(type.key, namespaceOf(obj), nameOf(obj));
    }
    if (this.store.count(type.key) > 0) {
      this.updateStatus(nameOf(crd), (status, now) =>
        setCondition(status, 'Terminating', 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress', now),
      );
      return;
    }
    this.releaseCleanupFinalizer(nameOf(crd));
  }

  /** Lets a deleted CRD go: its objects are gone (or, for one never served, were never its own). */
  private releaseCleanupFinalizer(name: string): void {
    this.writes.mutate(CRD_KEY, '', name, (obj) => {
      const finalizers = finalizersOf(obj);
      if (!finalizers.includes(CLEANUP_FINALIZER)) return false;
      metaOf(obj).finalizers = finalizers.filter((f) => f !== CLEANUP_FINALIZER);
      return true;
    });
  }

  /** A CRD naming a built-in resource is kept, not served: NamesAccepted False, as for a name conflict. */
  private refuseBuiltin(name: string, type: ResourceType): void {
    this.updateStatus(name, (status, now) => {
      setCondition(
        status,
        'NamesAccepted',
        'False',
        'BuiltinConflict',
        `"${type.plural}" is already in use by the built-in resource of group ${type.group}`,
        now,
      );
      setCondition(status, 'Established', 'False', 'NotAccepted', 'not all names are accepted', now);
    });
    if (isBeingDeleted(this.store.get(CRD_KEY, '', name) ?? {})) this.releaseCleanupFinalizer(name);
  }

  private unserve(crd: JsonObject): void {
    const type = typeOfCrd(crd);
    if (!type || this.registry.get(type.key)?.custom === false) return;
    this.registry.remove(type.key);
    this.hub.closeResource(type.key);
    this.store.dropResource(type.key);
    this.terminating.delete(type.key);
    this.terminatingKeys.delete(type.key);
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}

/** A ResourceType without functions, for change detection. */
function serializable(t: ResourceType): JsonValue {
  return JSON.parse(JSON.stringify({ ...t, strategy: undefined })) as JsonValue;
}
