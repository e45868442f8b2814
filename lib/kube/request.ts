import type { Configuration, KubeConfig, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { shareConnections } from './connections.js';
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
export function createRequestFn(kc: KubeConfig): RequestFn {
  const { configuration } = shareConnections(kc).makeApiClient(ConfigurationHolder);
  return (req) => send(configuration, req);
}

async function send(config: Configuration, req: KubeRequest): Promise<unknown> {
  let ctx: RequestContext = config.baseServer.makeRequestContext(req.path, req.method);
  ctx.setHeaderParam('Accept', 'application/json');
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
  let response: ResponseContext = await config.httpApi.send(ctx).toPromise();
  for (const middleware of config.middleware) response = await middleware.post(response).toPromise();

  const text = await response.body.text();
  const body = parseBody(text, response.headers['content-type']);
  if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
    throw new KubeApiError(response.httpStatusCode, body, response.headers, { method: req.method, path: req.path });
  }
  return body;
}

function parseBody(text: string, contentType: string | undefined): unknown {
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
