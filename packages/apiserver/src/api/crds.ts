/**
 * CustomResourceDefinitions served: the resource type a CRD declares, and the controller that
 * serves it (NamesAccepted/Established) and on deletion removes every custom resource before
 * letting the CRD go. The CRD kind's own rules are builtins/custom-resource-definition.ts.
 */
import type { InternalWrites } from './internal-writes.js';
import { CLEANUP_FINALIZER, setCondition } from './builtins/custom-resource-definition.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject, stringOf, stringsOf } from '../base/json.js';
import { finalizersOf, getPath, isBeingDeleted, metaOf, nameOf, namespaceOf, timestamp } from '../base/meta.js';
import { WorkQueue } from '../base/work-queue.js';
import type { PrinterColumn, Registry, ResourceType, ScaleInfo, VersionInfo } from './registry.js';
import type { Store, StoreEvent } from '../storage/store.js';
import type { WatchHub } from './watch.js';

export const CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions';

function printerColumns(v: JsonObject): PrinterColumn[] {
  const cols = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.filter(isJsonObject) : [];
  return cols.map((c) => ({
    name: stringOf(c.name),
    type: stringOf(c.type) || 'string',
    jsonPath: stringOf(c.jsonPath),
    description: stringOf(c.description) || undefined,
    priority: typeof c.priority === 'number' ? c.priority : 0,
    format: stringOf(c.format) || undefined,
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
  const group = stringOf(spec.group);
  const plural = stringOf(names.plural);
  const kind = stringOf(names.kind);
  const versionObjs = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const storage = versionObjs.find((v) => v.storage === true);
  if (!group || !plural || !kind || !storage) return undefined;
  const versions: VersionInfo[] = versionObjs.map((v) => ({
    name: stringOf(v.name),
    served: v.served !== false,
    storage: v.storage === true,
    statusSubresource: isJsonObject(getPath(v, ['subresources', 'status'])),
    printerColumns: printerColumns(v),
    selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields.filter(isJsonObject) : []).map((f) =>
      stringOf(f.jsonPath).replace(/^\./, ''),
    ),
    schema: getPath(v, ['schema', 'openAPIV3Schema']),
    scale: scaleOf(getPath(v, ['subresources', 'scale'])),
  }));
  return {
    key: `${group}/${plural}`,
    group,
    plural,
    singular: stringOf(names.singular) || kind.toLowerCase(),
    kind,
    listKind: stringOf(names.listKind) || `${kind}List`,
    namespaced: spec.scope !== 'Cluster',
    shortNames: stringsOf(names.shortNames),
    categories: stringsOf(names.categories),
    versions,
    storageVersion: stringOf(storage.name),
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
      const stored = stringsOf(status.storedVersions);
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
