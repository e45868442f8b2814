/**
 * The object rules every write goes through, whichever verb, subresource or controller asks: a
 * body checked and normalized, metadata validated, an object created (name, uid, generation,
 * defaults, schema, admission) and a change committed (the status split, server-owned metadata,
 * generation, managedFields, no-op writes, the end of a deletion whose last finalizer went away).
 */
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  fieldInvalid,
  fieldRequired,
  forbidden,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  type GroupResource,
  type StatusCause,
} from '../base/errors.js';
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
  resourceVersionOf,
  timestamp,
  uidOf,
} from '../base/meta.js';
import type { Store } from '../storage/store.js';
import type { PatchEngine } from './patch-port.js';
import { finalizersAddedWhileDeleting, keepServerOwnedMeta, nextGeneration, writtenPart } from './update.js';
import { builtinRuleCauses } from './builtin-rules.js';
import { builtinDefinitionName, decodeBuiltin } from './builtin-schema.js';
import { applyCrdSchema } from './crd-schema.js';
import type { Registry, Resolved, ResourceType, StrategyContext } from './registry.js';
import { apiVersionOf } from './registry.js';
import { present, versionSchema } from './present.js';
import { validateAnnotations, validateLabels, validateName } from './validation.js';

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
export type CheckOptions = Pick<WriteOptions, 'fieldValidation' | 'warnings' | 'admit' | 'authorizeCreate'>;

export interface WriteResult {
  status: number;
  body: JsonObject;
}

export function groupResource(type: ResourceType): GroupResource {
  return { group: type.group, plural: type.plural };
}

function stripVolatile(obj: JsonObject): JsonObject {
  const meta = readMeta(obj);
  const { resourceVersion: _rv, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/** Where etcd would keep the object (the real server's storage errors name it). */
export function storageKey(type: ResourceType, namespace: string, name: string): string {
  const prefix = type.custom ? `/registry/${type.group}/${type.plural}` : `/registry/${type.plural}`;
  return type.namespaced ? `${prefix}/${namespace}/${name}` : `${prefix}/${name}`;
}

/** The uid a write's body names, if any (an empty one names none). */
export function bodyUid(meta: JsonObject): string | undefined {
  return typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : undefined;
}

export class WritePath {
  private clusterIPSeq = 10;

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    private readonly engine: PatchEngine,
    /** The server's clock (the simulation's, when one runs): creation and deletion times. */
    readonly now: () => Date,
  ) {}

  strategyContext(): StrategyContext {
    return {
      now: timestamp(this.now()),
      allocateClusterIP: () => {
        const n = this.clusterIPSeq++;
        return `10.96.${(n >> 8) & 255}.${n & 255}`;
      },
    };
  }

  /** Resolves the storage version of a type by key. */
  resolveKey(key: string): Resolved | undefined {
    const type = this.registry.get(key);
    if (!type) return undefined;
    const version = type.versions.find((v) => v.name === type.storageVersion) ?? type.versions[0];
    return version ? { type, version, apiVersion: apiVersionOf(type.group, version.name) } : undefined;
  }

  /** Creates `obj` (already normalized, namespace set); `managedFields` given for server-side apply. */
  createObject(
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
      const { strategy } = r.type;
      if (strategy.pruneUnknownFields) this.reportUnknownFields(r, strategy.pruneUnknownFields(obj), opts);
      return builtinRuleCauses(r.type.group, r.type.kind, obj);
    }
    const outcome = applyCrdSchema(obj, r.version.schema, old && present(old, r.apiVersion, versionSchema(r)));
    this.reportUnknownFields(r, outcome.unknownFields, opts);
    return outcome.causes;
  }

  checkResourceVersion(type: ResourceType, obj: JsonObject, old: JsonObject, required: boolean): void {
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

  managerOf(opts: { fieldManager?: string; userAgent?: string }): string {
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
  normalizeBody(r: Resolved, body: JsonValue): JsonObject {
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
  toStorage(type: ResourceType, obj: JsonObject): JsonObject {
    const storage = type.custom ? type.versions.find((v) => v.name === type.storageVersion) : undefined;
    return present(obj, type.storedAs ?? apiVersionOf(type.group, type.storageVersion), storage?.schema);
  }

  checkNamespace(type: ResourceType, meta: JsonObject, namespace: string): void {
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

  checkName(meta: JsonObject, name: string): void {
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
export function withName<T>(name: string, run: () => T): T {
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
