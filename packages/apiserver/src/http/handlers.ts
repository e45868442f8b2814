/**
 * Resource requests over HTTP: resolves the resource, applies injected faults, decodes query
 * parameters and bodies, calls the core and writes the answer (JSON, Table or a watch stream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiCore } from '../api/core.js';
import type { DeleteOptions, PropagationPolicy } from '../api/deletion.js';
import { compileRequestFilter } from '../api/filter.js';
import type { FieldValidation, WriteOptions } from '../api/write-path.js';
import { versionSchema } from '../api/present.js';
import type { PatchEngine, PatchKind } from '../patch/engine.js';
import {
  ApiError,
  badRequest,
  fieldForbidden,
  fieldNotSupported,
  invalid,
  invalidResourceVersion,
  methodNotAllowed,
  pathNotFound,
  resourceVersionTooLarge,
  unsupportedMediaType,
  type StatusCause,
} from '../base/errors.js';
import type { FaultInjector, RequestDescription } from './faults.js';
import type { RequestLog } from './request-log.js';
import type { ResourceRequest, Verb } from './http.js';
import { MAX_BODY_BYTES, mediaType, parseBody, readBody, sendJson, verbOf } from './http.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { resourceVersionOf } from '../base/meta.js';
import { decodeProtobufBody, PROTOBUF } from './protobuf.js';
import { isJsonObject } from '../base/json.js';
import type { Registry, Resolved } from '../api/registry.js';
import type { IncludeObject } from './table.js';
import { parseIncludeObject, toTable } from './table.js';
import { asPartialObjectMetadata, goTypeName, listInShape, mediaTarget, objectInShape } from './media-target.js';
import type { WatchHub, WatchSink, WatchStart } from '../api/watch.js';
import type { EventType } from '../storage/store.js';
import { warningHeaders } from './warnings.js';
import type { Attributes, Auth, UserInfo } from '../auth/index.js';
import {
  admittedDelete,
  admittedDeleteOfCurrent,
  admittedScale,
  admittedSubresourceCreate,
  admittedWrite,
  type AdmissionRequest,
  type AdmissionWebhooks,
  type ConversionPlan,
  type ConversionWebhooks,
  type Operation,
} from '../admission/index.js';

export interface HandlerContext {
  core: ApiCore;
  registry: Registry;
  hub: WatchHub;
  faults: FaultInjector;
  requests: RequestLog;
  /** Watches without timeoutSeconds end after this many seconds times [1, 2), like the real server's. */
  minRequestTimeoutSeconds: number;
  /** How long a request body may take to arrive (default BODY_TIMEOUT_MS). */
  bodyTimeoutMs?: number;
  /** Resource keys whose CRD is being deleted: creates are refused. */
  terminating: ReadonlySet<string>;
  /** Patches a JSON object (used for Scale objects, which are not stored). */
  patch: PatchEngine['patch'];
  /** RBAC, TokenRequest and the review kinds. */
  auth: Auth;
  /** The admission webhooks writes go through. */
  admission: AdmissionWebhooks;
  /** CRD conversion webhooks: requests in a version they convert read and write the storage version through them. */
  conversion: ConversionWebhooks;
}

/** What admission is told of a write: the operation, the resource, who asks and the options (as the real server's *Options). */
function admissionRequest(
  operation: Operation,
  resolved: Resolved,
  rr: ResourceRequest,
  user: UserInfo,
  opts: { dryRun?: boolean; fieldManager?: string; fieldValidation?: string },
  name = rr.name ?? '',
): AdmissionRequest {
  const kinds: Record<Operation, string> = {
    CREATE: 'CreateOptions',
    UPDATE: 'UpdateOptions',
    DELETE: 'DeleteOptions',
    CONNECT: 'ConnectOptions',
  };
  const options: JsonObject = { kind: kinds[operation], apiVersion: 'meta.k8s.io/v1' };
  if (opts.dryRun) options.dryRun = ['All'];
  if (opts.fieldManager) options.fieldManager = opts.fieldManager;
  if (opts.fieldValidation) options.fieldValidation = opts.fieldValidation;
  return {
    operation,
    resolved,
    subresource: rr.subresource ?? '',
    namespace: rr.namespace ?? '',
    name,
    dryRun: opts.dryRun ?? false,
    user,
    options,
  };
}

const PATCH_KINDS: Record<string, PatchKind> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

const BODY_TYPES = ['application/json', 'application/yaml', PROTOBUF];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun').filter((v) => v !== '');
  for (const v of values) if (v !== 'All') throw badRequest(`Invalid dryRun value: ${JSON.stringify(v)}: supported values: "All"`);
  return values.length > 0;
}

function fieldManagerOf(query: URLSearchParams): string | undefined {
  const m = query.get('fieldManager') ?? undefined;
  if (m !== undefined && m.length > 128) throw badRequest(`fieldManager: Too long: may not be longer than 128 characters, got ${m.length}`);
  return m || undefined;
}

function fieldValidationOf(query: URLSearchParams): FieldValidation | undefined {
  const v = query.get('fieldValidation');
  if (!v) return undefined;
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw badRequest(`fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
}

/** The options of a write request (warnings are collected for the Warning header). */
function writeOptions(
  req: IncomingMessage,
  query: URLSearchParams,
  subresource: string | undefined,
  admit?: WriteOptions['admit'],
): WriteOptions & { userAgent?: string; warnings: string[] } {
  return {
    admit,
    dryRun: dryRunOf(query),
    fieldManager: fieldManagerOf(query),
    fieldValidation: fieldValidationOf(query),
    subresource,
    userAgent: req.headers['user-agent'],
    warnings: [],
  };
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name}: invalid value ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}

const MAX_UINT64 = 2n ** 64n - 1n;

/** A resourceVersion query parameter: empty, or an unsigned integer (400 otherwise). */
function resourceVersionParam(query: URLSearchParams): string {
  const text = query.get('resourceVersion') ?? '';
  if (text !== '' && !/^\d+$/.test(text)) throw invalidResourceVersion(text);
  // Go parses it as a uint64: past that it is out of range, not a version to wait for.
  if (text.length >= 20 && BigInt(text) > MAX_UINT64) throw invalidResourceVersion(text, 'value out of range');
  return text;
}

/**
 * resourceVersionMatch, checked as the real server's ValidateListOptions checks it (422 on
 * ListOptions): a known value, only with a resourceVersion, Exact not for "0", none with continue.
 */
function listResourceVersionMatch(query: URLSearchParams, rv: string): 'Exact' | 'NotOlderThan' | undefined {
  const match = query.get('resourceVersionMatch') ?? '';
  if (match === '') return undefined;
  const listOptionsInvalid = (cause: StatusCause): ApiError => invalid('meta.k8s.io', 'ListOptions', '', [cause]);
  if (match !== 'Exact' && match !== 'NotOlderThan')
    throw listOptionsInvalid(fieldNotSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
  if (rv === '')
    throw listOptionsInvalid(
      fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
    );
  if ((query.get('continue') ?? '') !== '')
    throw listOptionsInvalid(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  if (match === 'Exact' && rv === '0')
    throw listOptionsInvalid(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  return match;
}

/**
 * A watch's sendInitialEvents and resourceVersionMatch, checked as the real server's
 * validateWatchOptions checks them (one 422 on ListOptions naming every cause): a streaming list
 * asks for NotOlderThan and bookmarks; a resourceVersionMatch on a watch only with
 * sendInitialEvents, only NotOlderThan, never with continue.
 */
function checkWatchListOptions(query: URLSearchParams, bookmarks: boolean): void {
  const sendInitialEvents = query.get('sendInitialEvents');
  const match = query.get('resourceVersionMatch') ?? '';
  const causes: StatusCause[] = [];
  if (sendInitialEvents !== null) {
    if (match !== 'NotOlderThan')
      causes.push(fieldForbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (!bookmarks) causes.push(fieldForbidden('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'));
  }
  if (match !== '') {
    if (sendInitialEvents === null)
      causes.push(
        fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      );
    if (match !== 'NotOlderThan') causes.push(fieldNotSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if ((query.get('continue') ?? '') !== '')
      causes.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  if (causes.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', causes);
}

/** Node's timers fire at once past 2^31-1 ms (24.8 days); longer watch timeouts are cut to that. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long the real server's watch cache waits for a resourceVersion it has not reached. */
const FRESHNESS_WAIT_MS = 3000;

async function waitForResourceVersion(hub: WatchHub, rv: number, closed: () => boolean): Promise<boolean> {
  const deadline = Date.now() + FRESHNESS_WAIT_MS;
  while (hub.resourceVersion < rv) {
    if (Date.now() >= deadline || closed()) return false;
    await sleep(20);
  }
  return true;
}

function policyOf(v: JsonValue | string | undefined | null): PropagationPolicy | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (v === 'Background' || v === 'Foreground' || v === 'Orphan') return v;
  throw badRequest(`propagationPolicy: Unsupported value: ${JSON.stringify(v)}: supported values: "Background", "Foreground", "Orphan"`);
}

async function bodyOf(req: IncomingMessage, ctx: HandlerContext, allowed: string[]): Promise<{ value: JsonValue; type: string }> {
  const raw = await readBody(req, MAX_BODY_BYTES, ctx.bodyTimeoutMs);
  const type = mediaType(req.headers['content-type']) || 'application/json';
  if (!allowed.includes(type)) throw unsupportedMediaType(type, allowed);
  if (type === PROTOBUF) return { value: decodeProtobufBody(raw), type };
  return { value: parseBody(raw, type), type };
}

async function deleteOptionsOf(req: IncomingMessage, query: URLSearchParams, ctx: HandlerContext): Promise<DeleteOptions> {
  const raw = await readBody(req, MAX_BODY_BYTES, ctx.bodyTimeoutMs);
  let body: JsonObject = {};
  if (raw.length > 0 && raw.toString('utf8').trim() !== '') {
    const parsed = parseBody(raw, mediaType(req.headers['content-type']) || 'application/json');
    if (!isJsonObject(parsed)) throw badRequest('the body of a delete request must be a DeleteOptions object');
    body = parsed;
  }
  const dryRunBody = Array.isArray(body.dryRun) && body.dryRun.length > 0;
  if (dryRunBody && !(body.dryRun as JsonValue[]).every((v) => v === 'All'))
    throw badRequest('Invalid dryRun value: supported values: "All"');
  let policy = policyOf(body.propagationPolicy) ?? policyOf(query.get('propagationPolicy'));
  const orphan = body.orphanDependents ?? (query.has('orphanDependents') ? query.get('orphanDependents') === 'true' : undefined);
  if (policy === undefined && typeof orphan === 'boolean') policy = orphan ? 'Orphan' : 'Background';
  const pre = isJsonObject(body.preconditions) ? body.preconditions : {};
  const grace = body.gracePeriodSeconds ?? (query.has('gracePeriodSeconds') ? Number(query.get('gracePeriodSeconds')) : undefined);
  if (grace !== undefined && grace !== null && !(typeof grace === 'number' && Number.isInteger(grace))) {
    throw badRequest(`gracePeriodSeconds: must be an integer, got ${JSON.stringify(grace)}`);
  }
  return {
    dryRun: dryRunBody || dryRunOf(query),
    propagationPolicy: policy,
    gracePeriodSeconds: typeof grace === 'number' ? Math.max(0, grace) : undefined,
    preconditions: {
      uid: typeof pre.uid === 'string' ? pre.uid : undefined,
      resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
    },
  };
}

export async function handleResource(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  rr: ResourceRequest,
  ctx: HandlerContext,
  user: UserInfo,
): Promise<void> {
  const query = url.searchParams;
  const verb = verbOf(req.method ?? 'GET', rr, query);
  // Like the real server: authorized from the path alone, before anything is looked up. A refused
  // request is logged too (as the path names it), so a test can list the 403s a client met.
  if (verb) {
    try {
      ctx.auth.authorize(user, authorizationAttributes(rr, verb, query));
    } catch (err) {
      ctx.requests.record(describeRequest(req, url, rr, verb, rr));
      throw err;
    }
  }
  const resolved = ctx.registry.resolve(rr.group, rr.version, rr.resource);
  if (!resolved) throw pathNotFound();
  const { type } = resolved;
  if (!verb) throw methodNotAllowed();
  if (rr.subresource === undefined && type.verbs !== undefined && !type.verbs.includes(verb) && !ctx.auth.answers(type))
    throw methodNotAllowed();
  if (type.namespaced && rr.namespace === undefined && !['list', 'watch'].includes(verb)) {
    // Across namespaces the real server routes list and watch only: another method there is 405, a name under it no path.
    throw rr.name === undefined ? methodNotAllowed() : pathNotFound();
  }
  if (!type.namespaced && rr.namespace !== undefined) throw pathNotFound();
  if (rr.subresource !== undefined) {
    const statusOk = rr.subresource === 'status' && resolved.version.statusSubresource && ['get', 'update', 'patch'].includes(verb);
    const finalizeOk = rr.subresource === 'finalize' && (type.extraSubresources ?? []).includes('finalize') && verb === 'update';
    const scaleOk = rr.subresource === 'scale' && resolved.version.scale !== undefined && ['get', 'update', 'patch'].includes(verb);
    const createOk =
      (rr.subresource === 'token' || rr.subresource === 'binding') &&
      (type.extraSubresources ?? []).includes(rr.subresource) &&
      verb === 'create';
    if (!statusOk && !finalizeOk && !scaleOk && !createOk) throw pathNotFound();
  }
  const namespace = rr.namespace ?? '';
  const writes = verb === 'create' || verb === 'update' || verb === 'patch';
  const admit = writes ? ctx.auth.writeCheck(user, { group: type.group, resource: type.plural, namespace, name: rr.name }) : undefined;

  const request = describeRequest(req, url, rr, verb, { group: type.group, resource: type.plural });
  ctx.requests.record(request);
  // A PATCH or PUT that creates is authorized as create too; a refused one is logged as the create it asked for.
  const authorizeCreate =
    verb === 'update' || verb === 'patch'
      ? () => {
          try {
            ctx.auth.authorize(user, { ...authorizationAttributes(rr, verb, query), verb: 'create' });
          } catch (err) {
            ctx.requests.record({ ...request, verb: 'create' });
            throw err;
          }
        }
      : undefined;
  const outcome = ctx.faults.evaluate(request);
  if (outcome.delayMs > 0) await sleep(outcome.delayMs);
  if (outcome.error) {
    if (verb === 'watch' && outcome.error.code === 410) {
      startStream(res);
      res.end(JSON.stringify({ type: 'ERROR', object: outcome.error.toStatus() }) + '\n');
      return;
    }
    throw outcome.error;
  }

  const accept = req.headers.accept;
  const conversion = ctx.conversion.plan(resolved);
  if (ctx.auth.answers(type)) {
    if (verb !== 'create') throw methodNotAllowed();
    const { value } = await bodyOf(req, ctx, BODY_TYPES);
    sendJson(res, 201, ctx.auth.review(type, namespace, value, user));
    return;
  }
  if (rr.subresource === 'token') {
    const { value } = await bodyOf(req, ctx, BODY_TYPES);
    const opts = writeOptions(req, query, 'token');
    const token = await admittedSubresourceCreate(
      ctx.admission,
      admissionRequest('CREATE', resolved, rr, user, opts),
      value,
      (body) => ctx.auth.requestToken(namespace, rr.name as string, body),
      opts.warnings,
    );
    sendJson(res, 201, token, warningHeaders(opts.warnings));
    return;
  }
  if (rr.subresource === 'binding') {
    const { value } = await bodyOf(req, ctx, BODY_TYPES);
    const opts = writeOptions(req, query, 'binding');
    await admittedSubresourceCreate(
      ctx.admission,
      admissionRequest('CREATE', resolved, rr, user, opts),
      value,
      (body) => ctx.core.subresources.bind(namespace, rr.name as string, body, opts),
      opts.warnings,
    );
    sendJson(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, warningHeaders(opts.warnings));
    return;
  }
  if (rr.subresource === 'scale') {
    await serveScale(req, res, query, rr, resolved, verb, ctx, user);
    return;
  }
  switch (verb) {
    case 'get': {
      const target = mediaTarget(accept);
      const obj = await fromStorage(conversion, ctx.core.verbs.get(conversion?.storage ?? resolved, namespace, rr.name as string));
      if (target?.kind === 'Table') {
        const listMeta = { resourceVersion: resourceVersionOf(obj) };
        sendJson(res, 200, toTable(type, resolved.version, [obj], listMeta, parseIncludeObject(query.get('includeObject'))));
      } else if (target) sendJson(res, 200, objectInShape(obj, target, goTypeName(type.kind, resolved.version.name, type.custom, false)));
      else sendJson(res, 200, obj);
      return;
    }
    case 'list': {
      const target = mediaTarget(accept);
      const rvText = resourceVersionParam(query);
      const match = listResourceVersionMatch(query, rvText);
      // A list from a resourceVersion the server has not reached waits for it, as the watch cache does.
      if (rvText !== '' && rvText !== '0' && !(await waitForResourceVersion(ctx.hub, Number(rvText), () => res.destroyed))) {
        throw resourceVersionTooLarge(Number(rvText), ctx.hub.resourceVersion);
      }
      const list = ctx.core.verbs.list(conversion?.storage ?? resolved, rr.namespace, {
        labelSelector: query.get('labelSelector') ?? undefined,
        fieldSelector: query.get('fieldSelector') ?? undefined,
        limit: intParam(query, 'limit'),
        continueToken: query.get('continue') ?? undefined,
        exactResourceVersion: match === 'Exact' ? Number(rvText) : undefined,
      });
      if (conversion) {
        list.items = await conversion.toRequest(list.items as JsonObject[]);
        list.apiVersion = resolved.apiVersion;
      }
      if (target?.kind === 'Table') {
        sendJson(
          res,
          200,
          toTable(
            type,
            resolved.version,
            list.items as JsonObject[],
            list.metadata as JsonObject,
            parseIncludeObject(query.get('includeObject')),
          ),
        );
      } else if (target)
        sendJson(
          res,
          200,
          listInShape(list, list.items as JsonObject[], target, goTypeName(type.kind, resolved.version.name, type.custom, true)),
        );
      else sendJson(res, 200, list);
      return;
    }
    case 'watch':
      await serveWatch(req, res, url, rr, conversion?.storage ?? resolved, ctx, conversion);
      return;
    case 'create': {
      if (ctx.terminating.has(type.key)) {
        throw new ApiError(405, 'MethodNotAllowed', `create not allowed while custom resource definition is terminating`, {});
      }
      const { value } = await bodyOf(req, ctx, BODY_TYPES);
      const opts = writeOptions(req, query, undefined, admit);
      const bodyName =
        isJsonObject(value) && isJsonObject(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : '';
      const request = admissionRequest('CREATE', resolved, rr, user, opts, bodyName);
      const stored =
        conversion && isJsonObject(value) ? (await conversion.toStorage([{ ...value, apiVersion: resolved.apiVersion }]))[0] : value;
      const result = await fromStorageResult(
        conversion,
        await admittedWrite(ctx.admission, request, opts, (o) =>
          ctx.core.verbs.create(conversion?.storage ?? resolved, namespace, stored, { ...opts, ...o }),
        ),
      );
      sendJson(res, result.status, result.body, warningHeaders(opts.warnings));
      return;
    }
    case 'update': {
      const { value } = await bodyOf(req, ctx, BODY_TYPES);
      const opts = { ...writeOptions(req, query, rr.subresource, admit), authorizeCreate };
      const request = admissionRequest('UPDATE', resolved, rr, user, opts);
      const stored =
        conversion && isJsonObject(value) ? (await conversion.toStorage([{ ...value, apiVersion: resolved.apiVersion }]))[0] : value;
      const result = await fromStorageResult(
        conversion,
        await admittedWrite(ctx.admission, request, opts, (o) =>
          ctx.core.verbs.update(conversion?.storage ?? resolved, namespace, rr.name as string, stored, { ...opts, ...o }),
        ),
      );
      sendJson(res, result.status, result.body, warningHeaders(opts.warnings));
      return;
    }
    case 'patch': {
      const contentType = mediaType(req.headers['content-type']);
      const kind = PATCH_KINDS[contentType];
      const raw = await readBody(req, MAX_BODY_BYTES, ctx.bodyTimeoutMs);
      if (!kind) throw unsupportedMediaType(contentType, Object.keys(PATCH_KINDS));
      const body = parseBody(raw, kind === 'apply' ? 'application/yaml' : 'application/json');
      const opts = {
        ...writeOptions(req, query, rr.subresource, admit),
        authorizeCreate,
        force: query.get('force') === 'true' ? true : undefined,
      };
      const request = admissionRequest('UPDATE', resolved, rr, user, opts);
      if (conversion) {
        const result = await patchThroughConversion(conversion, resolved, namespace, rr.name as string, kind, body, ctx, (o, updated) =>
          admittedWrite(ctx.admission, request, opts, (w) =>
            ctx.core.verbs.update(conversion.storage, namespace, rr.name as string, updated, { ...opts, ...o, ...w }),
          ),
        );
        sendJson(res, result.status, result.body, warningHeaders(opts.warnings));
        return;
      }
      const result = await admittedWrite(ctx.admission, request, opts, (o) =>
        ctx.core.verbs.patch(resolved, namespace, rr.name as string, kind, body, { ...opts, ...o }),
      );
      sendJson(res, result.status, result.body, warningHeaders(opts.warnings));
      return;
    }
    case 'delete': {
      const opts = await deleteOptionsOf(req, query, ctx);
      const request = admissionRequest('DELETE', resolved, rr, user, opts);
      const current = (): JsonObject | undefined =>
        ctx.core.store.get(type.key, type.namespaced ? namespace : '', rr.name as string) &&
        ctx.core.verbs.get(conversion?.storage ?? resolved, namespace, rr.name as string);
      const result = await fromStorageResult(
        conversion,
        await admittedDeleteOfCurrent(ctx.admission, request, current, () =>
          ctx.core.deletion.delete(conversion?.storage ?? resolved, namespace, rr.name as string, opts),
        ),
      );
      sendJson(res, result.status, result.body);
      return;
    }
    case 'deletecollection': {
      const opts = await deleteOptionsOf(req, query, ctx);
      // Each item is admitted as a DELETE with the item as oldObject and no name, as the real server's static attributes.
      const request = admissionRequest('DELETE', resolved, rr, user, opts, '');
      const list = await ctx.core.deletion.deleteCollection(
        resolved,
        rr.namespace,
        { labelSelector: query.get('labelSelector') ?? undefined, fieldSelector: query.get('fieldSelector') ?? undefined },
        opts,
        ctx.admission.mayApply(request) ? (item) => admittedDelete(ctx.admission, request, item, () => undefined) : undefined,
      );
      sendJson(res, 200, list);
      return;
    }
  }
}

/** An object read in the storage version, as the request's version has it. */
async function fromStorage(conversion: ConversionPlan | undefined, obj: JsonObject): Promise<JsonObject> {
  return conversion ? (await conversion.toRequest([obj]))[0] : obj;
}

/** A write's answer (an object, or a Status) in the request's version. */
async function fromStorageResult(
  conversion: ConversionPlan | undefined,
  result: { status: number; body: JsonObject },
): Promise<{ status: number; body: JsonObject }> {
  if (!conversion || result.body.kind === 'Status') return result;
  return { status: result.status, body: await fromStorage(conversion, result.body) };
}

/**
 * A patch of an object stored in another version: the stored object converted to the request's
 * version, patched there, converted back and written as an update from the resourceVersion read
 * (a conflict if it changed meanwhile, which clients retry). Server-side apply is not converted.
 */
async function patchThroughConversion(
  conversion: ConversionPlan,
  resolved: Resolved,
  namespace: string,
  name: string,
  kind: PatchKind,
  body: JsonValue,
  ctx: HandlerContext,
  update: (opts: WriteOptions, updated: JsonObject) => Promise<{ status: number; body: JsonObject }>,
): Promise<{ status: number; body: JsonObject }> {
  if (kind === 'apply' || kind === 'strategic')
    throw unsupportedMediaType(kind === 'apply' ? 'application/apply-patch+yaml' : 'application/strategic-merge-patch+json', [
      'application/json-patch+json',
      'application/merge-patch+json',
    ]);
  const stored = ctx.core.verbs.get(conversion.storage, namespace, name);
  const current = await fromStorage(conversion, stored);
  const patched = ctx.patch(kind, current, body, resolved.type);
  if (!isJsonObject(patched)) throw badRequest(`the patch must leave a ${resolved.type.kind} object`);
  const meta = isJsonObject(patched.metadata) ? patched.metadata : (patched.metadata = {});
  if (meta.resourceVersion === undefined || meta.resourceVersion === null || meta.resourceVersion === '')
    meta.resourceVersion = resourceVersionOf(stored);
  const [updated] = await conversion.toStorage([{ ...patched, apiVersion: resolved.apiVersion }]);
  return fromStorageResult(conversion, await update({}, updated));
}

/**
 * What a resource request asks, for RBAC (the real server's RequestInfo): a request for a
 * namespace object is in that namespace; a list or watch with the field selector
 * `metadata.name=x` is for the object x (so `resourceNames` rules allow an informer on one object).
 */
/** What the request log and the faults see of a resource request. */
function describeRequest(
  req: IncomingMessage,
  url: URL,
  rr: ResourceRequest,
  verb: Verb,
  resource: { group: string; resource: string },
): RequestDescription {
  return {
    verb,
    group: resource.group,
    resource: resource.resource,
    subresource: rr.subresource,
    namespace: rr.namespace,
    name: rr.name,
    path: url.pathname,
    userAgent: req.headers['user-agent'],
    ...(verb === 'watch' && url.searchParams.get('sendInitialEvents') === 'true' ? { streamsList: true } : {}),
  };
}

function authorizationAttributes(rr: ResourceRequest, verb: Verb, query: URLSearchParams): Attributes {
  const namespace = rr.group === '' && rr.resource === 'namespaces' && rr.name !== undefined ? rr.name : (rr.namespace ?? '');
  let name = rr.name;
  if (name === undefined && (verb === 'list' || verb === 'watch')) {
    const exact = (query.get('fieldSelector') ?? '').split(',').map((t) => /^\s*metadata\.name\s*==?\s*([^\s/%]+)\s*$/.exec(t)?.[1]);
    name = exact.find((n) => n !== undefined && n !== '.' && n !== '..');
  }
  return { kind: 'resource', verb, group: rr.group, resource: rr.resource, subresource: rr.subresource, namespace, name };
}

async function serveScale(
  req: IncomingMessage,
  res: ServerResponse,
  query: URLSearchParams,
  rr: ResourceRequest,
  resolved: Resolved,
  verb: Verb,
  ctx: HandlerContext,
  user: UserInfo,
): Promise<void> {
  const namespace = rr.namespace ?? '';
  const name = rr.name as string;
  const opts = writeOptions(req, query, 'scale');
  if (verb === 'get') {
    sendJson(res, 200, ctx.core.subresources.getScale(resolved, namespace, name));
    return;
  }
  let change: (scale: JsonObject) => JsonValue;
  if (verb === 'update') {
    const { value } = await bodyOf(req, ctx, ['application/json', 'application/yaml']);
    change = () => value;
  } else {
    const contentType = mediaType(req.headers['content-type']);
    const kind = PATCH_KINDS[contentType];
    const raw = await readBody(req, MAX_BODY_BYTES, ctx.bodyTimeoutMs);
    if (!kind || kind === 'apply')
      throw unsupportedMediaType(contentType, [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
      ]);
    const body = parseBody(raw, 'application/json');
    // A Scale has no lists, so a strategic merge patch of it is a merge patch.
    const patchKind = kind === 'strategic' ? 'merge' : kind;
    change = (scale) => ctx.patch(patchKind, scale, body, resolved.type);
  }
  const result = await admittedScale(
    ctx.admission,
    admissionRequest('UPDATE', resolved, rr, user, opts),
    () => ctx.core.subresources.getScale(resolved, namespace, name),
    change,
    (c, dryRun) => ctx.core.subresources.updateScale(resolved, namespace, name, c, { ...opts, dryRun }),
    opts.warnings,
  );
  sendJson(res, result.status, result.body, warningHeaders(opts.warnings));
}

/**
 * Where a watch starts, as the real server's watch cache decides it: sendInitialEvents=true
 * sends the current state then the end bookmark (whatever the resourceVersion, which only bounds
 * how old that state may be); sendInitialEvents=false never sends a state, starting now for an
 * empty or "0" version; without the parameter "" and "0" send the state (legacy watch).
 */
function watchStart(rvText: string, sendInitialEvents: string | null, current: number): WatchStart {
  if (sendInitialEvents === 'true') return { kind: 'initial', initialEventsEnd: true };
  const unset = rvText === '' || rvText === '0';
  if (sendInitialEvents === 'false') return { kind: 'from', rv: unset ? current : Number(rvText) };
  return unset ? { kind: 'initial', initialEventsEnd: false } : { kind: 'from', rv: Number(rvText) };
}

/**
 * A watch sink that converts each event's object from the storage version through the conversion
 * webhook before writing it, in order; a failed conversion ends the watch with an ERROR event.
 * What waits for conversion counts as the watcher's buffer (events and bytes), so the hub ends a
 * watcher whose webhook cannot keep up instead of queueing without bound.
 */
function convertingSink(res: ServerResponse, conversion: ConversionPlan): WatchSink {
  let chain = Promise.resolve();
  let stopped = false;
  let queuedBytes = 0;
  let queuedEvents = 0;
  const gone = (): boolean => stopped || res.destroyed || res.writableEnded;
  const convertLine = async (line: string): Promise<string> => {
    const event = JSON.parse(line) as JsonObject;
    const object = event.object;
    if (event.type === 'BOOKMARK' || event.type === 'ERROR' || !isJsonObject(object) || object.apiVersion !== conversion.storage.apiVersion)
      return line;
    return JSON.stringify({ ...event, object: (await conversion.toRequest([object]))[0] });
  };
  return {
    write: (chunk) => {
      const lines = chunk.split('\n').filter((l) => l !== '');
      queuedBytes += chunk.length;
      queuedEvents += lines.length;
      chain = chain.then(async () => {
        try {
          const out: string[] = [];
          for (const line of lines) {
            if (gone()) return;
            out.push(await convertLine(line));
          }
          if (!gone()) res.write(out.map((l) => `${l}\n`).join(''));
        } catch (err) {
          if (gone()) return;
          stopped = true;
          const status =
            err instanceof ApiError
              ? err.toStatus()
              : { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: String(err), code: 500 };
          res.end(JSON.stringify({ type: 'ERROR', object: status }) + '\n');
        } finally {
          queuedBytes -= chunk.length;
          queuedEvents -= lines.length;
        }
      });
    },
    end: () => {
      chain = chain.then(() => {
        if (!res.writableEnded) res.end();
      });
    },
    cut: () => {
      stopped = true;
      if (!res.writableEnded) res.end();
    },
    destroy: () => res.destroy(),
    get bufferedBytes() {
      return res.writableLength + queuedBytes;
    },
    get queuedEvents() {
      return queuedEvents;
    },
  };
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
}

async function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  rr: ResourceRequest,
  resolved: Resolved,
  ctx: HandlerContext,
  conversion?: ConversionPlan,
): Promise<void> {
  const query = url.searchParams;
  const rvText = resourceVersionParam(query);
  const bookmarks = query.get('allowWatchBookmarks') === 'true';
  checkWatchListOptions(query, bookmarks);
  const fieldSelectors = [query.get('fieldSelector') ?? '', rr.name !== undefined ? `metadata.name=${rr.name}` : ''].filter(Boolean);
  const filter = compileRequestFilter(resolved, {
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: fieldSelectors.join(',') || undefined,
  });
  const timeoutSeconds = intParam(query, 'timeoutSeconds');
  const timeoutMs =
    timeoutSeconds !== undefined && timeoutSeconds > 0
      ? Math.min(timeoutSeconds * 1000, MAX_TIMER_MS)
      : Math.floor(ctx.minRequestTimeoutSeconds * 1000 * (1 + Math.random()));
  let render: ((obj: JsonObject, type: EventType | 'BOOKMARK') => JsonObject) | undefined;
  const target = mediaTarget(req.headers.accept);
  if (target?.kind === 'PartialObjectMetadata') {
    // A metadata watch (client-go's metadata informer): every event's object, bookmarks included.
    render = (obj) => asPartialObjectMetadata(obj, target.apiVersion);
  } else if (target?.kind === 'Table') {
    const include: IncludeObject = parseIncludeObject(query.get('includeObject'));
    let first = true;
    render = (obj, type) => {
      if (type === 'BOOKMARK') return obj;
      const table = toTable(resolved.type, resolved.version, [obj], { resourceVersion: resourceVersionOf(obj) }, include, first);
      first = false;
      return table;
    };
  }
  const start = watchStart(rvText, query.get('sendInitialEvents'), ctx.hub.resourceVersion);
  // The version the stream must not be older than: a streaming list's too, so its closing
  // bookmark is never below the resourceVersion asked for (NotOlderThan).
  const atLeast = rvText === '' ? 0 : Number(rvText);
  if (atLeast > 0 && !(await waitForResourceVersion(ctx.hub, atLeast, () => res.destroyed))) {
    startStream(res);
    res.end(JSON.stringify({ type: 'ERROR', object: resourceVersionTooLarge(atLeast, ctx.hub.resourceVersion).toStatus() }) + '\n');
    return;
  }
  startStream(res);
  const sink: WatchSink = conversion
    ? convertingSink(res, conversion)
    : {
        write: (chunk) => {
          res.write(chunk);
        },
        end: () => res.end(),
        cut: () => res.end(),
        destroy: () => res.destroy(),
        get bufferedBytes() {
          return res.writableLength;
        },
        queuedEvents: 0,
      };
  try {
    const watch = ctx.hub.open(
      {
        type: resolved.type,
        apiVersion: resolved.apiVersion,
        schema: versionSchema(resolved),
        namespace: resolved.type.namespaced ? rr.namespace : undefined,
        filter,
        bookmarks,
        path: url.pathname,
        render,
        timeoutMs,
      },
      sink,
      start,
    );
    res.on('close', () => watch.close());
  } catch (err) {
    if (err instanceof ApiError) {
      res.end(JSON.stringify({ type: 'ERROR', object: err.toStatus() }) + '\n');
      return;
    }
    throw err;
  }
}
