/**
 * HTTP plumbing: request paths to Kubernetes request info (like the real server's
 * RequestInfoFactory), body reading with the 3 MiB limit, and JSON responses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest, tooLarge } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';

/** The real server's limit on request bodies. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequest {
  group: string;
  version: string;
  /** The namespace from the path, if any. */
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** A legacy `/watch/` path. */
  watchPath: boolean;
}

export type PathInfo =
  | { kind: 'resource'; request: ResourceRequest }
  | { kind: 'discovery'; group?: string; version?: string; legacy: boolean }
  | { kind: 'other' };

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parsePath(pathname: string): PathInfo {
  let parts: string[];
  try {
    parts = pathname.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  } catch {
    return { kind: 'other' };
  }
  const [root, ...rest] = parts;
  let group: string;
  let version: string | undefined;
  let tail: string[];
  if (root === 'api') {
    if (rest.length === 0) return { kind: 'discovery', legacy: true };
    group = '';
    version = rest[0];
    tail = rest.slice(1);
    if (tail.length === 0) return { kind: 'discovery', group, version, legacy: true };
  } else if (root === 'apis') {
    if (rest.length === 0) return { kind: 'discovery', legacy: false };
    group = rest[0] as string;
    if (rest.length === 1) return { kind: 'discovery', group, legacy: false };
    version = rest[1];
    tail = rest.slice(2);
    if (tail.length === 0) return { kind: 'discovery', group, version, legacy: false };
  } else {
    return { kind: 'other' };
  }
  let watchPath = false;
  if (tail[0] === 'watch') {
    watchPath = true;
    tail = tail.slice(1);
  }
  let namespace: string | undefined;
  if (tail[0] === 'namespaces' && tail.length > 1) {
    if (tail.length > 2 && !NAMESPACE_SUBRESOURCES.has(tail[2] as string)) {
      namespace = tail[1];
      tail = tail.slice(2);
    }
  }
  if (tail.length === 0 || tail.length > 3) return { kind: 'other' };
  const [resource, name, subresource] = tail as [string, string | undefined, string | undefined];
  return { kind: 'resource', request: { group, version: version as string, namespace, resource, name, subresource, watchPath } };
}

export function verbOf(method: string, req: ResourceRequest, query: URLSearchParams): Verb | undefined {
  const watchParam = query.get('watch');
  const isWatch = req.watchPath || watchParam === 'true' || watchParam === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (isWatch) return 'watch';
      return req.name === undefined ? 'list' : 'get';
    case 'POST':
      return req.name === undefined ? 'create' : undefined;
    case 'PUT':
      return req.name === undefined ? undefined : 'update';
    case 'PATCH':
      return req.name === undefined ? undefined : 'patch';
    case 'DELETE':
      return req.name === undefined ? 'deletecollection' : 'delete';
    default:
      return undefined;
  }
}

/** The whole body, at most MAX_BODY_BYTES (a larger one is read to the end, then refused with 413). */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => (over ? reject(tooLarge(limit)) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
  });
}

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export type YamlLoader = (text: string) => unknown;

/** Parses a JSON (or, for YAML media types, YAML) body; 400 names what could not be parsed. */
export function parseBody(raw: Buffer, contentType: string, loadYaml: YamlLoader | undefined): JsonValue {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty; expected a JSON object');
  const yaml = contentType.endsWith('yaml');
  try {
    return JSON.parse(text) as JsonValue;
  } catch (jsonErr) {
    if (!yaml || !loadYaml) {
      throw badRequest(`the request body could not be decoded as JSON: ${(jsonErr as Error).message}`);
    }
  }
  try {
    return toJson(loadYaml(text));
  } catch (yamlErr) {
    if (yamlErr instanceof ApiError) throw yamlErr;
    throw badRequest(`the request body could not be decoded as YAML: ${(yamlErr as Error).message}`);
  }
}

function toJson(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object') {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = toJson(x);
    return out;
  }
  throw badRequest(`unsupported YAML value of type ${typeof v}`);
}

export function sendJson(res: ServerResponse, status: number, body: JsonValue, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-cache, private',
    ...headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  sendJson(res, err.code, err.toStatus(), { ...err.headers });
}
