/**
 * The API semantics, independent of HTTP: create, get, list, update, patch and delete with the
 * real server's object rules (resourceVersion, uid, generation, the status split, finalizers,
 * optimistic concurrency, no-op writes, dry run). Controllers inside the server (GC, namespace
 * lifecycle, CRDs, simulators) write through the same path.
 */
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  deletePreconditionFailed,
  expired,
  fieldInvalid,
  fieldRequired,
  forbidden,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  type GroupResource,
  type StatusCause,
  uidPreconditionFailed,
  unsupportedMediaType,
} from '../base/errors.js';
import type { PatchEngine, PatchKind } from './patch-port.js';
import { bindingTarget, boundPod } from './binding.js';
import { decodeContinue, encodeContinue, keyOf, LATEST, ListSnapshots } from './paging.js';
import { finalizersAddedWhileDeleting, keepServerOwnedMeta, nextGeneration, writtenPart } from './update.js';
import { builtinRuleCauses } from './builtin-rules.js';
import { builtinDefinitionName, decodeBuiltin } from './builtin-schema.js';
import { applyCrdSchema } from './crd-schema.js';
import { compileFilter, type ObjectFilter } from './filter.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, deepEqual, isJsonObject } from '../base/json.js';
import {
  finalizersOf,
  generatedName,
  isBeingDeleted,
  metaOf,
  nameOf,
  namespaceOf,
  newUid,
  readMeta,
  getPath,
  resourceVersionOf,
  setPath,
  timestamp,
  uidOf,
} from '../base/meta.js';
import { formatLabelSelector, labelSelectorFromObject } from '../grammar/label-selector.js';
import type { Registry, Resolved, ResourceType, StrategyContext } from './registry.js';
import { apiVersionOf } from './registry.js';
import { present, versionSchema } from './present.js';
import type { Store } from '../storage/store.js';
import { validateAnnotations, validateLabels, validateName } from './validation.js';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';
const SYSTEM_MANAGER = 'kube-controller-manager';
const PODS_KEY = '/pods';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  /** What to do with fields a CRD schema does not declare (default Warn, as the real server). */
  fieldValidation?: FieldValidation;
  /** Collects warnings for the Warning response header. */
  warnings?: string[];
  /** The field manager; defaults to the client's user-agent product. */
  fieldManager?: string;
  subresource?: string;
  /**
   * A check on behalf of the requester of the object about to be written, decoded and defaulted,
   * before validation (`old`: the stored object on update), like the real server's RBAC storage
   * that refuses escalation; it throws to refuse the write.
   */
  admit?: (obj: JsonObject, old: JsonObject | undefined) => void;
  /**
   * Called before a PATCH (server-side apply) or PUT creates an object: the real server's patch
   * and update handlers authorize that as `create` too (withAuthorization on createValidation),
   * so a requester with only `patch` or `update` cannot create. It throws to refuse.
   */
  authorizeCreate?: () => void;
}

/** The options of a write that reach its object's checks. */
type CheckOptions = Pick<WriteOptions, 'fieldValidation' | 'warnings' | 'admit' | 'authorizeCreate'>;

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: PropagationPolicy;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Seconds until a graceful deletion (a bound Pod) completes; 0 deletes at once. */
  gracePeriodSeconds?: number;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
  /** resourceVersionMatch=Exact: the list as it was at this resourceVersion (from the watch history). */
  exactResourceVersion?: number;
}

export interface WriteResult {
  status: number;
  body: JsonObject;
}

export interface CoreOptions {
  /** How long a list snapshot stays usable for `continue` (the real server's is etcd's compaction interval). */
  continueTtlMs?: number;
  now?: () => Date;
}

function groupResource(type: ResourceType): GroupResource {
  return { group: type.group, plural: type.plural };
}

function stripVolatile(obj: JsonObject): JsonObject {
  const meta = readMeta(obj);
  const { resourceVersion: _rv, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/** Where etcd would keep the object (the real server's storage errors name it). */
function storageKey(type: ResourceType, namespace: string, name: string): string {
  const prefix = type.custom ? `/registry/${type.group}/${type.plural}` : `/registry/${type.plural}`;
  return type.namespaced ? `${prefix}/${namespace}/${name}` : `${prefix}/${name}`;
}

/** The uid a write's body names, if any (an empty one names none). */
function bodyUid(meta: JsonObject): string | undefined {
  return typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : undefined;
}

export class ApiCore {
  private readonly snapshots: ListSnapshots;
  private clusterIPSeq = 10;
  private readonly now: () => Date;

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    private readonly engine: PatchEngine,
    options: CoreOptions = {},
  ) {
    this.snapshots = new ListSnapshots(options.continueTtlMs ?? 5 * 60_000);
    this.now = options.now ?? (() => new Date());
  }

  private strategyContext(): StrategyContext {
    return {
      now: timestamp(this.now()),
      allocateClusterIP: () => {
        const n = this.clusterIPSeq++;
        return `10.96.${(n >> 8) & 255}.${n & 255}`;
      },
    };
  }

  // ---- reads ------------------------------------------------------------------------------

  get(r: Resolved, namespace: string, name: string): JsonObject {
    const obj = this.store.get(r.type.key, namespace, name);
    if (!obj) throw notFound(groupResource(r.type), name);
    return present(obj, r.apiVersion, versionSchema(r));
  }

  compileFilter(r: Resolved, query: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): ObjectFilter {
    const filter = compileFilter(r.type, r.version, query.labelSelector, query.fieldSelector);
    // A view of objects stored in another form (events.k8s.io Events) selects on its own fields.
    if (r.type.storedAs === undefined || filter.isEverything) return filter;
    return { isEverything: false, matches: (obj) => filter.matches(present(obj, r.apiVersion)) };
  }

  /** A list at one resourceVersion; `limit` pages through a snapshot kept for `continue`. */
  list(r: Resolved, namespace: string | undefined, query: ListQuery): JsonObject {
    const filter = this.compileFilter(r, query);
    const scope = JSON.stringify([
      r.type.key,
      r.apiVersion,
      r.type.namespaced ? (namespace ?? '') : '',
      query.labelSelector ?? '',
      query.fieldSelector ?? '',
    ]);
    let items: JsonObject[];
    let rv: number;
    let offset = 0;
    let snapshotId: string | undefined;
    if (query.continueToken) {
      const token = decodeContinue(query.continueToken);
      if (token.rv === LATEST) {
        // The inconsistent continuation a 410 offered: the rest of the keys, as they are now.
        items = this.matching(r, namespace, filter).filter((o) => keyOf(o) > token.after);
        rv = this.store.resourceVersion;
      } else {
        const snap = this.snapshots.resume(token, this.store.compactedResourceVersion, scope);
        items = snap.items;
        rv = snap.rv;
        offset = token.offset;
        snapshotId = token.id;
      }
    } else if (query.exactResourceVersion !== undefined && query.exactResourceVersion < this.store.resourceVersion) {
      rv = query.exactResourceVersion;
      items = this.matchingAt(r, namespace, rv).filter((o) => filter.matches(o));
    } else {
      items = this.matching(r, namespace, filter);
      rv = this.store.resourceVersion;
    }
    const limit = query.limit && query.limit > 0 ? query.limit : undefined;
    const end = limit ? Math.min(items.length, offset + limit) : items.length;
    const page = items.slice(offset, end);
    const metadata: JsonObject = { resourceVersion: String(rv) };
    if (end < items.length) {
      if (!snapshotId) snapshotId = this.snapshots.keep(rv, items, scope);
      metadata.continue = encodeContinue({ id: snapshotId, rv, offset: end, after: keyOf(items[end - 1] as JsonObject) });
      if (!query.labelSelector && !query.fieldSelector) metadata.remainingItemCount = items.length - end;
    } else if (snapshotId) {
      this.snapshots.delete(snapshotId);
    }
    return {
      kind: r.type.listKind,
      apiVersion: r.apiVersion,
      metadata,
      items: page.map((o) => present(o, r.apiVersion, versionSchema(r))),
    };
  }

  /**
   * The objects as they were at `rv`: today's, with the changes after `rv` taken back from the
   * watch history (410, as the real server answers, when the history no longer reaches back).
   */
  private matchingAt(r: Resolved, namespace: string | undefined, rv: number): JsonObject[] {
    const events = this.store.eventsSince(r.type.key, rv);
    if (!events) throw expired(`The resourceVersion for the provided list is too old.`);
    const ns = r.type.namespaced ? namespace : undefined;
    const byKey = new Map(this.store.list(r.type.key, ns).map((o) => [keyOf(o), o]));
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i]!;
      if (ns !== undefined && namespaceOf(e.object) !== ns) continue;
      if (e.type === 'ADDED') byKey.delete(keyOf(e.object));
      else if (e.prev) byKey.set(keyOf(e.prev), e.prev);
    }
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  private matching(r: Resolved, namespace: string | undefined, filter: ObjectFilter): JsonObject[] {
    return this.store.list(r.type.key, r.type.namespaced ? namespace : undefined).filter((o) => filter.matches(o));
  }

  // ---- create -----------------------------------------------------------------------------

  create(r: Resolved, namespace: string, body: JsonValue, opts: WriteOptions & { userAgent?: string }): WriteResult {
    const obj = this.normalizeBody(r, body);
    const meta = metaOf(obj);
    this.checkNamespace(r.type, meta, namespace);
    if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '') {
      throw badRequest('resourceVersion should not be set on objects to be created');
    }
    const manager = this.managerOf(opts);
    return { status: 201, body: this.createObject(r, obj, manager, opts.dryRun ?? false, undefined, opts) };
  }

  /** Creates `obj` (already normalized, namespace set); `managedFields` given for server-side apply. */
  private createObject(
    r: Resolved,
    obj: JsonObject,
    manager: string,
    dryRun: boolean,
    managedFields: JsonValue | undefined,
    schemaOpts: CheckOptions = {},
  ): JsonObject {
    const type = r.type;
    const gr = groupResource(type);
    const meta = metaOf(obj);
    const namespace = namespaceOf(obj);
    let generated = false;
    if ((typeof meta.name !== 'string' || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
      meta.name = generatedName(meta.generateName);
      generated = true;
    }
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (!name) throw invalid(type.group, type.kind, '', [fieldRequired('metadata.name', 'name or generateName is required')]);
    const causes = this.validateMeta(type, obj);
    if (causes.length) throw invalid(type.group, type.kind, name, causes);
    if (type.namespaced) this.requireLiveNamespace(type, namespace, name);
    if (this.store.get(type.key, namespace, name)) {
      if (!generated) throw alreadyExists(gr, name);
      meta.name = generatedName(String(meta.generateName));
      return this.createObject(r, obj, manager, dryRun, managedFields, schemaOpts);
    }
    this.decodeBuiltinBody(r, obj, schemaOpts);
    const ctx = this.strategyContext();
    meta.uid = newUid();
    meta.creationTimestamp = ctx.now;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (type.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    type.strategy.prepareForCreate?.(obj, ctx);
    if (type.custom && r.version.statusSubresource) delete obj.status;
    type.strategy.defaults?.(obj);
    const admitted = schemaOpts.admit ? this.admitCreate(r, obj, namespace, name, schemaOpts.admit, ctx) : { meta, name };
    const invalidCauses = [...this.checkSchema(r, obj, schemaOpts), ...(type.strategy.validate?.(obj, undefined) ?? [])];
    if (invalidCauses.length) throw invalid(type.group, type.kind, admitted.name, invalidCauses);
    if (managedFields !== undefined) admitted.meta.managedFields = managedFields;
    else
      this.setManagedFields(
        obj,
        this.engine.trackUpdate({ old: undefined, updated: obj, manager, apiVersion: r.apiVersion, now: ctx.now }, type),
      );
    if (dryRun) return present(obj, r.apiVersion, versionSchema(r));
    return present(this.store.insert(type.key, this.toStorage(type, obj)), r.apiVersion, versionSchema(r));
  }

  /**
   * Admission of a create (`admit`: the mutating webhooks' object swapped in, then checks), and
   * what the real server does with the object it hands back: the store writes under the request's
   * namespace (another is 400, as BeforeCreate answers) and under the object's name, which takes no
   * name already taken (409) and is checked as a body's would be. The strategy prepares it again,
   * as the real server's runs after mutating admission: a status it may not set is dropped.
   * Returns the metadata and name of the object to store.
   */
  private admitCreate(
    r: Resolved,
    obj: JsonObject,
    namespace: string,
    name: string,
    admit: NonNullable<WriteOptions['admit']>,
    ctx: StrategyContext,
  ): { meta: JsonObject; name: string } {
    const type = r.type;
    admit(obj, undefined);
    type.strategy.prepareForCreate?.(obj, ctx);
    if (type.custom && r.version.statusSubresource) delete obj.status;
    type.strategy.defaults?.(obj);
    const meta = metaOf(obj);
    this.checkNamespace(type, meta, namespace);
    const admittedName = typeof meta.name === 'string' ? meta.name : '';
    if (!admittedName) throw invalid(type.group, type.kind, '', [fieldRequired('metadata.name', 'name or generateName is required')]);
    const causes = this.validateMeta(type, obj);
    if (causes.length) throw invalid(type.group, type.kind, admittedName, causes);
    if (admittedName !== name && this.store.get(type.key, namespace, admittedName)) throw alreadyExists(groupResource(type), admittedName);
    return { meta, name: admittedName };
  }

  // ---- update -----------------------------------------------------------------------------

  update(r: Resolved, namespace: string, name: string, body: JsonValue, opts: WriteOptions & { userAgent?: string }): WriteResult {
    const type = r.type;
    const obj = this.normalizeBody(r, body);
    const meta = metaOf(obj);
    this.checkNamespace(type, meta, namespace);
    this.checkName(meta, name);
    const old = this.store.get(type.key, namespaceOf(obj), name);
    // The body's uid is a precondition (the real server's Preconditions() of an update): checked
    // before anything else, also when nothing exists under the name.
    const uid = bodyUid(meta);
    if (uid !== undefined && uid !== (old ? uidOf(old) : '')) {
      throw uidPreconditionFailed(groupResource(type), name, storageKey(type, namespaceOf(obj), name), uid, old ? uidOf(old) : '');
    }
    const manager = this.managerOf(opts);
    if (!old) {
      if (type.allowCreateOnUpdate && !opts.subresource) {
        opts.authorizeCreate?.();
        delete meta.resourceVersion;
        return { status: 201, body: this.createObject(r, obj, manager, opts.dryRun ?? false, undefined, opts) };
      }
      throw notFound(groupResource(type), name);
    }
    this.checkResourceVersion(type, obj, old, true);
    const result = this.commitUpdate(r, old, obj, { ...opts, manager, dryRun: opts.dryRun ?? false });
    return { status: 200, body: present(result, r.apiVersion, versionSchema(r)) };
  }

  /**
   * What Go's decoding does to a built-in object (builtin-schema.ts): a value of the wrong type
   * fails with 400, undeclared fields are dropped and reported per `fieldValidation`.
   */
  private decodeBuiltinBody(r: Resolved, obj: JsonObject, opts: Pick<WriteOptions, 'fieldValidation' | 'warnings'>): void {
    if (r.type.custom) return;
    const definition = builtinDefinitionName(r.type.group, r.version.name, r.type.kind);
    if (definition === undefined) return;
    const outcome = decodeBuiltin(obj, definition);
    if (outcome.typeError !== undefined) throw badRequest(`${decoderPrefix(r)}${outcome.typeError}`);
    this.reportUnknownFields(r, outcome.unknownFields, opts);
  }

  private reportUnknownFields(r: Resolved, unknownFields: string[], opts: Pick<WriteOptions, 'fieldValidation' | 'warnings'>): void {
    if (unknownFields.length === 0) return;
    const mode = opts.fieldValidation ?? 'Warn';
    const described = unknownFields.map((f) => `unknown field "${f}"`);
    // Typed kinds fail in the decoder, which names the kind and version it decoded.
    const decoder = r.type.custom ? '' : decoderPrefix(r);
    if (mode === 'Strict') throw badRequest(`${decoder}strict decoding error: ${described.join(', ')}`);
    if (mode === 'Warn') opts.warnings?.push(...described);
  }

  /**
   * Defaults, prunes and validates a custom resource against its CRD schema; for a built-in, the
   * kind's own pruning and the range and enum checks of its Go validation (builtin-rules.ts).
   * Returns the 422 causes.
   */
  private checkSchema(
    r: Resolved,
    obj: JsonObject,
    opts: Pick<WriteOptions, 'fieldValidation' | 'warnings'>,
    old?: JsonObject,
  ): StatusCause[] {
    if (!r.type.custom) {
      const prune = r.type.strategy.pruneUnknownFields;
      if (prune) this.reportUnknownFields(r, prune(obj), opts);
      return builtinRuleCauses(r.type.group, r.type.kind, obj);
    }
    const outcome = applyCrdSchema(obj, r.version.schema, old && present(old, r.apiVersion, versionSchema(r)));
    this.reportUnknownFields(r, outcome.unknownFields, opts);
    return outcome.causes;
  }

  private checkResourceVersion(type: ResourceType, obj: JsonObject, old: JsonObject, required: boolean): void {
    const rv = readMeta(obj).resourceVersion;
    if (rv === undefined || rv === null || rv === '') {
      if (required && !type.allowUnconditionalUpdate) {
        throw invalid(type.group, type.kind, nameOf(old), [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ]);
      }
      return;
    }
    if (typeof rv !== 'string' || !/^\d+$/.test(rv)) throw badRequest(`invalid resourceVersion: ${JSON.stringify(rv)}`);
    if (rv !== resourceVersionOf(old)) throw conflict(groupResource(type), nameOf(old), MODIFIED_CONFLICT);
  }

  /**
   * The common tail of update, patch and internal writes: applies the status split and server-owned
   * metadata, validates, bumps generation, records managedFields, drops no-op writes and deletes
   * an object whose last finalizer went away. Returns what is stored afterwards (or would be).
   */
  commitUpdate(
    r: Resolved,
    stored: JsonObject,
    candidate: JsonObject,
    opts: { manager: string; dryRun: boolean; subresource?: string; managedFields?: JsonValue } & CheckOptions,
  ): JsonObject {
    const type = r.type;
    const ctx = this.strategyContext();
    // A view of objects stored in another form compares and merges in its own form.
    const old = type.storedAs === undefined ? stored : present(stored, r.apiVersion);
    this.decodeBuiltinBody(r, candidate, opts);
    const statusSubresource = r.version.statusSubresource;
    let obj = writtenPart(type, statusSubresource, old, candidate, opts.subresource);
    // A patch or an apply that changes the uid: the real server's ObjectMeta update validation.
    const uid = bodyUid(metaOf(obj));
    if (uid !== undefined && uid !== uidOf(old))
      throw invalid(type.group, type.kind, nameOf(old), [fieldInvalid('metadata.uid', uid, 'field is immutable')]);
    let meta = keepServerOwnedMeta(type, obj, old);
    if (opts.subresource !== 'finalize') type.strategy.prepareForUpdate?.(obj, old, ctx);
    type.strategy.defaults?.(obj);
    const name = nameOf(old);
    const causes: StatusCause[] = [];
    if (opts.admit) {
      opts.admit(obj, old);
      // What admission handed back is checked as the real server's BeforeUpdate checks it: the
      // request's namespace (400), the stored name (422: the store writes under the stored key);
      // then the part of the object the write may change is taken and prepared again, so a
      // webhook writes no status through the main resource (nor more than status through /status).
      this.checkNamespace(type, metaOf(obj), namespaceOf(old));
      const admittedName = metaOf(obj).name;
      if (admittedName !== name) causes.push(fieldInvalid('metadata.name', admittedName ?? '', 'field is immutable'));
      obj = writtenPart(type, statusSubresource, old, obj, opts.subresource);
      meta = metaOf(obj);
      if (opts.subresource !== 'finalize') type.strategy.prepareForUpdate?.(obj, old, ctx);
      type.strategy.defaults?.(obj);
    }
    causes.push(...this.validateMeta(type, obj), ...this.checkSchema(r, obj, opts, old));
    causes.push(...finalizersAddedWhileDeleting(old, obj));
    causes.push(...(type.strategy.validate?.(obj, old) ?? []));
    if (causes.length) throw invalid(type.group, type.kind, name, causes);

    const generation = nextGeneration(type, statusSubresource, old, obj);
    if (generation !== undefined) meta.generation = generation;

    if (opts.managedFields !== undefined) meta.managedFields = opts.managedFields;
    else {
      // managedFields sent by the client replace the stored ones as the base (trackUpdate decides).
      const tracked = this.engine.trackUpdate(
        { old, updated: obj, manager: opts.manager, apiVersion: r.apiVersion, now: ctx.now, subresource: opts.subresource },
        type,
      );
      this.setManagedFields(obj, tracked);
    }

    if (deepEqual(stripVolatile(this.toStorage(type, obj)), stripVolatile(stored))) return stored;
    const storable = this.toStorage(type, obj);
    if (isBeingDeleted(storable) && finalizersOf(storable).length === 0 && !type.strategy.blocksDeletion?.(storable)) {
      if (opts.dryRun) return storable;
      return this.store.remove(type.key, namespaceOf(old), name) ?? old;
    }
    if (opts.dryRun) return storable;
    return this.store.replace(type.key, storable);
  }

  // ---- patch ------------------------------------------------------------------------------

  patch(
    r: Resolved,
    namespace: string,
    name: string,
    kind: PatchKind,
    body: JsonValue,
    opts: WriteOptions & { force?: boolean; userAgent?: string },
  ): WriteResult {
    const type = r.type;
    const manager = this.managerOf(opts);
    const dryRun = opts.dryRun ?? false;
    if (kind === 'apply') {
      if (!opts.fieldManager)
        throw badRequest(
          'PATCH request with apply content type requires a fieldManager: the fieldManager query parameter is required for apply requests',
        );
      return this.apply(r, namespace, name, body, opts.fieldManager, opts.force ?? false, dryRun, opts.subresource, opts);
    }
    if (opts.force) throw badRequest('force may only be set for apply patches (application/apply-patch+yaml)');
    if (kind === 'strategic' && type.custom) {
      throw unsupportedMediaType('application/strategic-merge-patch+json', [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/apply-patch+yaml',
      ]);
    }
    const ns = type.namespaced ? namespace : '';
    const old = this.store.get(type.key, ns, name);
    if (!old) throw notFound(groupResource(type), name);
    const patched = withName(name, () => this.engine.patch(kind, present(old, r.apiVersion, versionSchema(r)), body, type));
    const obj = this.normalizeBody(r, patched);
    const meta = metaOf(obj);
    this.checkNamespace(type, meta, ns);
    this.checkName(meta, name);
    this.checkResourceVersion(type, obj, old, false);
    const result = this.commitUpdate(r, old, obj, {
      manager,
      dryRun,
      subresource: opts.subresource,
      fieldValidation: opts.fieldValidation,
      warnings: opts.warnings,
      admit: opts.admit,
    });
    return { status: 200, body: present(result, r.apiVersion, versionSchema(r)) };
  }

  private apply(
    r: Resolved,
    namespace: string,
    name: string,
    body: JsonValue,
    manager: string,
    force: boolean,
    dryRun: boolean,
    subresource: string | undefined,
    schemaOpts: CheckOptions,
  ): WriteResult {
    const type = r.type;
    const applied = this.normalizeBody(r, body);
    const meta = metaOf(applied);
    const ns = type.namespaced ? namespace : '';
    this.checkNamespace(type, meta, ns);
    this.checkName(meta, name);
    // What an apply may own depends on where it goes: status only through /status.
    if (subresource === 'status') {
      for (const key of Object.keys(applied)) if (!['apiVersion', 'kind', 'metadata', 'status'].includes(key)) delete applied[key];
      applied.metadata = type.namespaced ? { name, namespace: ns } : { name };
    } else if (r.version.statusSubresource) {
      delete applied.status;
    }
    const old = this.store.get(type.key, ns, name);
    const now = timestamp(this.now());
    if (!old) {
      if (subresource) throw notFound(groupResource(type), name);
      const uid = bodyUid(meta);
      if (uid !== undefined)
        throw conflict(
          groupResource(type),
          name,
          `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`,
        );
      schemaOpts.authorizeCreate?.();
      const merged = withName(name, () =>
        this.engine.apply({ live: undefined, applied, manager, force, apiVersion: r.apiVersion, now }, type),
      );
      const obj = this.normalizeBody(r, merged);
      const objMeta = metaOf(obj);
      objMeta.name = name;
      if (type.namespaced) objMeta.namespace = ns;
      delete objMeta.resourceVersion;
      return { status: 201, body: this.createObject(r, obj, manager, dryRun, objMeta.managedFields, schemaOpts) };
    }
    this.checkResourceVersion(type, applied, old, false);
    // The merge keeps the live uid (apply.ts), so an applied uid is checked here, as validation would.
    const appliedUid = bodyUid(meta);
    if (appliedUid !== undefined && appliedUid !== uidOf(old))
      throw invalid(type.group, type.kind, name, [fieldInvalid('metadata.uid', appliedUid, 'field is immutable')]);
    const merged = withName(name, () =>
      this.engine.apply(
        { live: present(old, r.apiVersion, versionSchema(r)), applied, manager, force, apiVersion: r.apiVersion, now, subresource },
        type,
      ),
    );
    const obj = this.normalizeBody(r, merged);
    const managedFields = readMeta(obj).managedFields;
    const result = this.commitUpdate(r, old, obj, { manager, dryRun, subresource, managedFields: managedFields ?? [], ...schemaOpts });
    return { status: 200, body: present(result, r.apiVersion, versionSchema(r)) };
  }

  // ---- scale subresource (autoscaling/v1 Scale) --------------------------------------------

  getScale(r: Resolved, namespace: string, name: string): JsonObject {
    const obj = this.store.get(r.type.key, r.type.namespaced ? namespace : '', name);
    if (!obj) throw notFound(groupResource(r.type), name);
    return this.scaleOf(r, obj);
  }

  /** Changes the replicas of an object through its Scale (`change` turns the current Scale into the wanted one). */
  updateScale(
    r: Resolved,
    namespace: string,
    name: string,
    change: (scale: JsonObject) => JsonValue,
    opts: WriteOptions & { userAgent?: string },
  ): WriteResult {
    const info = r.version.scale;
    const ns = r.type.namespaced ? namespace : '';
    const old = this.store.get(r.type.key, ns, name);
    if (!info) throw notFound(groupResource(r.type), name);
    if (!old) throw notFound(groupResource(r.type), name);
    const wanted = withName(name, () => change(this.scaleOf(r, old)));
    if (!isJsonObject(wanted)) throw badRequest('the body of a scale request must be a Scale object');
    const replicas = isJsonObject(wanted.spec) ? wanted.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid('autoscaling', 'Scale', name, [fieldInvalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0')]);
    }
    const wantedMeta = isJsonObject(wanted.metadata) ? wanted.metadata : {};
    const uid = bodyUid(wantedMeta);
    if (uid !== undefined && uid !== uidOf(old))
      throw uidPreconditionFailed(groupResource(r.type), name, storageKey(r.type, ns, name), uid, uidOf(old));
    const rv = wantedMeta.resourceVersion;
    if (typeof rv === 'string' && rv !== '' && rv !== resourceVersionOf(old))
      throw conflict(groupResource(r.type), name, MODIFIED_CONFLICT);
    const obj = deepClone(old);
    setPath(obj, info.specReplicasPath, replicas);
    const result = this.commitUpdate(r, old, obj, { manager: this.managerOf(opts), dryRun: opts.dryRun ?? false, subresource: 'scale' });
    return { status: 200, body: this.scaleOf(r, result) };
  }

  private scaleOf(r: Resolved, obj: JsonObject): JsonObject {
    const info = r.version.scale;
    if (!info) throw notFound(groupResource(r.type), nameOf(obj));
    const meta = readMeta(obj);
    const metadata: JsonObject = {};
    for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp'])
      if (meta[key] !== undefined) metadata[key] = meta[key] as JsonValue;
    const spec = getPath(obj, info.specReplicasPath);
    const current = getPath(obj, info.statusReplicasPath);
    const status: JsonObject = { replicas: typeof current === 'number' ? current : 0 };
    const sel = info.labelSelectorPath ? getPath(obj, info.labelSelectorPath) : undefined;
    if (typeof sel === 'string') status.selector = sel;
    else if (isJsonObject(sel)) {
      try {
        status.selector = formatLabelSelector(labelSelectorFromObject(sel));
      } catch {
        // an invalid selector is shown as none
      }
    }
    return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: typeof spec === 'number' ? spec : 0 }, status };
  }

  // ---- binding subresource (pods/binding) ---------------------------------------------------

  /** Assigns a Pod to a Node as a v1 Binding asks (binding.ts); `now` stamps PodScheduled (default: this server's time). */
  bind(namespace: string, name: string, binding: JsonValue, opts: WriteOptions & { userAgent?: string; now?: string }): JsonObject {
    const node = bindingTarget(binding, namespace, name);
    const r = this.resolveKey(PODS_KEY);
    const old = this.store.get(PODS_KEY, namespace, name);
    if (!r || !old) throw notFound({ group: '', plural: 'pods' }, name);
    const pod = boundPod(old, node, binding, opts.now ?? timestamp(this.now()));
    return this.commitUpdate(r, old, pod, { manager: this.managerOf(opts), dryRun: opts.dryRun ?? false, subresource: 'binding' });
  }

  // ---- delete -----------------------------------------------------------------------------

  delete(r: Resolved, namespace: string, name: string, opts: DeleteOptions): WriteResult {
    const type = r.type;
    const gr = groupResource(type);
    const ns = type.namespaced ? namespace : '';
    const old = this.store.get(type.key, ns, name);
    if (!old) throw notFound(gr, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== uidOf(old)) throw deletePreconditionFailed(type.group, type.kind, name, 'UID', pre.uid, uidOf(old));
    if (pre?.resourceVersion && pre.resourceVersion !== resourceVersionOf(old)) {
      throw deletePreconditionFailed(type.group, type.kind, name, 'ResourceVersion', pre.resourceVersion, resourceVersionOf(old));
    }
    if (type.key === '/namespaces' && ['default', 'kube-system', 'kube-public'].includes(name)) {
      throw forbidden(gr, name, 'this namespace may not be deleted');
    }
    const dryRun = opts.dryRun ?? false;
    const obj = deepClone(old);
    const meta = metaOf(obj);
    const firstMark = !isBeingDeleted(old);
    if (firstMark) type.strategy.prepareForDelete?.(obj, this.strategyContext());
    // The garbage collector's finalizers follow the policy of the latest delete (deletionFinalizersForGarbageCollection).
    const current = finalizersOf(obj);
    const policy = opts.propagationPolicy;
    const orphan = policy ? policy === 'Orphan' : current.includes(ORPHAN_FINALIZER);
    const foreground = policy ? policy === 'Foreground' : current.includes(FOREGROUND_FINALIZER);
    const objFinalizers = [
      ...current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
      ...(orphan ? [ORPHAN_FINALIZER] : []),
      ...(foreground ? [FOREGROUND_FINALIZER] : []),
    ];
    const grace = type.strategy.gracePeriod?.(old, opts.gracePeriodSeconds) ?? 0;
    const pending = objFinalizers.length > 0 || grace > 0 || (type.strategy.blocksDeletion?.(obj) ?? false);
    if (!pending) {
      if (dryRun) return { status: 200, body: this.deletedBody(r, old) };
      const last = this.store.remove(type.key, ns, name) ?? old;
      return { status: 200, body: this.deletedBody(r, last) };
    }
    if (objFinalizers.length) meta.finalizers = objFinalizers;
    else delete meta.finalizers;
    if (firstMark) {
      meta.deletionTimestamp = timestamp(new Date(this.now().getTime() + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
      if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
    } else if (grace < Number(meta.deletionGracePeriodSeconds ?? 0)) {
      // A shorter grace period shortens a graceful deletion under way.
      meta.deletionTimestamp = timestamp(new Date(this.now().getTime() + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
    }
    if (deepEqual(obj, old) || dryRun) return { status: 200, body: present(dryRun ? obj : old, r.apiVersion, versionSchema(r)) };
    const stored = this.store.replace(type.key, this.toStorage(type, obj));
    return { status: 200, body: present(stored, r.apiVersion, versionSchema(r)) };
  }

  private deletedBody(r: Resolved, last: JsonObject): JsonObject {
    if (r.type.returnDeletedObject) return present(last, r.apiVersion, versionSchema(r));
    const details: JsonObject = { name: nameOf(last), kind: r.type.plural, uid: uidOf(last) };
    if (r.type.group) details.group = r.type.group;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
  }

  /**
   * Deletes the matching objects one after another, as the real store's DeleteCollection; `admit`
   * (admission of each item's DELETE) refuses by throwing, which ends the collection there: the
   * items before it are deleted, the refused one and the rest stay, and the refusal is the answer.
   */
  async deleteCollection(
    r: Resolved,
    namespace: string | undefined,
    query: ListQuery,
    opts: DeleteOptions,
    admit?: (item: JsonObject) => Promise<void>,
  ): Promise<JsonObject> {
    const filter = this.compileFilter(r, query);
    const items = this.store.list(r.type.key, r.type.namespaced ? namespace : undefined).filter((o) => filter.matches(o));
    const deleted: JsonObject[] = [];
    for (const listed of items) {
      const item = admit ? await this.admittedItem(r, listed, admit) : listed;
      if (!item) continue;
      try {
        const res = this.delete(r, namespaceOf(item), nameOf(item), { dryRun: opts.dryRun, propagationPolicy: opts.propagationPolicy });
        deleted.push(res.body.kind === 'Status' ? present(item, r.apiVersion, versionSchema(r)) : res.body);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return {
      kind: r.type.listKind,
      apiVersion: r.apiVersion,
      metadata: { resourceVersion: String(this.store.resourceVersion) },
      items: deleted,
    };
  }

  /**
   * The item of a collection as admission allowed it, undefined when gone. Admission answers over
   * the network: an item changed or replaced meanwhile is admitted again, as the real store runs a
   * delete's validation again when the object changed under it, so only what admission saw goes.
   */
  private async admittedItem(r: Resolved, listed: JsonObject, admit: (item: JsonObject) => Promise<void>): Promise<JsonObject | undefined> {
    const read = (): JsonObject | undefined => this.store.get(r.type.key, namespaceOf(listed), nameOf(listed));
    for (let attempt = 1, item = read(); item; attempt++) {
      await admit(present(item, r.apiVersion, versionSchema(r)));
      const now = read();
      if (!now || resourceVersionOf(now) === resourceVersionOf(item)) return now;
      if (attempt >= 3) throw conflict(groupResource(r.type), nameOf(item), MODIFIED_CONFLICT);
      item = now;
    }
    return undefined;
  }

  // ---- internal writes (controllers inside the server) -------------------------------------

  /** Resolves the storage version of a type by key. */
  resolveKey(key: string): Resolved | undefined {
    const type = this.registry.get(key);
    if (!type) return undefined;
    const version = type.versions.find((v) => v.name === type.storageVersion) ?? type.versions[0];
    return version ? { type, version, apiVersion: apiVersionOf(type.group, version.name) } : undefined;
  }

  /**
   * Changes a stored object as a controller would: `change` edits a copy (return false to skip).
   * Errors (the object is gone, validation) are returned, not thrown: controllers retry on events.
   */
  mutate(
    key: string,
    namespace: string,
    name: string,
    change: (obj: JsonObject) => boolean | void,
    opts: { subresource?: string; manager?: string } = {},
  ): JsonObject | undefined {
    const r = this.resolveKey(key);
    const old = this.store.get(key, namespace, name);
    if (!r || !old) return undefined;
    const copy = deepClone(old);
    if (change(copy) === false) return old;
    try {
      return this.commitUpdate(r, old, copy, { manager: opts.manager ?? SYSTEM_MANAGER, dryRun: false, subresource: opts.subresource });
    } catch (err) {
      if (err instanceof ApiError) return undefined;
      throw err;
    }
  }

  /** Deletes as a controller would; a missing object is not an error. */
  deleteInternal(key: string, namespace: string, name: string, policy: PropagationPolicy = 'Background', uid?: string): void {
    const r = this.resolveKey(key);
    if (!r) return;
    try {
      this.delete(r, namespace, name, { propagationPolicy: policy, preconditions: uid ? { uid } : undefined });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  /** Ends a graceful deletion (the kubelet's delete with grace period 0 once the pod has stopped). */
  forceDeleteInternal(key: string, namespace: string, name: string, uid: string): void {
    const r = this.resolveKey(key);
    if (!r) return;
    try {
      this.delete(r, namespace, name, { preconditions: { uid }, gracePeriodSeconds: 0 });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  /**
   * Creates an object as the server itself (default namespaces, the simulated controllers);
   * errors (a terminating namespace, a name taken) are returned as undefined, like mutate's.
   */
  createInternal(key: string, obj: JsonObject, manager = SYSTEM_MANAGER): JsonObject | undefined {
    const created = this.tryCreateInternal(key, obj, manager);
    return created instanceof ApiError ? undefined : created;
  }

  /** createInternal that hands back the refusal, for a controller that reports it (a FailedCreate Event). */
  tryCreateInternal(key: string, obj: JsonObject, manager = SYSTEM_MANAGER): JsonObject | ApiError | undefined {
    const r = this.resolveKey(key);
    if (!r) return undefined;
    try {
      return this.createObject(r, this.normalizeBody(r, obj), manager, false, undefined);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  private managerOf(opts: { fieldManager?: string; userAgent?: string }): string {
    if (opts.fieldManager) return opts.fieldManager;
    const product = opts.userAgent?.split('/')[0]?.trim();
    return product ? product.slice(0, 128) : 'unknown';
  }

  private setManagedFields(obj: JsonObject, entries: JsonValue[]): void {
    const meta = metaOf(obj);
    if (entries.length) meta.managedFields = entries;
    else delete meta.managedFields;
  }

  /** A private copy of a request body, checked against the resource and with apiVersion/kind filled in. */
  private normalizeBody(r: Resolved, body: JsonValue): JsonObject {
    if (!isJsonObject(body)) throw badRequest(`the body of the request must be a ${r.type.kind} object`);
    const obj = deepClone(body);
    if (obj.apiVersion !== undefined && obj.apiVersion !== r.apiVersion) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${r.apiVersion})`);
    }
    if (obj.kind !== undefined && obj.kind !== r.type.kind) {
      throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${r.type.kind})`);
    }
    obj.apiVersion = r.apiVersion;
    obj.kind = r.type.kind;
    if (obj.metadata !== undefined && obj.metadata !== null && !isJsonObject(obj.metadata)) {
      throw badRequest('metadata must be an object');
    }
    normalizeTimes(obj, !r.type.custom);
    return obj;
  }

  /** Stored objects carry the storage version's apiVersion (or the form of the group that stores them); custom resources only its fields. */
  private toStorage(type: ResourceType, obj: JsonObject): JsonObject {
    const storage = type.custom ? type.versions.find((v) => v.name === type.storageVersion) : undefined;
    return present(obj, type.storedAs ?? apiVersionOf(type.group, type.storageVersion), storage?.schema);
  }

  private checkNamespace(type: ResourceType, meta: JsonObject, namespace: string): void {
    if (!type.namespaced) {
      delete meta.namespace;
      return;
    }
    const given = meta.namespace;
    if (given !== undefined && given !== null && given !== '' && given !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  }

  private checkName(meta: JsonObject, name: string): void {
    const given = meta.name;
    if (given === undefined || given === null || given === '') {
      meta.name = name;
      return;
    }
    if (given !== name) throw badRequest(`the name of the object (${String(given)}) does not match the name on the URL (${name})`);
  }

  private requireLiveNamespace(type: ResourceType, namespace: string, name: string): void {
    const ns = this.store.get('/namespaces', '', namespace);
    if (!ns) throw notFound({ group: '', plural: 'namespaces' }, namespace);
    if (isBeingDeleted(ns)) {
      throw forbidden(groupResource(type), name, `unable to create new content in namespace ${namespace} because it is being terminated`, [
        { reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' },
      ]);
    }
  }

  private validateMeta(type: ResourceType, obj: JsonObject): StatusCause[] {
    const meta = readMeta(obj);
    const causes: StatusCause[] = [];
    const name = meta.name;
    if (typeof name === 'string' && name !== '') {
      for (const e of validateName(type.nameRule, name)) causes.push(fieldInvalid('metadata.name', name, e));
    }
    causes.push(...validateLabels(meta.labels, 'metadata.labels'));
    causes.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
    if (meta.finalizers !== undefined && meta.finalizers !== null && !Array.isArray(meta.finalizers)) {
      causes.push(fieldInvalid('metadata.finalizers', meta.finalizers, 'must be a list of strings'));
    }
    if (Array.isArray(meta.ownerReferences)) {
      meta.ownerReferences.forEach((ref, i) => {
        const at = `metadata.ownerReferences[${i}]`;
        if (!isJsonObject(ref)) {
          causes.push(fieldInvalid(at, ref, 'must be an object'));
          return;
        }
        for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
          if (typeof ref[f] !== 'string' || ref[f] === '') causes.push(fieldRequired(`${at}.${f}`, ''));
        }
      });
    }
    return causes;
  }
}

/** Runs a patch algorithm; its errors name the object, as the real server's do. */
function withName<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof ApiError && err.details && err.details.name === undefined) {
      throw new ApiError(err.code, err.reason, err.message, { ...err.details, name }, err.headers);
    }
    throw err;
  }
}

const TIME_WITH_FRACTION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+(Z|[+-]\d{2}:\d{2})$/;

/** A metav1.Time as the real server writes it (seconds); other strings are left alone. */
function secondsTime(v: JsonValue | undefined): JsonValue | undefined {
  if (typeof v !== 'string' || !TIME_WITH_FRACTION.test(v)) return v;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? v : timestamp(new Date(ms));
}

/**
 * The real server decodes metav1.Time fields and writes them back with second precision, so a
 * client that sends `2024-01-01T10:00:00.000Z` (client-node serializes Dates that way) reads back
 * `2024-01-01T10:00:00Z` and re-sending an unchanged object is a no-op. Done for metadata times
 * and, on built-ins, for status condition times (a CR's strings are kept as sent).
 */
function normalizeTimes(obj: JsonObject, builtIn: boolean): void {
  const meta = obj.metadata;
  if (isJsonObject(meta)) {
    for (const key of ['creationTimestamp', 'deletionTimestamp']) if (meta[key] !== undefined) meta[key] = secondsTime(meta[key]) ?? null;
    if (Array.isArray(meta.managedFields)) {
      for (const e of meta.managedFields) if (isJsonObject(e) && e.time !== undefined) e.time = secondsTime(e.time) ?? null;
    }
  }
  if (!builtIn || !isJsonObject(obj.status) || !Array.isArray(obj.status.conditions)) return;
  for (const c of obj.status.conditions) {
    if (!isJsonObject(c)) continue;
    for (const key of ['lastTransitionTime', 'lastUpdateTime', 'lastProbeTime', 'lastHeartbeatTime']) {
      if (c[key] !== undefined) c[key] = secondsTime(c[key]) ?? null;
    }
  }
}

/** How the real server's decoder prefixes its errors for a typed kind. */
function decoderPrefix(r: Resolved): string {
  return `${r.type.kind} in version "${r.version.name}" cannot be handled as a ${r.type.kind}: `;
}
