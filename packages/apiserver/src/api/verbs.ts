/**
 * The verbs on one resource: get and list (paged through snapshots kept for `continue`, or as the
 * list was at a resourceVersion), create, update, and patch in each of its forms, server-side
 * apply included. Each write goes through the write path's object rules.
 */
import {
  badRequest,
  conflict,
  expired,
  fieldInvalid,
  invalid,
  notFound,
  uidPreconditionFailed,
  unsupportedMediaType,
} from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { metaOf, namespaceOf, readMeta, timestamp, uidOf } from '../base/meta.js';
import { compileRequestFilter, type ObjectFilter, type SelectorQuery } from './filter.js';
import { decodeContinue, encodeContinue, keyOf, LATEST, ListSnapshots } from './paging.js';
import type { PatchEngine, PatchKind } from './patch-port.js';
import { present, versionSchema } from './present.js';
import type { Resolved } from './registry.js';
import {
  bodyUid,
  groupResource,
  storageKey,
  withName,
  type CheckOptions,
  type WriteOptions,
  type WritePath,
  type WriteResult,
} from './write-path.js';

export interface ListQuery extends SelectorQuery {
  limit?: number;
  continueToken?: string;
  /** resourceVersionMatch=Exact: the list as it was at this resourceVersion (from the watch history). */
  exactResourceVersion?: number;
}

export class Verbs {
  private readonly snapshots: ListSnapshots;

  constructor(
    private readonly writes: WritePath,
    private readonly engine: PatchEngine,
    /** How long a list snapshot stays usable for `continue` (the real server's is etcd's compaction interval). */
    continueTtlMs: number,
  ) {
    this.snapshots = new ListSnapshots(continueTtlMs);
  }

  get(r: Resolved, namespace: string, name: string): JsonObject {
    const obj = this.writes.store.get(r.type.key, namespace, name);
    if (!obj) throw notFound(groupResource(r.type), name);
    return present(obj, r.apiVersion, versionSchema(r));
  }

  /** A list at one resourceVersion; `limit` pages through a snapshot kept for `continue`. */
  list(r: Resolved, namespace: string | undefined, query: ListQuery): JsonObject {
    const filter = compileRequestFilter(r, query);
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
        rv = this.writes.store.resourceVersion;
      } else {
        const snap = this.snapshots.resume(token, this.writes.store.compactedResourceVersion, scope);
        items = snap.items;
        rv = snap.rv;
        offset = token.offset;
        snapshotId = token.id;
      }
    } else if (query.exactResourceVersion !== undefined && query.exactResourceVersion < this.writes.store.resourceVersion) {
      rv = query.exactResourceVersion;
      items = this.matchingAt(r, namespace, rv).filter((o) => filter.matches(o));
    } else {
      items = this.matching(r, namespace, filter);
      rv = this.writes.store.resourceVersion;
    }
    const limit = query.limit && query.limit > 0 ? query.limit : undefined;
    const end = limit ? Math.min(items.length, offset + limit) : items.length;
    const page = items.slice(offset, end);
    const metadata: JsonObject = { resourceVersion: String(rv) };
    if (end < items.length) {
      if (!snapshotId) snapshotId = this.snapshots.keep(rv, items, scope);
      metadata.continue = encodeContinue({ id: snapshotId, rv, offset: end, after: keyOf(items[end - 1]) });
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
    const events = this.writes.store.eventsSince(r.type.key, rv);
    if (!events) throw expired(`The resourceVersion for the provided list is too old.`);
    const ns = r.type.namespaced ? namespace : undefined;
    const byKey = new Map(this.writes.store.list(r.type.key, ns).map((o) => [keyOf(o), o]));
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      if (ns !== undefined && namespaceOf(e.object) !== ns) continue;
      if (e.type === 'ADDED') byKey.delete(keyOf(e.object));
      else if (e.prev) byKey.set(keyOf(e.prev), e.prev);
    }
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  private matching(r: Resolved, namespace: string | undefined, filter: ObjectFilter): JsonObject[] {
    return this.writes.store.list(r.type.key, r.type.namespaced ? namespace : undefined).filter((o) => filter.matches(o));
  }

  create(r: Resolved, namespace: string, body: JsonValue, opts: WriteOptions & { userAgent?: string }): WriteResult {
    const obj = this.writes.normalizeBody(r, body);
    const meta = metaOf(obj);
    this.writes.checkNamespace(r.type, meta, namespace);
    if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '') {
      throw badRequest('resourceVersion should not be set on objects to be created');
    }
    const manager = this.writes.managerOf(opts);
    return { status: 201, body: this.writes.createObject(r, obj, manager, opts.dryRun ?? false, undefined, opts) };
  }

  update(r: Resolved, namespace: string, name: string, body: JsonValue, opts: WriteOptions & { userAgent?: string }): WriteResult {
    const type = r.type;
    const obj = this.writes.normalizeBody(r, body);
    const meta = metaOf(obj);
    this.writes.checkNamespace(type, meta, namespace);
    this.writes.checkName(meta, name);
    const old = this.writes.store.get(type.key, namespaceOf(obj), name);
    // The body's uid is a precondition (the real server's Preconditions() of an update): checked
    // before anything else, also when nothing exists under the name.
    const uid = bodyUid(meta);
    if (uid !== undefined && uid !== (old ? uidOf(old) : '')) {
      throw uidPreconditionFailed(groupResource(type), name, storageKey(type, namespaceOf(obj), name), uid, old ? uidOf(old) : '');
    }
    const manager = this.writes.managerOf(opts);
    if (!old) {
      if (type.allowCreateOnUpdate && !opts.subresource) {
        opts.authorizeCreate?.();
        delete meta.resourceVersion;
        return { status: 201, body: this.writes.createObject(r, obj, manager, opts.dryRun ?? false, undefined, opts) };
      }
      throw notFound(groupResource(type), name);
    }
    this.writes.checkResourceVersion(type, obj, old, true);
    const result = this.writes.commitUpdate(r, old, obj, { ...opts, manager, dryRun: opts.dryRun ?? false });
    return { status: 200, body: present(result, r.apiVersion, versionSchema(r)) };
  }

  patch(
    r: Resolved,
    namespace: string,
    name: string,
    kind: PatchKind,
    body: JsonValue,
    opts: WriteOptions & { force?: boolean; userAgent?: string },
  ): WriteResult {
    const type = r.type;
    const manager = this.writes.managerOf(opts);
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
    const old = this.writes.store.get(type.key, ns, name);
    if (!old) throw notFound(groupResource(type), name);
    const patched = withName(name, () => this.engine.patch(kind, present(old, r.apiVersion, versionSchema(r)), body, type));
    const obj = this.writes.normalizeBody(r, patched);
    const meta = metaOf(obj);
    this.writes.checkNamespace(type, meta, ns);
    this.writes.checkName(meta, name);
    this.writes.checkResourceVersion(type, obj, old, false);
    const result = this.writes.commitUpdate(r, old, obj, {
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
    const applied = this.writes.normalizeBody(r, body);
    const meta = metaOf(applied);
    const ns = type.namespaced ? namespace : '';
    this.writes.checkNamespace(type, meta, ns);
    this.writes.checkName(meta, name);
    // What an apply may own depends on where it goes: status only through /status.
    if (subresource === 'status') {
      for (const key of Object.keys(applied)) if (!['apiVersion', 'kind', 'metadata', 'status'].includes(key)) delete applied[key];
      applied.metadata = type.namespaced ? { name, namespace: ns } : { name };
    } else if (r.version.statusSubresource) {
      delete applied.status;
    }
    const old = this.writes.store.get(type.key, ns, name);
    const now = timestamp(this.writes.now());
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
      const obj = this.writes.normalizeBody(r, merged);
      const objMeta = metaOf(obj);
      objMeta.name = name;
      if (type.namespaced) objMeta.namespace = ns;
      delete objMeta.resourceVersion;
      return { status: 201, body: this.writes.createObject(r, obj, manager, dryRun, objMeta.managedFields, schemaOpts) };
    }
    this.writes.checkResourceVersion(type, applied, old, false);
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
    const obj = this.writes.normalizeBody(r, merged);
    const managedFields = readMeta(obj).managedFields;
    const result = this.writes.commitUpdate(r, old, obj, {
      manager,
      dryRun,
      subresource,
      managedFields: managedFields ?? [],
      ...schemaOpts,
    });
    return { status: 200, body: present(result, r.apiVersion, versionSchema(r)) };
  }
}
