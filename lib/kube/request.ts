/** One request to the API server, through client-node's authentication or a direct connection, answered as parsed JSON. */
import type { Configuration, KubeConfig, RequestContext } from '@kubernetes/client-node';
// From its own module: client-node's entry point loads the whole generated API.
import { ResponseContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { shareConnections } from './connections.js';
import type { DirectConnection } from './direct.js';
import { KubeApiError } from './errors.js';

export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: HttpVerb;
  /** Absolute API path, e.g. '/api/v1/namespaces/default/configmaps'. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Serialized as JSON. */
  body?: unknown;
  /** Content-Type of the body (default application/json). */
  contentType?: string;
  /** The Accept header (default application/json): e.g. a metadata-only list's `as=PartialObjectMetadataList`. */
  accept?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** Sends one request and resolves to the parsed JSON answer; rejects with KubeApiError on a non-2xx answer. */
export type RequestFn = (req: KubeRequest) => Promise<unknown>;

// makeApiClient hands the constructor the Configuration it builds from the KubeConfig: server URL,
// authentication (tokens, client certificates, exec plugins), TLS dispatcher and user agent.
class ConfigurationHolder {
  constructor(readonly configuration: Configuration) {}
}

/**
 * A request function on client-node's own request machinery (Configuration, RequestContext,
 * auth methods, middleware and its undici fetch): no TLS or auth handling of our own. Answers are
 * plain JSON as the server sent them (timestamps stay strings, as in client-node's Watch).
 * Every request made with `kc` from then on shares one connection pool per cluster identity
 * (see `shareConnections`).
 */
export function createRequestFn(kc: KubeConfig, userAgent?: string): RequestFn {
  const { configuration } = shareConnections(kc).makeApiClient(ConfigurationHolder);
  return (req) => send(configuration, req, userAgent);
}

/** A request function on a `DirectConnection`: the same answers and errors without client-node. */
export function createDirectRequestFn(connection: DirectConnection, userAgent?: string): RequestFn {
  // The server's URL may carry a path of its own (a proxy's prefix): every request path goes below it.
  const server = new URL(connection.server);
  const prefix = server.pathname.replace(/\/+$/, '');
  return async (req) => {
    const headers: Record<string, string> = { ...connection.headers(), Accept: req.accept ?? 'application/json' };
    if (userAgent !== undefined) headers['User-Agent'] = userAgent;
    if (req.body !== undefined) headers['Content-Type'] = req.contentType ?? 'application/json';
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const path = prefix + req.path + queryString(req.query);
    return answerOf(await dispatchTo(connection.pool.requests, server.origin, path, req.method, headers, body, req.signal), req);
  };
}

async function send(config: Configuration, req: KubeRequest, userAgent: string | undefined): Promise<unknown> {
  let ctx: RequestContext = config.baseServer.makeRequestContext(req.path, req.method);
  ctx.setHeaderParam('Accept', req.accept ?? 'application/json');
  for (const [key, value] of Object.entries(req.query ?? {})) {
    if (value !== undefined) ctx.setQueryParam(key, String(value));
  }
  if (req.body !== undefined) {
    ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
    ctx.setBody(JSON.stringify(req.body));
  }
  if (req.signal) ctx.setSignal(req.signal);
  const { BearerToken: bearer, default: auth } = config.authMethods;
  await bearer?.applySecurityAuthentication(ctx);
  await auth?.applySecurityAuthentication(ctx);
  for (const middleware of config.middleware) ctx = await middleware.pre(ctx).toPromise();
  // After client-node's middleware, which sets its own.
  if (userAgent !== undefined) ctx.setHeaderParam('User-Agent', userAgent);
  return answerOf(await afterMiddleware(config, await dispatch(ctx)), req);
}

function answerOf({ status, headers, text }: Answer, req: KubeRequest): unknown {
  const body = parseBody(text, headers['content-type']);
  if (status < 200 || status > 299) throw new KubeApiError(status, body, headers, { method: req.method, path: req.path });
  return body;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

/**
 * Sends the prepared request on its dispatcher (the shared pool) with undici's dispatch API.
 * client-node sends through WHATWG fetch, whose Request, Headers and web streams cost more CPU
 * per request than the rest of a reconciliation (bench:e2e profile); nothing of fetch's
 * semantics (redirects, CORS, caching) applies to API server calls.
 */
async function dispatch(ctx: RequestContext): Promise<Answer> {
  const body = ctx.getBody();
  const url = new URL(ctx.getUrl());
  return dispatchTo(
    ctx.getDispatcher() ?? getGlobalDispatcher(),
    url.origin,
    `${url.pathname}${url.search}`,
    ctx.getHttpMethod(),
    ctx.getHeaders(),
    typeof body === 'string' || Buffer.isBuffer(body) ? body : undefined,
    ctx.getSignal(),
  );
}

function dispatchTo(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  method: Dispatcher.HttpMethod,
  requestHeaders: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const collector = new AnswerCollector(resolve, reject, signal);
    try {
      dispatcher.dispatch({ origin, path, method, headers: requestHeaders, body }, collector);
    } catch (error) {
      collector.fail(error);
    }
  });
}

/**
 * Collects one answer from undici's dispatch API: the status, the headers and the body as text.
 * undici's `request()` wraps every answer in a Readable stream, an async resource and abort
 * listeners on top of this; an API server's JSON needs none of it, and what a request allocates
 * is what a busy controller's heap churns through (bench:e2e).
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private settled = false;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (signal) {
      this.onAbort = () => {
        const reason = abortReason(signal);
        this.controller?.abort(reason instanceof Error ? reason : new Error(String(reason)));
        this.fail(reason);
      };
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('request aborted'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // An informational answer (103 Early Hints, 100 Continue) comes before the answer itself.
    if (statusCode < 200) return;
    this.status = statusCode;
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined) this.headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.removeAbortListener();
    const { chunks } = this;
    this.chunks = [];
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
    this.resolve({ status: this.status, headers: this.headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(this.signal?.aborted ? abortReason(this.signal) : error);
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.removeAbortListener();
    this.chunks = [];
    this.reject(error);
  }

  private removeAbortListener(): void {
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** `?a=1&b=2` as URLSearchParams encodes it (client-node's encoding too), or '' without parameters. */
function queryString(query: KubeRequest['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const key in query) {
    const value = query[key];
    if (value !== undefined) params.set(key, String(value));
  }
  return params.size === 0 ? '' : `?${params.toString()}`;
}

/** What an aborted request rejects with: the signal's reason, as undici's `request()` does. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('request aborted');
}

/** The answer as client-node's response middleware (a user's, and its own) leaves it. */
async function afterMiddleware(config: Configuration, answer: Answer): Promise<Answer> {
  if (config.middleware.length === 0) return answer;
  let response = new ResponseContext(answer.status, answer.headers, {
    text: () => Promise.resolve(answer.text),
    binary: () => Promise.resolve(Buffer.from(answer.text)),
    stream: () => null,
  });
  for (const middleware of config.middleware) response = await middleware.post(response).toPromise();
  return { status: response.httpStatusCode, headers: response.headers, text: await response.body.text() };
}

/** JSON when it is JSON, else the text as it came (an error page, a proxy's message). */
export function parseBody(text: string, contentType: string | undefined): unknown {
  if (text.length === 0) return undefined;
  if (contentType?.includes('json') || /^\s*[{[]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
