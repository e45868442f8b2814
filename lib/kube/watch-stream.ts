/** A watch opened on the API server and read line by line from the socket. */
import type { KubeConfig } from '@kubernetes/client-node';
// From their own modules: client-node's entry point loads the whole generated API.
import { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { shareConnections } from './connections.js';
import type { DirectConnection } from './direct.js';
import { KubeApiError } from './errors.js';
import { isRecord } from '../core/index.js';
import { lineSplitter, LineTooLongError, MAX_WATCH_LINE_BYTES } from './line-splitter.js';
import { parseBody } from './request.js';

export interface WatchStreamRequest {
  /** Absolute API path of the collection, e.g. '/api/v1/namespaces/default/configmaps'. */
  readonly path: string;
  /** Query parameters besides `watch=true` (resourceVersion, timeoutSeconds, selectors, ...). */
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  /** The connection is given up when no byte arrives for this long (also before the headers). */
  readonly inactivityTimeoutMs: number;
  /** The Accept header (default application/json): a metadata-only watch asks for `as=PartialObjectMetadata`. */
  readonly accept?: string | undefined;
  /** The User-Agent header (the client's, `KubeClient.userAgent`). */
  readonly userAgent?: string | undefined;
}

/**
 * Opens a watch and calls `onEvent` for each event line, with client-node's authentication and
 * the shared watch pool (`shareConnections`), or on a `DirectConnection` (its headers and watch
 * pool), but read straight from the socket: client-node's
 * `Watch` goes through fetch, web streams and readline for every line, which costs more CPU per
 * event than the informer's own work (bench:e2e profile).
 *
 * Resolves once the server answered (or failed) to a function that closes the stream.
 * `onClose` runs exactly once: without an error when the server ended the stream or the
 * returned function closed it; with the error otherwise (an error answer as KubeApiError; a
 * line that is not JSON, or longer than `maxLineBytes`, ends the stream with an error, so that the
 * watch resumes from the last resourceVersion instead of losing the event; so does an `onEvent`
 * that throws). Lines are split in linear time however many chunks a line comes in.
 */
export async function openWatchStream(
  target: KubeConfig | DirectConnection,
  request: WatchStreamRequest,
  onEvent: (type: string, object: unknown) => void,
  onClose: (error?: unknown) => void,
  maxLineBytes = MAX_WATCH_LINE_BYTES,
): Promise<() => void> {
  const server = 'pool' in target ? target.server : target.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('openWatchStream: the kubeconfig has no current cluster');
  const url = new URL(server.replace(/\/+$/, '') + request.path);
  url.searchParams.set('watch', 'true');
  for (const [key, value] of Object.entries(request.query)) if (value !== undefined) url.searchParams.set(key, String(value));
  const accept = request.accept ?? 'application/json';
  const { headers, dispatcher } =
    'pool' in target
      ? { headers: { ...target.headers(), Accept: accept }, dispatcher: target.pool.watches }
      : await authenticated(target, url, accept);
  if (request.userAgent !== undefined) headers['User-Agent'] = request.userAgent;

  const abort = new AbortController();
  let closed = false;
  const close = (error?: unknown): void => {
    if (closed) return;
    closed = true;
    abort.abort();
    onClose(error);
  };
  try {
    const answer = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers,
      signal: abort.signal,
      headersTimeout: request.inactivityTimeoutMs,
      bodyTimeout: request.inactivityTimeoutMs,
    });
    if (answer.statusCode !== 200) {
      const text = await answer.body.text();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (typeof value === 'string') headers[name] = value;
      close(
        new KubeApiError(answer.statusCode, parseBody(text, headers['content-type']), headers, { method: 'WATCH', path: request.path }),
      );
      return () => undefined;
    }
    const where = `watch of ${request.path}`;
    const splitter = lineSplitter((line) => {
      if (closed || line.trim() === '') return;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        // The line itself is not quoted: it may hold a Secret's data.
        close(new Error(`${where}: the server sent a line of ${Buffer.byteLength(line)} bytes that is not JSON`));
        return;
      }
      if (!isRecord(event)) {
        close(new Error(`${where}: the server sent a line that is no watch event (JSON, but not an object)`));
        return;
      }
      try {
        onEvent(typeof event['type'] === 'string' ? event['type'] : String(event['type']), event['object']);
      } catch (error) {
        // An event the caller cannot take ends this watch; it never escapes into the socket's handler.
        close(error);
      }
    }, maxLineBytes);
    answer.body.on('data', (chunk: Buffer) => {
      if (closed) return;
      try {
        splitter.push(chunk);
      } catch (error) {
        close(error instanceof LineTooLongError ? new LineTooLongError(`${where}: ${error.message}`) : error);
      }
    });
    answer.body.on('end', () => close());
    answer.body.on('error', (error: unknown) => close(abort.signal.aborted ? undefined : error));
  } catch (error) {
    close(abort.signal.aborted ? undefined : error);
  }
  return () => close();
}

/** client-node's authentication and the shared watch pool for a watch of `url`. */
async function authenticated(
  kubeConfig: KubeConfig,
  url: URL,
  accept: string,
): Promise<{ headers: Record<string, string>; dispatcher: Dispatcher }> {
  const ctx = new RequestContext(url.toString(), HttpMethod.GET);
  ctx.setHeaderParam('Accept', accept);
  await shareConnections(kubeConfig).applySecurityAuthentication(ctx);
  return { headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() ?? getGlobalDispatcher() };
}
