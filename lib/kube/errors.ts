// client-node's ApiException from its own module: its entry point loads the whole generated API.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { describeValue } from '../core/index.js';

/** The one classification of Kubernetes API failures used everywhere in rxkube. */
export type KubeErrorKind =
  'notFound' | 'conflict' | 'gone' | 'invalid' | 'forbidden' | 'unauthorized' | 'tooManyRequests' | 'transient' | 'unknown';

/** The `Status` object the API server answers errors with (also the object of a watch ERROR event). */
export interface KubeStatus {
  kind: 'Status';
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/** An error answer from the API server. It is a client-node ApiException, with the Status parsed. */
export class KubeApiError extends ApiException<unknown> {
  override readonly name = 'KubeApiError';
  readonly status: KubeStatus | undefined;

  constructor(
    code: number,
    body: unknown,
    headers: Record<string, string>,
    readonly request: { method: string; path: string },
  ) {
    super(code, 'Kubernetes API error', body, headers);
    this.status = asStatus(body);
    this.message = `${request.method} ${request.path}: ${describeStatus(code, this.status, body)}`;
  }
}

const TRANSIENT_CODES = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/**
 * Classifies anything thrown by client-node, by our resource client, by fetch, or a Status
 * object itself (a watch ERROR event). Network failures and 5xx are 'transient'.
 */
export function classifyError(err: unknown): KubeErrorKind {
  const code = statusCodeOf(err);
  if (code !== undefined) {
    switch (code) {
      case 404:
        return 'notFound';
      case 409:
        return 'conflict';
      case 410:
        return 'gone';
      case 400:
      case 422:
        return 'invalid';
      case 403:
        return 'forbidden';
      case 401:
        return 'unauthorized';
      case 429:
        return 'tooManyRequests';
      default:
        return TRANSIENT_CODES.has(code) ? 'transient' : 'unknown';
    }
  }
  if (asStatus(err)?.reason === 'Expired' || asStatus(err)?.reason === 'Gone') return 'gone';
  if (isObject(err) && err['name'] === 'TimeoutError') return 'transient';
  return networkCodeOf(err) !== undefined ? 'transient' : 'unknown';
}

/** The HTTP status of an API error (ApiException.code, a Status body's code), else undefined. */
export function statusCodeOf(err: unknown): number | undefined {
  if (err instanceof ApiException && isHttpCode(err.code)) return err.code;
  const status = statusOf(err);
  if (status && isHttpCode(status.code)) return status.code;
  if (isObject(err)) {
    for (const key of ['statusCode', 'code'] as const) {
      const value = err[key];
      if (isHttpCode(value)) return value;
    }
  }
  return undefined;
}

/** The Status an error carries (parsed from a JSON body if needed), or the value itself if it is one. */
export function statusOf(err: unknown): KubeStatus | undefined {
  if (err instanceof KubeApiError) return err.status;
  if (err instanceof ApiException) return asStatus(err.body);
  const direct = asStatus(err);
  if (direct) return direct;
  return isObject(err) ? asStatus(err['body']) : undefined;
}

/** The Status `reason` ('AlreadyExists', 'Conflict', 'Expired', 'Invalid', ...), if any. */
export function reasonOf(err: unknown): string | undefined {
  return statusOf(err)?.reason;
}

/** How long the server asked us to wait (Retry-After header or details.retryAfterSeconds), in ms. */
export function retryAfterMs(err: unknown): number | undefined {
  const seconds = statusOf(err)?.details?.retryAfterSeconds;
  if (typeof seconds === 'number' && seconds >= 0) return seconds * 1000;
  if (err instanceof ApiException && isObject(err.headers)) {
    const header = Number((err.headers as Record<string, string>)['retry-after']);
    if (Number.isFinite(header) && header >= 0) return header * 1000;
  }
  return undefined;
}

/** One readable line: '409 Conflict: Operation cannot be fulfilled on ...', 'ECONNREFUSED 127.0.0.1:6443', ... */
export function errorMessage(err: unknown): string {
  if (err instanceof KubeApiError) return err.message;
  if (err instanceof ApiException) return describeStatus(err.code, asStatus(err.body), err.body);
  const status = asStatus(err);
  if (status) return describeStatus(status.code, status, undefined);
  const network = networkCodeOf(err);
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    const text = cause && !err.message.includes(cause) ? `${err.message}: ${cause}` : err.message;
    return network && !text.includes(network) ? `${network} ${text}` : text;
  }
  return typeof err === 'string' ? err : describeValue(err);
}

function describeStatus(code: number | undefined, status: KubeStatus | undefined, body: unknown): string {
  const head = [code, status?.reason].filter((x) => x !== undefined && x !== '').join(' ');
  const detail = status?.message ?? (typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : undefined);
  return detail ? `${head || 'error'}: ${detail}` : head || 'unknown API error';
}

/** A network-level error code (ECONNREFUSED, undici's UND_ERR_*) anywhere in the cause chain. */
function networkCodeOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && isObject(current); depth++) {
    const code = current['code'];
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    if (Array.isArray(current['errors'])) {
      const inner = (current['errors'] as unknown[]).map(networkCodeOf).find((c) => c !== undefined);
      if (inner) return inner;
    }
    current = current['cause'];
  }
  return undefined;
}

function asStatus(value: unknown): KubeStatus | undefined {
  let candidate = value;
  if (typeof candidate === 'string' && candidate.trimStart().startsWith('{')) {
    try {
      candidate = JSON.parse(candidate);
    } catch {
      return undefined;
    }
  }
  return isObject(candidate) && candidate['kind'] === 'Status' ? (candidate as unknown as KubeStatus) : undefined;
}

function isHttpCode(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
