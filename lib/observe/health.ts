/** The health server: /healthz and /readyz from named checks, and checks made from observables. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import { requestPath } from '../core/index.js';

export interface HealthCheckResult {
  ok: boolean;
  /** Why it is not ok (or a detail when it is). */
  reason?: string;
}

/** One readiness (or liveness) condition, e.g. "caches synced" or "every watch healthy". */
export type HealthCheck = () => HealthCheckResult | Promise<HealthCheckResult>;

export interface HealthServerOptions {
  /** Default 8081; 0 picks a free port. */
  port?: number;
  /** Default '0.0.0.0' so kubelet probes reach it; use '127.0.0.1' to keep it local. */
  host?: string;
  /** Served on /metrics when given. */
  registry?: Registry;
  /** Readiness checks by name: /readyz is 200 only if every one is ok. */
  checks?: Record<string, HealthCheck>;
  /** Extra liveness checks by name for /healthz (default none: alive means the process answers). */
  liveness?: Record<string, HealthCheck>;
  /** A check that has not answered within this is failed (default 5000 ms). */
  checkTimeoutMs?: number;
}

export interface HealthServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/**
 * OB3: /healthz (alive), /readyz (every check passes), /metrics (the registry). Answers are
 * plain text, one `[+]name ok` / `[-]name failed: reason` line per check, like the API server's.
 */
export async function startHealthServer(options: HealthServerOptions = {}): Promise<HealthServer> {
  const port = options.port ?? 8081;
  const host = options.host ?? '0.0.0.0';
  const timeoutMs = options.checkTimeoutMs ?? 5000;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`startHealthServer: port must be an integer 0..65535 (got ${port})`);
  if (!(timeoutMs > 0)) throw new Error(`startHealthServer: checkTimeoutMs must be > 0 (got ${timeoutMs})`);
  for (const [group, checks] of [
    ['checks', options.checks],
    ['liveness', options.liveness],
  ] as const) {
    for (const [name, check] of Object.entries(checks ?? {})) {
      if (typeof check !== 'function') throw new Error(`startHealthServer: ${group}.${name} must be a function returning { ok, reason }`);
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = requestPath(req.url);
    if (path === undefined) return send(res, 400, 'malformed request target\n', { Connection: 'close' });
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    switch (path) {
      case '/healthz':
      case '/livez':
        return sendChecks(res, 'healthz', await runChecks(options.liveness ?? {}, timeoutMs));
      case '/readyz':
        return sendChecks(res, 'readyz', await runChecks(options.checks ?? {}, timeoutMs));
      case '/metrics':
        if (!options.registry) return send(res, 404, 'no metrics registry configured\n');
        return send(res, 200, await options.registry.metrics(), { 'Content-Type': options.registry.contentType });
      default:
        return send(res, 404, 'not found: try /healthz, /readyz or /metrics\n');
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`startHealthServer: cannot listen on ${host}:${port}: ${err.message}`, { cause: err })));
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost}:${address.port}`,
    port: address.port,
    host,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

interface NamedResult extends HealthCheckResult {
  name: string;
}

/** Runs every check concurrently; a throw, a bad answer or a timeout counts as a failure. */
export async function runChecks(checks: Record<string, HealthCheck>, timeoutMs: number): Promise<NamedResult[]> {
  return Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<NamedResult> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<HealthCheckResult>((resolve) => {
          timer = setTimeout(() => resolve({ ok: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
        });
        const result = await Promise.race([Promise.resolve().then(check), timeout]);
        if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean') {
          return { name, ok: false, reason: 'check returned no { ok } result' };
        }
        return { name, ...result };
      } catch (err) {
        return { name, ok: false, reason: `check threw: ${err instanceof Error ? err.message : String(err)}` };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

function sendChecks(res: ServerResponse, what: string, results: NamedResult[]): void {
  const ok = results.every((r) => r.ok);
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.reason ?? 'not ok'}`));
  lines.push(ok ? `${what} check passed` : `${what} check failed`);
  send(res, ok ? 200 : 503, `${lines.join('\n')}\n`);
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * A check that answers the latest value of a status stream (e.g. a watch's health); until the
 * first value it answers `initial`. After the stream completes it keeps its last value; an error
 * on the stream makes it fail with the error's message.
 */
export function checkFromObservable(
  status$: Observable<HealthCheckResult>,
  initial: HealthCheckResult = { ok: false, reason: 'no status reported yet' },
): { check: HealthCheck; unsubscribe(): void } {
  let latest = initial;
  const subscription = status$.subscribe({
    next: (status) => (latest = status),
    error: (err: unknown) => (latest = { ok: false, reason: `status stream failed: ${err instanceof Error ? err.message : String(err)}` }),
  });
  return { check: () => latest, unsubscribe: () => subscription.unsubscribe() };
}
