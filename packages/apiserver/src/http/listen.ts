/**
 * The socket side of the server: HTTP or HTTPS (always HTTPS off loopback, with a certificate
 * made at start when none is given), Node's timeouts set for watches, and the address clients use.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { answerClientErrors, inFlightTracker } from './client-errors.js';
import { oneAtATimePerConnection } from './connection-order.js';
import { isLoopbackName } from './guards.js';
import { generateServingTls, servingNames } from './tls.js';

export interface ServingTls {
  key: string | Buffer;
  cert: string | Buffer;
  ca?: string | Buffer;
}

export interface Listening {
  server: Server;
  /** host:port as a client reaches it ([::1]:port for a server bound to ::). */
  address: string;
  port: number;
}

/** The given TLS material; off loopback without one, a CA and certificate for this machine's names. */
export async function servingTls(given: ServingTls | undefined, host: string): Promise<ServingTls | undefined> {
  if (given || isLoopbackName(host)) return given;
  return generateServingTls(servingNames(host));
}

/** A client reaches a server bound to the unspecified address through loopback. */
function clientAddress(bound: string): string {
  if (bound === '0.0.0.0') return '127.0.0.1';
  if (bound === '::') return '::1';
  return bound;
}

/** Serves `handle` on host:port (0: a free port) once listening; in-flight requests are tracked for client errors. */
export async function listen(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  options: { host: string; port: number; tls: ServingTls | undefined },
): Promise<Listening> {
  const inFlight = inFlightTracker();
  const listener = oneAtATimePerConnection((req: IncomingMessage, res: ServerResponse): void => {
    inFlight.track(req, res);
    handle(req, res);
  });
  const { tls } = options;
  // Node's own Host check answers 400 without a Status; checkHostPresent answers with one.
  const server: Server = tls
    ? createHttpsServer({ key: tls.key, cert: tls.cert, requireHostHeader: false }, listener)
    : createHttpServer({ requireHostHeader: false }, listener);
  answerClientErrors(server, inFlight);
  server.keepAliveTimeout = 65_000;
  // Watches are long, so no whole-request timeout; headers must arrive within 60 s, bodies too (readBody).
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const urlHost = bound.family === 'IPv6' ? `[${clientAddress(bound.address)}]` : clientAddress(bound.address);
  return { server, address: `${urlHost}:${bound.port}`, port: bound.port };
}
