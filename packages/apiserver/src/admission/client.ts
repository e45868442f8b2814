/**
 * Calls a webhook as the real server's webhook client does: an HTTPS POST of JSON to the
 * configuration's URL, or to a Service resolved to a local address (the server's
 * `webhookServices` option, as tests have no cluster DNS), verified against the caBundle, with
 * `?timeout=Ns` and a deadline. A response larger than MAX_WEBHOOK_RESPONSE_BYTES is cut off, so
 * a hostile webhook can neither hang a request past its timeout nor fill the server's memory.
 * Failures come back in Go's words (dial tcp ...: connect: connection refused, x509: ...).
 */
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';

/** Largest webhook response read (a patch may rewrite a whole object of the largest request size). */
export const MAX_WEBHOOK_RESPONSE_BYTES = 6 * 1024 * 1024;

/** `namespace/name:port` of a Service to the `host:port` that serves it here. */
export type ServiceAddresses = Readonly<Record<string, string>>;

/** Where a webhook is reached: the URL to post to and the name its certificate must carry. */
export interface WebhookTarget {
  url: URL;
  servername: string;
  /** The URL as the real server names it in errors (https://svc.ns.svc:443/path). */
  shown: string;
}

/** A failure to reach a webhook or read its answer (the real server's ErrCallingWebhook reason). */
export class WebhookCallError extends Error {}

/** A field of a webhook's answer quoted in a message: text as sent, anything else (a webhook is not trusted to send text) as JSON. */
export function answerText(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Resolves a clientConfig to where it is reached, or a WebhookCallError naming what is missing. */
export function webhookTarget(clientConfig: JsonValue | undefined, services: ServiceAddresses, timeoutSeconds: number): WebhookTarget {
  const config = isJsonObject(clientConfig) ? clientConfig : {};
  const query = `?timeout=${timeoutSeconds}s`;
  if (typeof config.url === 'string') {
    const url = new URL(config.url);
    url.search = query;
    return { url, servername: url.hostname.replace(/^\[|\]$/g, ''), shown: url.toString() };
  }
  const service = isJsonObject(config.service) ? config.service : {};
  const name = String(service.name ?? '');
  const namespace = String(service.namespace ?? '');
  const port = typeof service.port === 'number' ? service.port : 443;
  const path = typeof service.path === 'string' ? service.path : '/';
  const host = `${name}.${namespace}.svc`;
  const shown = `https://${host}:${port}${path}${query}`;
  const address = services[`${namespace}/${name}:${port}`];
  if (address === undefined) throw new WebhookCallError(`failed to call webhook: Post "${shown}": service "${name}" not found`);
  return { url: new URL(`https://${address}${path}${query}`), servername: host, shown };
}

/** Go's wording for a TLS or connection failure Node reports with a code. */
function goReason(err: NodeJS.ErrnoException, target: WebhookTarget): string {
  const code = err.code ?? '';
  const unknownAuthority = [
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_GET_ISSUER_CERT',
  ];
  if (unknownAuthority.includes(code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `tls: failed to verify certificate: x509: certificate is not valid for ${target.servername}`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  if (code === 'ECONNREFUSED') return `dial tcp ${target.url.host}: connect: connection refused`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'EOF';
  return err.message;
}

/**
 * POSTs `body` and resolves with the parsed JSON answer; rejects with a WebhookCallError whose
 * message is the reason the real server gives (after "failed calling webhook ...").
 */
export function postJson(target: WebhookTarget, caBundle: JsonValue | undefined, body: JsonObject, timeoutMs: number): Promise<JsonValue> {
  const payload = Buffer.from(JSON.stringify(body));
  const ca = typeof caBundle === 'string' && caBundle !== '' ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
  const post = `failed to call webhook: Post "${target.shown}"`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(new WebhookCallError(reason));
    };
    const timer = setTimeout(() => fail(`${post}: context deadline exceeded`), timeoutMs);
    let req: ReturnType<typeof httpsRequest>;
    try {
      req = httpsRequest(
        target.url,
        {
          method: 'POST',
          ca,
          // An address is checked against the certificate's IP names; SNI carries host names only.
          ...(isIP(target.servername) ? {} : { servername: target.servername }),
          headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': payload.length },
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_WEBHOOK_RESPONSE_BYTES)
              fail(`${post}: the webhook's response is larger than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`);
            else chunks.push(c);
          });
          res.on('error', (err) => fail(`${post}: ${goReason(err, target)}`));
          res.on('end', () => {
            if (settled) return;
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) {
              fail(`${post}: the server responded with the status code ${status} but did not return more information`);
              return;
            }
            try {
              const parsed = JSON.parse(text) as JsonValue;
              settled = true;
              clearTimeout(timer);
              resolve(parsed);
            } catch (err) {
              fail(`${post}: ${(err as Error).message}`);
            }
          });
        },
      );
    } catch (err) {
      settled = true;
      clearTimeout(timer);
      reject(new WebhookCallError(`${post}: ${(err as Error).message}`));
      return;
    }
    req.on('error', (err: NodeJS.ErrnoException) => fail(`${post}: ${goReason(err, target)}`));
    req.end(payload);
  });
}
