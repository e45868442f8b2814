/**
 * Request guards that keep a browser from using the server: a `Host` the server does not answer
 * to (DNS rebinding: a web page's own name resolved to this address) and a write whose `Origin`
 * is another site (a cross-site form or fetch). Both are refused with 403 naming the reason.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { ApiError } from '../base/errors.js';

export interface HostGuardOptions {
  /** The address the server is bound to. */
  bindAddress: string;
  /** More host names (without port) the server answers to, e.g. a DNS name of this machine. */
  allowedHosts?: readonly string[];
  /** Names of this machine (hostname, interface addresses), accepted when bound off loopback. */
  machineNames?: readonly string[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether `host` is a loopback address literal or exactly `localhost`. A name is never matched by
 * prefix or suffix: `127.0.0.1.attacker.example` is a DNS name its owner can point anywhere
 * (rebinding), and a subdomain of `localhost` is left to `allowedHosts`.
 */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return isIP(h) === 6 && /^::ffff:127\./.test(h);
}

/** The host name of a `Host` header or an origin's authority, without port and brackets. */
export function hostnameOf(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith('[')) return a.slice(1, a.indexOf(']') > 0 ? a.indexOf(']') : undefined);
  const colon = a.lastIndexOf(':');
  return colon >= 0 && a.indexOf(':') === colon ? a.slice(0, colon) : a;
}

function forbidden(message: string): ApiError {
  return new ApiError(403, 'Forbidden', `forbidden: ${message}`, {});
}

/**
 * A checker of request headers. An IP literal in `Host` cannot be a rebound name, so it passes;
 * a name passes when it is a loopback name, one of `allowedHosts`, or (off loopback) this
 * machine's own name.
 */
export function requestGuard(options: HostGuardOptions): (method: string, headers: IncomingHttpHeaders) => void {
  const names = new Set((options.allowedHosts ?? []).map((h) => hostnameOf(h)));
  if (!isLoopbackName(options.bindAddress)) for (const n of options.machineNames ?? []) names.add(n.toLowerCase());
  const answersTo = (host: string): boolean => isIP(host) !== 0 || isLoopbackName(host) || names.has(host);
  return (method, headers) => {
    const hostHeader = headers.host;
    if (hostHeader !== undefined && !answersTo(hostnameOf(hostHeader))) {
      throw forbidden(
        `Host ${JSON.stringify(hostHeader)} is not a name this server answers to (DNS rebinding protection); use an IP address or localhost, or add the name to allowedHosts`,
      );
    }
    const origin = headers.origin;
    if (origin === undefined || SAFE_METHODS.has(method)) return;
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    if (originHost === undefined || hostHeader === undefined || originHost.toLowerCase() !== hostHeader.trim().toLowerCase()) {
      throw forbidden(
        `cross-origin ${method} from Origin ${JSON.stringify(origin)} refused: it is not this server's own origin (a web page may not write to the API server)`,
      );
    }
  };
}
