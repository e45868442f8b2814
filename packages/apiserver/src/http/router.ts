/**
 * The request handler of the server: every request passes the same gates (a Host header, the
 * DNS-rebinding guard, authentication, the built-in schemas loaded), then resource paths go to
 * handlers.ts and the other paths to the table below. Errors become Status answers here, once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { debuglog } from 'node:util';
import { loadBuiltinSchemas } from '../api/builtin-schema.js';
import { ApiError, internalError, methodNotAllowed, pathNotFound } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import type { Registry } from '../api/registry.js';
import type { Auth } from '../auth/index.js';
import { checkHostPresent } from './client-errors.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.js';
import { handleResource, type HandlerContext } from './handlers.js';
import { parsePath, RequestAborted, requestUrl, sendError, sendJson, type PathInfo } from './http.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import type { OpenApiV2 } from './openapi-v2.js';

/** Aborted requests and the like, one line each, with NODE_DEBUG=rxkube-apiserver. */
const debug = debuglog('rxkube-apiserver');

export interface RouterContext {
  resources: HandlerContext;
  registry: Registry;
  auth: Auth;
  /** The DNS-rebinding guard (guards.ts): throws for a Host this server does not answer to. */
  guard: (method: string, headers: IncomingMessage['headers']) => void;
  openApiV2: OpenApiV2;
  /** Part of the OpenAPI v3 documents' hashes, per server, so clients do not mix two servers' caches. */
  hashPrefix: string;
  /** host:port as clients reach it (known once the server listens). */
  address: () => string;
}

type Discovery = Extract<PathInfo, { kind: 'discovery' }>;

/** The discovery document a path names (/api, /apis, /apis/g, /apis/g/v, /api/v1), or undefined. */
function discoveryDocument(info: Discovery, ctx: RouterContext): JsonObject | undefined {
  if (info.group === undefined) return info.legacy ? apiVersions(ctx.address()) : apiGroupList(ctx.registry);
  if (info.version === undefined) return apiGroup(ctx.registry, info.group);
  return apiResourceList(ctx.registry, info.group, info.version);
}

const OPENAPI_V3_GROUP = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/;

/** The non-resource paths a GET serves: the first route whose path matches answers. */
const ROUTES: readonly {
  readonly matches: (path: string) => boolean;
  readonly serve: (req: IncomingMessage, res: ServerResponse, path: string, ctx: RouterContext) => void | Promise<void>;
}[] = [
  { matches: (path) => path === '/version', serve: (_req, res) => sendJson(res, 200, versionInfo()) },
  {
    matches: (path) => path === '/healthz' || path === '/livez' || path === '/readyz',
    serve: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok');
    },
  },
  { matches: (path) => path === '/openapi/v2', serve: (req, res, _path, ctx) => ctx.openApiV2.serve(req, res) },
  {
    matches: (path) => path === '/openapi/v3',
    serve: (_req, res, _path, ctx) => sendJson(res, 200, openApiIndex(ctx.registry, ctx.hashPrefix)),
  },
  {
    matches: (path) => OPENAPI_V3_GROUP.test(path),
    serve: (_req, res, path, ctx) => {
      const gv = OPENAPI_V3_GROUP.exec(path) as RegExpExecArray;
      const [group, version] = gv[1] !== undefined ? ['', gv[1]] : [gv[2], gv[3]];
      const doc = openApiDocument(ctx.registry, group, version, (_t, v) => v.schema);
      if (!doc) throw pathNotFound();
      sendJson(res, 200, doc);
    },
  },
];

/** Answers one request; never throws (an error is the Status it answers, or a dropped connection). */
export function requestHandler(ctx: RouterContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      await route(req, res, ctx);
    } catch (err) {
      answerError(res, err);
    }
  };
}

async function route(req: IncomingMessage, res: ServerResponse, ctx: RouterContext): Promise<void> {
  checkHostPresent(req);
  ctx.guard(req.method ?? 'GET', req.headers);
  const user = ctx.auth.authenticate(req.headers);
  const url = requestUrl(req.url ?? '/');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const definitionsLoading = loadBuiltinSchemas();
  if (definitionsLoading) await definitionsLoading;
  const info = parsePath(path);
  if (info.kind === 'resource') return handleResource(req, res, url, info.request, ctx.resources, user);
  ctx.auth.authorize(user, { kind: 'path', verb: method.toLowerCase(), path: url.pathname });
  if (method !== 'GET' && method !== 'HEAD') {
    if (info.kind === 'discovery' || path === '/version') throw methodNotAllowed();
    throw pathNotFound();
  }
  if (info.kind === 'discovery') {
    const doc = discoveryDocument(info, ctx);
    if (!doc) throw pathNotFound();
    return sendJson(res, 200, doc);
  }
  const found = ROUTES.find((r) => r.matches(path));
  if (!found) throw pathNotFound();
  await found.serve(req, res, path, ctx);
}

function answerError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof RequestAborted) debug(err.message);
  else if (err instanceof ApiError) sendError(res, err);
  else {
    console.error('rxkube apiserver: request failed', err);
    sendError(res, internalError((err as Error).message ?? String(err)));
  }
}
