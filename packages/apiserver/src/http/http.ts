/**
 * HTTP plumbing: request paths to Kubernetes request info (like the real server's
 * RequestInfoFactory), body reading with the 3 MiB limit, and JSON responses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest, tooLarge } from '../base/errors.js';
import { parseDocument, visit, type Document } from 'yaml';
import type { JsonObject, JsonValue } from '../base/json.js';
import { setOwn } from '../base/json.js';

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

/**
 * The request target as Go's server reads it: a path that starts with `//` is a path, not a
 * protocol-relative URL (`new URL('//x/y', base)` would take `x` for a host, and `//?a` throws).
 */
export function requestUrl(target: string): URL {
  try {
    return target.startsWith('/') ? new URL(`http://apiserver${target}`) : new URL(target, 'http://apiserver');
  } catch {
    throw badRequest(`malformed request target ${JSON.stringify(target.slice(0, 200))}`);
  }
}

export function parsePath(pathname: string): PathInfo {
  let parts: string[];
  try {
    parts = pathname
      .split('/')
      .filter((p) => p !== '')
      .map((p) => decodeURIComponent(p));
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
    group = rest[0];
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
    if (tail.length > 2 && !NAMESPACE_SUBRESOURCES.has(tail[2])) {
      namespace = tail[1];
      tail = tail.slice(2);
    }
  }
  if (tail.length === 0 || tail.length > 3) return { kind: 'other' };
  const [resource, name, subresource] = tail as [string, string | undefined, string | undefined];
  return { kind: 'resource', request: { group, version: version, namespace, resource, name, subresource, watchPath } };
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
      // POST names an object only for subresources that create something (TokenRequest, Binding).
      return req.name === undefined || req.subresource === 'token' || req.subresource === 'binding' ? 'create' : undefined;
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

/** How long a request body may take to arrive, like the real server's 60 s request timeout. */
export const BODY_TIMEOUT_MS = 60_000;

/** The client went away before its request was read; nothing to answer, nothing to report. */
export class RequestAborted extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    why: string,
  ) {
    super(`${method} ${url}: client went away (${why})`);
    this.name = 'RequestAborted';
  }
}

/**
 * The whole body, at most MAX_BODY_BYTES (a larger one is read to the end, then refused with
 * 413), within `timeoutMs` (a slower one is refused with 408 and its connection closed).
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES, timeoutMs = BODY_TIMEOUT_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = declared > limit;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      settle(() =>
        reject(
          new ApiError(408, 'Timeout', `Timeout: the request body did not arrive within ${timeoutMs / 1000}s`, {}, { connection: 'close' }),
        ),
      );
      req.pause();
    }, timeoutMs);
    timer.unref();
    const aborted = (why: string) => settle(() => reject(new RequestAborted(req.method ?? '', req.url ?? '', why)));
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => settle(() => (over ? reject(tooLarge(limit)) : resolve(Buffer.concat(chunks)))));
    req.on('error', (err) => aborted(err.message));
    req.on('close', () => {
      if (!req.complete) aborted('connection closed');
    });
  });
}

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Nesting depth the server accepts in a body. Go's encoding/json (which the real server decodes
 * with) stops at 10000 levels; Node's default stack does not hold that (V8's own JSON.stringify
 * overflows between 3000 and 5000 levels, strategic merge and managed fields near 2000), so ours
 * stops at 1000, with the same message, and every step of a request stays clear of the limit.
 */
export const MAX_BODY_DEPTH = 1000;

/** Alias references a YAML document may resolve (the `yaml` package's default, stated here). */
export const MAX_YAML_ALIASES = 100;

/**
 * The deepest nesting of objects and arrays in JSON text, counted without recursion, or the
 * character that first went deeper than `limit`.
 */
export function jsonDepthOver(text: string, limit: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return text[i];
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** The nesting depth of a parsed value, walked without recursion. */
export function valueDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > max) max = d + 1;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

function tooDeep(char: string): ApiError {
  // Go's scanner error, as the real server reports it.
  return badRequest(
    `the request body could not be decoded as JSON: invalid character '${char}' exceeded max depth (limit ${MAX_BODY_DEPTH})`,
  );
}

function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}

/**
 * An alias inside the node its anchor names (`x: &x {a: *x}`) makes a cycle, which the copy to
 * JSON would follow for ever (memory grows until the process dies); Go's YAML refuses it. Aliases
 * can only name anchors before them, so a cycle always has an alias inside its own anchor's node.
 */
function refuseSelfContainingAnchors(doc: Document): void {
  visit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc);
      if (target !== undefined && path.includes(target)) throw new Error(`yaml: anchor '${node.source}' value contains itself`);
    },
  });
}

/**
 * YAML with the real server's defences: aliases are budgeted (an alias bomb is refused, not
 * expanded), the nesting is limited like JSON's, and only JSON values come out.
 */
export function loadYaml(text: string): JsonValue {
  let value: unknown;
  try {
    const doc = parseDocument(text, { merge: true, uniqueKeys: false, prettyErrors: false });
    const problem = doc.errors[0];
    if (problem) throw problem;
    refuseSelfContainingAnchors(doc);
    // Maps as Map, so that a key that is itself a map or a list is refused (below), not stringified.
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES, mapAsMap: true });
  } catch (err) {
    if (isStackOverflow(err))
      throw badRequest(`the request body could not be decoded as YAML: exceeded max depth (limit ${MAX_BODY_DEPTH})`);
    const message = (err as Error).message;
    if (/alias count|resource exhaustion/i.test(message)) {
      throw badRequest(
        `the request body could not be decoded as YAML: yaml: document contains excessive aliasing (more than ${MAX_YAML_ALIASES} alias references)`,
      );
    }
    throw badRequest(`the request body could not be decoded as YAML: ${message}`);
  }
  if (valueDepth(value) > MAX_BODY_DEPTH)
    throw badRequest(`the request body could not be decoded as YAML: exceeded max depth (limit ${MAX_BODY_DEPTH})`);
  return toJson(value);
}

/** Parses a JSON (or, for YAML media types, YAML) body; 400 names what could not be parsed. */
export function parseBody(raw: Buffer, contentType: string): JsonValue {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty; expected a JSON object');
  const deepChar = jsonDepthOver(text, MAX_BODY_DEPTH);
  let jsonErr: unknown;
  if (deepChar === undefined) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch (err) {
      jsonErr = err;
    }
  }
  if (!contentType.endsWith('yaml')) {
    if (deepChar !== undefined) throw tooDeep(deepChar);
    throw badRequest(`the request body could not be decoded as JSON: ${(jsonErr as Error).message}`);
  }
  return loadYaml(text);
}

/** A YAML map key as a JSON key: scalars as text (as the real server's YAML-to-JSON does), others refused. */
function yamlKey(k: unknown): string {
  if (k === null || k === undefined) return 'null';
  if (typeof k === 'object')
    throw badRequest(
      `the request body could not be decoded as YAML: invalid map key: a ${Array.isArray(k) ? 'sequence' : 'mapping'} (keys must be scalars)`,
    );
  return String(k);
}

/** A YAML value as JSON, without recursion (the depth is already bounded, but a stack is cheaper). */
function toJson(v: unknown): JsonValue {
  const convert = (x: unknown): JsonValue | undefined => {
    if (x === null || x === undefined) return null;
    if (typeof x === 'string' || typeof x === 'boolean') return x;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) throw badRequest(`the request body could not be decoded as YAML: ${x} is not a JSON number`);
      return x;
    }
    if (typeof x === 'bigint') return Number(x);
    if (x instanceof Date) return x.toISOString();
    if (typeof x === 'object') return undefined;
    throw badRequest(`the request body could not be decoded as YAML: unsupported value of type ${typeof x}`);
  };
  const root = convert(v);
  if (root !== undefined) return root;
  const rootOut: JsonValue = Array.isArray(v) ? [] : {};
  const stack: Array<[unknown, JsonObject | JsonValue[]]> = [[v, rootOut]];
  while (stack.length > 0) {
    const [from, to] = stack.pop() as [unknown, JsonObject | JsonValue[]];
    const entries: Array<[string, unknown]> =
      from instanceof Map
        ? [...from.entries()].map(([k, x]) => [yamlKey(k), x])
        : Array.isArray(from)
          ? from.map((x, i) => [String(i), x])
          : Object.entries(from as object);
    for (const [k, x] of entries) {
      let out = convert(x);
      if (out === undefined) {
        out = Array.isArray(x) ? [] : {};
        stack.push([x, out]);
      }
      if (Array.isArray(to)) to.push(out);
      else setOwn(to, k, out);
    }
  }
  return rootOut;
}

export function sendJson(res: ServerResponse, status: number, body: JsonValue, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-cache, private',
    ...headers,
  });
  // Node writes the header block in the body's encoding when both go out as one string: a header
  // carrying bytes as Latin-1 characters (a Warning's UTF-8) needs the body as bytes.
  res.end(Object.values(headers).some((value) => NON_ASCII.test(value)) ? Buffer.from(payload) : payload);
}

// eslint-disable-next-line no-control-regex -- ASCII is a range of control characters and text
const NON_ASCII = /[^\x00-\x7f]/;

export function sendError(res: ServerResponse, err: ApiError): void {
  sendJson(res, err.code, err.toStatus(), { ...err.headers });
}
