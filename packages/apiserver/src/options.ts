/**
 * What startApiServer takes, and the check that refuses a bad option before anything is opened
 * or bound (a TypeError naming the option).
 */
import { isIP } from 'node:net';
import type { SimulateOptions } from './controllers/simulators.js';
import { isLoopbackName } from './http/guards.js';

export interface ApiServerOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Address to bind (default 127.0.0.1). A non-loopback address requires `token`. */
  host?: string;
  /**
   * Host names (besides IP addresses, localhost and, off loopback, this machine's hostname) that
   * requests may name in their `Host` header; others are refused with 403 (DNS rebinding).
   */
  allowedHosts?: string[];
  /** Bearer token every request must carry (401 otherwise). */
  token?: string;
  /**
   * Keep state in this directory (created 0700 if missing): every write is in its fsynced log
   * before the client gets an answer, so acknowledged writes survive a crash (kill -9).
   */
  dataDir?: string;
  /** Compact the data directory's log into a snapshot once it holds this many bytes (default 64 MiB). */
  dataCompactBytes?: number;
  /** Simulated built-in controllers (off by default). */
  simulate?: SimulateOptions;
  /**
   * Serve HTTPS with this key and certificate (PEM), and `ca` (default: the certificate itself)
   * in the kubeconfig. Off loopback the server always serves HTTPS: without `tls` it makes a CA
   * and a certificate for the machine's names and addresses at start.
   */
  tls?: { key: string | Buffer; cert: string | Buffer; ca?: string | Buffer };
  /** Interval of BOOKMARK events on watches that allow them (default 60000). */
  bookmarkIntervalMs?: number;
  /** Watch events kept per resource for resuming watches (default 10000). */
  historySize?: number;
  /** Bytes of watch events (objects as JSON) kept per resource (default 64 MiB); a watch resuming from before them gets 410. */
  historyBytes?: number;
  /** Watches without timeoutSeconds end after this many seconds times [1, 2) (default 1800). */
  minRequestTimeoutSeconds?: number;
  /** How long a request body may take to arrive (default 60000); a slower one gets 408. */
  bodyTimeoutMs?: number;
  /** Requests in flight at once, watches not counted (default 400); beyond, 429 with Retry-After. */
  maxRequestsInFlight?: number;
  /** Answers written but not yet read by their clients, in bytes (default 256 MiB); beyond, 429. */
  maxPendingResponseBytes?: number;
  /** How long a client may take to read an answer once it is complete (default 60000); then the connection is closed. */
  writeTimeoutMs?: number;
  /**
   * How long a request beyond its user's fair share of the limits above waits for room before it
   * is answered 429 (default 15000; 0: at once).
   */
  requestQueueWaitMs?: number;
  /** How long a list `continue` token stays valid (default 5 minutes). */
  continueTtlMs?: number;
  /**
   * Where the Services that admission webhook configurations name are served, as there is no
   * cluster network: `namespace/name:port` (the port the configuration names, default 443) to
   * `host:port`, e.g. `{ 'default/my-webhook:443': '127.0.0.1:9443' }`. The webhook's certificate
   * must be valid for `name.namespace.svc`, as on a real cluster. A Service not listed here is
   * "not found" when a webhook is called.
   */
  webhookServices?: Record<string, string>;
  /** Random source for fault fractions (tests pass a seeded one). */
  random?: () => number;
  /**
   * Load @kubernetes/client-node for `kubeConfig()` (default true). It takes seconds to load; the
   * CLI, which only writes kubeconfig files, turns it off.
   */
  clientNode?: boolean;
}

export function validateOptions(o: ApiServerOptions): void {
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) {
    throw new TypeError(`startApiServer: port must be an integer from 0 to 65535, got ${String(o.port)}`);
  }
  const host = o.host ?? '127.0.0.1';
  if (host !== 'localhost' && isIP(host) === 0)
    throw new TypeError(`startApiServer: host must be an IP address or localhost, got ${JSON.stringify(host)}`);
  if (!isLoopbackName(host) && !o.token) {
    throw new TypeError(`startApiServer: binding ${host} (not loopback) requires a token, so that only clients holding it get in`);
  }
  if (o.token !== undefined && (o.token === '' || /\s/.test(o.token)))
    throw new TypeError('startApiServer: token must be a non-empty string without spaces');
  const sim = o.simulate;
  const delays: [string, number | undefined][] = [
    ['deployments.readyAfterMs', sim?.deployments ? sim.deployments.readyAfterMs : undefined],
    ['pods.readyAfterMs', sim?.pods?.readyAfterMs],
    ['pods.stopAfterMs', sim?.pods?.stopAfterMs],
    ['jobs.durationMs', sim?.jobs ? sim.jobs.durationMs : undefined],
    ['jobs.failures', sim?.jobs ? sim.jobs.failures : undefined],
  ];
  for (const [name, value] of delays) {
    if (value !== undefined && !(value >= 0)) throw new TypeError(`startApiServer: simulate.${name} must be >= 0, got ${value}`);
  }
  if (sim?.nodes !== undefined && !(Number.isInteger(sim.nodes) && sim.nodes >= 0)) {
    throw new TypeError(`startApiServer: simulate.nodes must be an integer >= 0, got ${sim.nodes}`);
  }
  if (o.bookmarkIntervalMs !== undefined && !(o.bookmarkIntervalMs > 0))
    throw new TypeError(`startApiServer: bookmarkIntervalMs must be > 0, got ${o.bookmarkIntervalMs}`);
  if (o.dataCompactBytes !== undefined && !(Number.isInteger(o.dataCompactBytes) && o.dataCompactBytes > 0)) {
    throw new TypeError(`startApiServer: dataCompactBytes must be a positive integer, got ${o.dataCompactBytes}`);
  }
  for (const [name, value] of [
    ['maxRequestsInFlight', o.maxRequestsInFlight],
    ['maxPendingResponseBytes', o.maxPendingResponseBytes],
    ['writeTimeoutMs', o.writeTimeoutMs],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0))
      throw new TypeError(`startApiServer: ${name} must be a positive integer, got ${value}`);
  }
  if (o.requestQueueWaitMs !== undefined && !(Number.isInteger(o.requestQueueWaitMs) && o.requestQueueWaitMs >= 0)) {
    throw new TypeError(`startApiServer: requestQueueWaitMs must be an integer >= 0, got ${o.requestQueueWaitMs}`);
  }
  if (o.historyBytes !== undefined && !(Number.isInteger(o.historyBytes) && o.historyBytes > 0)) {
    throw new TypeError(`startApiServer: historyBytes must be a positive integer, got ${o.historyBytes}`);
  }
  for (const [service, address] of Object.entries(o.webhookServices ?? {})) {
    if (!/^[^/\s]+\/[^/:\s]+:\d+$/.test(service))
      throw new TypeError(`startApiServer: webhookServices keys must be namespace/name:port, got ${JSON.stringify(service)}`);
    if (typeof address !== 'string' || !/^[^\s/]+:\d+$/.test(address))
      throw new TypeError(`startApiServer: webhookServices[${JSON.stringify(service)}] must be host:port, got ${JSON.stringify(address)}`);
  }
  if (o.historySize !== undefined && !(Number.isInteger(o.historySize) && o.historySize > 0)) {
    throw new TypeError(`startApiServer: historySize must be a positive integer, got ${o.historySize}`);
  }
}
