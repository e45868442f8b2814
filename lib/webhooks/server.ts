/**
 * The HTTPS server of a set of webhooks: one path per webhook, /healthz and /readyz, a body limit
 * (413), a deadline per review, Prometheus metrics on the operator's registry and pino logs.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { Subject, type Observable, type Subscription } from 'rxjs';
import { ConfigurationError, isRecord, jsonDepth, MAX_JSON_DEPTH, requestPath, requireKnownKeys } from '../core/index.js';
import { createLogger, Tracing, type Logger, type TracingOptions } from '../observe/index.js';
import {
  admissionRequest,
  admissionReview,
  MalformedReviewError,
  type AdmissionAnswer,
  type AdmissionRequest,
  type AnyAdmissionWebhook,
} from './admission.js';
import { MalformedConversionError, reviewConversion, type ConversionWebhook } from './conversion.js';
import { generateDevelopmentTls, readTlsFiles, watchTlsFiles, type TlsPem } from './tls.js';
import { webhookMetrics, type WebhookMetrics } from './metrics.js';

/** Where the certificate comes from. */
export type WebhookTls =
  /** cert-manager's Secret mounted as files: read again when they change (new connections get the new certificate). */
  | { readonly certFile: string; readonly keyFile: string }
  /** A CA and a serving certificate made at start (development and tests); `caBundle` of the server is its CA. */
  | { readonly development: true; readonly dnsNames?: readonly string[]; readonly ipAddresses?: readonly string[] }
  /** PEM strings of your own. */
  | { readonly cert: string; readonly key: string; readonly ca?: string };

export type AnyWebhook = AnyAdmissionWebhook | ConversionWebhook;

/** The webhook server's port (controller-runtime's), in the pod and in the Service that fronts it. */
export const DEFAULT_WEBHOOK_PORT = 9443;

export interface WebhookServerOptions {
  readonly webhooks: readonly AnyWebhook[];
  readonly tls: WebhookTls;
  /** Default `DEFAULT_WEBHOOK_PORT` (9443, controller-runtime's); 0 picks a free port. */
  readonly port?: number;
  /** Default '0.0.0.0': the API server reaches it through a Service. */
  readonly host?: string;
  /** A review not answered within this gets HTTP 504 (default 10 000 ms, the API server's default wait). */
  readonly requestTimeoutMs?: number;
  /** A larger body gets HTTP 413 (default 6 MiB: an object and its old version, 3 MiB each at most). */
  readonly maxBodyBytes?: number;
  /** How long `close()` lets reviews in flight finish (default 10 000 ms). */
  readonly shutdownTimeoutMs?: number;
  readonly logger?: Logger;
  /** Metrics go to this prom-client registry: latency, denials, errors, certificate reloads. */
  readonly registry?: Registry;
  /**
   * Each review as an OpenTelemetry server span (under the API server's span when its request
   * carries one): `true` for the global tracer provider, or `{ tracerProvider }`. Default off.
   */
  readonly tracing?: TracingOptions | boolean | undefined;
}

const SERVER_OPTIONS = {
  webhooks: true,
  tls: true,
  port: true,
  host: true,
  requestTimeoutMs: true,
  maxBodyBytes: true,
  shutdownTimeoutMs: true,
  logger: true,
  registry: true,
  tracing: true,
} as const satisfies Record<keyof WebhookServerOptions, true>;

/** One reload of the certificate files. */
export interface TlsReload {
  readonly ok: boolean;
  /** Why the files were not taken (the old certificate stays). */
  readonly error?: string;
}

export interface WebhookServer {
  readonly url: string;
  readonly port: number;
  /** PEM of the CA that signed the certificate, when rxkube made it (development) or it was given. */
  readonly caBundle: string | undefined;
  /** Each reload of the certificate files, after it happened. */
  readonly tlsReloads$: Observable<TlsReload>;
  /** Reads the certificate files again now (they are also watched). */
  reloadTls(): TlsReload;
  /** /readyz answers 503, new connections are refused, reviews in flight finish (up to shutdownTimeoutMs). */
  close(): Promise<void>;
}

const DEFAULTS = {
  port: DEFAULT_WEBHOOK_PORT,
  host: '0.0.0.0',
  requestTimeoutMs: 10_000,
  maxBodyBytes: 6 * 1024 * 1024,
  shutdownTimeoutMs: 10_000,
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly cause_: 'malformed' | 'too_large' | 'timeout' | 'handler',
  ) {
    super(message);
  }
}

function positive(option: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new ConfigurationError(option, `must be a whole number >= ${min} (got ${String(value)})`);
  return v;
}

/** Checks the options as `startWebhookServer` does (ConfigurationError naming the option), without listening. */
export function checkWebhookServerOptions(options: WebhookServerOptions) {
  if (!isRecord(options)) throw new ConfigurationError('options', 'must be an object { webhooks, tls, ... }');
  requireKnownKeys('', options, SERVER_OPTIONS);
  if (!Array.isArray(options.webhooks) || options.webhooks.length === 0)
    throw new ConfigurationError('webhooks', 'give at least one webhook (validatingWebhook, mutatingWebhook, conversionWebhook)');
  const paths = new Set<string>(['/healthz', '/readyz']);
  options.webhooks.forEach((w, i) => {
    if (!isRecord(w) || typeof w.path !== 'string' || !['validating', 'mutating', 'conversion'].includes(String(w.type))) {
      throw new ConfigurationError(`webhooks[${i}]`, 'is no webhook: make it with validatingWebhook, mutatingWebhook or conversionWebhook');
    }
    if (paths.has(w.path)) throw new ConfigurationError(`webhooks[${i}].path`, `'${w.path}' is taken by another webhook or by the server`);
    paths.add(w.path);
  });
  const tls = options.tls as Record<string, unknown> | undefined;
  if (!isRecord(tls))
    throw new ConfigurationError('tls', 'is required: { certFile, keyFile } (cert-manager), { development: true } or { cert, key }');
  const port = options.port ?? DEFAULTS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError('port', `must be a port number 0..65535 (got ${String(options.port)})`);
  return {
    port,
    host: options.host ?? DEFAULTS.host,
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, DEFAULTS.requestTimeoutMs),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes),
    shutdownTimeoutMs: positive('shutdownTimeoutMs', options.shutdownTimeoutMs, DEFAULTS.shutdownTimeoutMs, 0),
  };
}

async function initialTls(
  tls: WebhookTls,
): Promise<{ pem: TlsPem; ca: string | undefined; files?: { certFile: string; keyFile: string } }> {
  if ('certFile' in tls || 'keyFile' in tls) {
    const { certFile, keyFile } = tls as { certFile?: unknown; keyFile?: unknown };
    if (typeof certFile !== 'string' || certFile === '')
      throw new ConfigurationError('tls.certFile', 'must be the path of the PEM certificate (tls.crt)');
    if (typeof keyFile !== 'string' || keyFile === '')
      throw new ConfigurationError('tls.keyFile', 'must be the path of the PEM key (tls.key)');
    return { pem: readTlsFiles(certFile, keyFile), ca: undefined, files: { certFile, keyFile } };
  }
  if ('development' in tls) {
    if (tls.development !== true) throw new ConfigurationError('tls.development', 'must be true');
    const made = await generateDevelopmentTls({
      ...(tls.dnsNames ? { dnsNames: tls.dnsNames } : {}),
      ...(tls.ipAddresses ? { ipAddresses: tls.ipAddresses } : {}),
    });
    return { pem: made, ca: made.ca };
  }
  if (typeof tls.cert !== 'string' || typeof tls.key !== 'string')
    throw new ConfigurationError('tls', 'give { certFile, keyFile }, { development: true } or { cert, key } as PEM strings');
  return { pem: { cert: tls.cert, key: tls.key }, ca: tls.ca };
}

/** An admission webhook's pipeline: requests in, answers out, resubscribed if the user's operator fails. */
class AdmissionPipeline {
  private requests = new Subject<AdmissionRequest<never>>();
  private subscription: Subscription | undefined;
  private readonly waiting = new Map<string, (answer: AdmissionAnswer) => void>();

  constructor(
    private readonly webhook: AnyAdmissionWebhook,
    private readonly logger: Logger,
  ) {
    this.connect();
  }

  private connect(): void {
    this.requests = new Subject<AdmissionRequest<never>>();
    this.subscription = this.requests.pipe(this.webhook.admit).subscribe({
      next: (answer) => {
        this.waiting.get(answer.uid)?.(answer);
        this.waiting.delete(answer.uid);
      },
      error: (err: unknown) => {
        this.logger.error(
          { err, webhook: this.webhook.name },
          'the webhook operator failed: its open reviews fail, the next ones go through it anew',
        );
        this.failAll(err);
        this.connect();
      },
      complete: () => {
        this.logger.error(
          { webhook: this.webhook.name },
          'the webhook operator completed: its open reviews fail, the next ones go through it anew',
        );
        this.failAll(new Error('the webhook operator completed'));
        this.connect();
      },
    });
  }

  private failAll(error: unknown): void {
    for (const [uid, resolve] of this.waiting) resolve({ uid, error });
    this.waiting.clear();
  }

  answer(request: AdmissionRequest<never>, timeoutMs: number): Promise<AdmissionAnswer> {
    return new Promise<AdmissionAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(request.uid);
        reject(new HttpError(504, `webhook ${this.webhook.name} gave no answer within ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      this.waiting.set(request.uid, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      this.requests.next(request);
    });
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.failAll(new Error('the webhook server is closing'));
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit)
      return reject(new HttpError(413, `request body of ${declared} bytes is over the limit of ${limit}`, 'too_large'));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(new HttpError(413, `request body is over the limit of ${limit} bytes`, 'too_large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, body: string, close = false): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...(close ? { Connection: 'close' } : {}) });
  res.end(body);
}

/**
 * Serves `webhooks` over HTTPS. Throws ConfigurationError naming a bad option, and an Error
 * naming the address when it cannot listen.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const settings = checkWebhookServerOptions(options);
  const tls = await initialTls(options.tls);
  const logger = (options.logger ?? createLogger({ name: 'rxkube' })).child({ component: 'webhooks' });
  const metrics: WebhookMetrics | undefined = options.registry ? webhookMetrics(options.registry) : undefined;
  const tracing = Tracing.of(options.tracing);
  const admission = new Map<string, { webhook: AnyAdmissionWebhook; pipeline: AdmissionPipeline }>();
  const conversion = new Map<string, ConversionWebhook>();
  for (const w of options.webhooks) {
    if (w.type === 'conversion') conversion.set(w.path, w);
    else admission.set(w.path, { webhook: w, pipeline: new AdmissionPipeline(w, logger) });
  }
  let closing = false;
  let inFlight = 0;
  let drained: (() => void) | undefined;

  /** A review in a server span of its own, when traced. */
  const traced = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (!tracing) return review(req, res, path);
    const span = tracing.startServer(
      `${req.method ?? 'POST'} ${path}`,
      { 'http.request.method': req.method, 'url.path': path, 'url.scheme': 'https', 'http.route': path },
      req.headers,
    );
    return span
      .within(() => review(req, res, path))
      .finally(() => {
        span.setAttributes({ 'http.response.status_code': res.statusCode });
        span.end(res.statusCode >= 500 ? new Error(`answered ${res.statusCode}`) : undefined);
      });
  };

  const review = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const admissionEntry = admission.get(path);
    const converter = conversion.get(path);
    const name = admissionEntry?.webhook.name ?? converter?.name ?? path;
    const started = process.hrtime.bigint();
    let outcome = 'error';
    try {
      if (req.method !== 'POST') throw new HttpError(405, 'webhooks take POST', 'malformed');
      const body = await readBody(req, settings.maxBodyBytes);
      const text = body.toString('utf8');
      // Refused before parsing, for this request alone: deeper JSON breaks recursive copies and diffs further on.
      if (jsonDepth(text) > MAX_JSON_DEPTH)
        throw new HttpError(
          400,
          `the body is JSON nested deeper than ${MAX_JSON_DEPTH} levels (the limit of the Kubernetes API server)`,
          'malformed',
        );
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new HttpError(400, 'the body is not JSON', 'malformed');
      }
      if (converter) {
        const answer = reviewConversion(converter, parsed);
        outcome = answer.response.result.status === 'Success' ? 'converted' : 'failed';
        if (outcome === 'failed') {
          metrics?.errors.inc({ webhook: name, cause: 'conversion' });
          logger.warn(
            { webhook: name, uid: answer.response.uid, message: (answer.response.result as { message: string }).message },
            'conversion failed',
          );
        }
        return sendJson(res, 200, answer);
      }
      const request = admissionRequest<never>(parsed);
      const answer = await admissionEntry!.pipeline.answer(request, settings.requestTimeoutMs);
      if ('error' in answer) {
        logger.error({ err: answer.error, webhook: name, uid: request.uid }, 'the webhook handler failed');
        throw new HttpError(
          500,
          `webhook ${name} failed: ${answer.error instanceof Error ? answer.error.message : String(answer.error)}`,
          'handler',
        );
      }
      outcome = !answer.allowed ? 'denied' : answer.patch !== undefined ? 'patched' : 'allowed';
      if (!answer.allowed) metrics?.denials.inc({ webhook: name });
      logger.debug({ webhook: name, uid: request.uid, operation: request.operation, outcome, dryRun: request.dryRun }, 'admission review');
      return sendJson(res, 200, admissionReview(answer));
    } catch (err) {
      const failure =
        err instanceof HttpError
          ? err
          : err instanceof MalformedReviewError || err instanceof MalformedConversionError
            ? new HttpError(400, err.message, 'malformed')
            : new HttpError(500, err instanceof Error ? err.message : String(err), 'handler');
      metrics?.errors.inc({ webhook: name, cause: failure.cause_ });
      if (failure.cause_ !== 'handler') logger.warn({ webhook: name, status: failure.status }, failure.message);
      // A body still arriving past the limit is not read: the connection closes after the answer.
      return sendText(res, failure.status, `${failure.message}\n`, failure.cause_ === 'too_large');
    } finally {
      metrics?.latency.observe({ webhook: name, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  const server: Server = createServer(
    { cert: tls.pem.cert, key: tls.pem.key, requestTimeout: settings.requestTimeoutMs + 5_000 },
    (req, res) => {
      // A request line such as `GET //[ HTTP/1.1` is no URL: answered 400 as Go's net/http does, never thrown.
      const path = requestPath(req.url);
      if (path === undefined) return sendText(res, 400, 'malformed request target\n', true);
      if (path === '/healthz' || path === '/readyz') {
        const ok = path === '/healthz' || !closing;
        return sendText(res, ok ? 200 : 503, ok ? 'ok\n' : 'shutting down\n');
      }
      if (!admission.has(path) && !conversion.has(path))
        return sendText(res, 404, `no webhook at ${path} (known: ${[...admission.keys(), ...conversion.keys()].join(', ')})\n`);
      inFlight++;
      // One request fails alone: whatever escapes its review (its span included) is answered 500, never thrown.
      void traced(req, res, path)
        .catch((err: unknown) => {
          logger.error({ err }, 'webhook request failed outside its review');
          if (!res.headersSent) sendText(res, 500, 'internal error\n', true);
        })
        .finally(() => {
          inFlight--;
          if (inFlight === 0) drained?.();
        });
    },
  );

  const reloads = new Subject<TlsReload>();
  const reloadTls = (): TlsReload => {
    if (!tls.files) return { ok: false, error: 'the certificate was not read from files' };
    let result: TlsReload;
    try {
      const pem = readTlsFiles(tls.files.certFile, tls.files.keyFile);
      server.setSecureContext({ cert: pem.cert, key: pem.key });
      result = { ok: true };
      logger.info({ certFile: tls.files.certFile }, 'webhook certificate reloaded');
    } catch (err) {
      result = { ok: false, error: (err as Error).message };
      logger.warn({ err }, 'webhook certificate files changed but cannot be used: keeping the previous certificate');
    }
    metrics?.reloads.inc({ result: result.ok ? 'ok' : 'failed' });
    reloads.next(result);
    return result;
  };
  const watcher = tls.files ? watchTlsFiles([tls.files.certFile, tls.files.keyFile], reloadTls) : undefined;

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`startWebhookServer: cannot listen on ${settings.host}:${settings.port}: ${err.message}`, { cause: err })),
    );
    server.listen(settings.port, settings.host, () => resolve());
  }).catch((err: unknown) => {
    watcher?.close();
    for (const { pipeline } of admission.values()) pipeline.close();
    throw err;
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info({ port: address.port, webhooks: options.webhooks.map((w) => w.path) }, 'webhook server listening');
  let closed: Promise<void> | undefined;
  return {
    url: `https://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost === '[::]' ? '[::1]' : urlHost}:${address.port}`,
    port: address.port,
    caBundle: tls.ca,
    tlsReloads$: reloads.asObservable(),
    reloadTls,
    close: () =>
      (closed ??= (async () => {
        closing = true;
        watcher?.close();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (inFlight > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, settings.shutdownTimeoutMs);
            drained = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        server.closeAllConnections();
        await stopped;
        for (const { pipeline } of admission.values()) pipeline.close();
        reloads.complete();
        logger.info('webhook server stopped');
      })()),
  };
}
