/**
 * startApiServer: assembles storage, registry, core, watch hub, the controllers inside the server
 * (CRDs, garbage collector, namespaces, optional simulators) and the HTTP front.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { debuglog } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { builtinTypes } from './api/builtins/index.js';
import { ApiCore } from './api/core.js';
import { CrdController } from './api/crds.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './http/discovery.js';
import { ApiError, badRequest, internalError, methodNotAllowed, pathNotFound } from './api/errors.js';
import { Auth, bootstrapClusterRoleBindings, bootstrapClusterRoles, CLUSTER_ROLE_BINDINGS_KEY, CLUSTER_ROLES_KEY, ClusterRoleAggregator, rbacTypes, reviewTypes } from './auth/index.js';
import { Faults } from './http/faults.js';
import { RequestLog } from './http/request-log.js';
import { GarbageCollector } from './controllers/gc.js';
import { requestGuard, isLoopbackName } from './http/guards.js';
import { answerClientErrors, checkHostPresent, inFlightTracker } from './http/client-errors.js';
import { handleResource, type HandlerContext } from './http/handlers.js';
import { parsePath, RequestAborted, sendError, sendJson } from './http/http.js';
import { Journal } from './api/durable/journal.js';
import { nameOf } from './api/meta.js';
import { kubeConfigFor, kubeconfigYaml, writeKubeconfigFile, type KubeconfigSpec } from './kubeconfig.js';
import { NamespaceController, NAMESPACES_KEY } from './controllers/namespaces.js';
import { loadBuiltinSchemas } from './api/builtin-schema.js';
import { openApiDocument, openApiIndex } from './http/openapi.js';
import { OpenApiV2 } from './http/openapi-v2.js';
import { patchEngine } from './patch/engine.js';
import { Registry } from './api/registry.js';
import { startSimulation, type SimulateOptions } from './controllers/simulators.js';
import { Store } from './api/store.js';
import { generateServingTls, servingNames } from './http/tls.js';
import { WatchHub } from './api/watch.js';

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
  /** Watches without timeoutSeconds end after this many seconds times [1, 2) (default 1800). */
  minRequestTimeoutSeconds?: number;
  /** How long a request body may take to arrive (default 60000); a slower one gets 408. */
  bodyTimeoutMs?: number;
  /** How long a list `continue` token stays valid (default 5 minutes). */
  continueTtlMs?: number;
  /** Random source for fault fractions (tests pass a seeded one). */
  random?: () => number;
  /**
   * Load @kubernetes/client-node for `kubeConfig()` (default true). It takes seconds to load; the
   * CLI, which only writes kubeconfig files, turns it off.
   */
  clientNode?: boolean;
}

/**
 * Whose kubeconfig: a bearer token (a ServiceAccount's, from TokenRequest or `kubectl create
 * token`) and the context's namespace. kubectl sends tokens over HTTPS only (off loopback, or `tls`).
 */
export interface KubeconfigIdentity {
  token?: string;
  namespace?: string;
}

export interface ApiServerStats {
  resourceVersion: number;
  objects: number;
  watches: number;
  eventsDelivered: number;
  /** With `dataDir`: log flushes (write + fdatasync) so far; concurrent writes share them. */
  logFlushes?: number;
}

export interface ApiServer {
  /** The server's base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The bearer token clients must send, if any. */
  readonly token: string | undefined;
  /**
   * A client-node KubeConfig for this server (context `rxkube`, namespace `default`): the admin's,
   * or with `as.token` another identity's, e.g. a ServiceAccount token from TokenRequest.
   */
  kubeConfig(as?: KubeconfigIdentity): KubeConfig;
  kubeconfigYaml(as?: KubeconfigIdentity): string;
  writeKubeconfig(path: string, as?: KubeconfigIdentity): Promise<void>;
  readonly faults: Faults;
  /** Resource requests counted by verb and resource, and an `onRequest` listener (tests count writes with it). */
  readonly requests: RequestLog;
  stats(): ApiServerStats;
  /** Stops serving, ends open watches, and with `dataDir` writes a snapshot of the state. */
  close(): Promise<void>;
}

/** Aborted requests and the like, one line each, with NODE_DEBUG=rxkube-apiserver. */
const debug = debuglog('rxkube-apiserver');

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export { isLoopbackName as isLoopback };

function validateOptions(o: ApiServerOptions): void {
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) {
    throw new TypeError(`startApiServer: port must be an integer from 0 to 65535, got ${String(o.port)}`);
  }
  const host = o.host ?? '127.0.0.1';
  if (host !== 'localhost' && isIP(host) === 0) throw new TypeError(`startApiServer: host must be an IP address or localhost, got ${JSON.stringify(host)}`);
  if (!isLoopbackName(host) && !o.token) {
    throw new TypeError(`startApiServer: binding ${host} (not loopback) requires a token, so that only clients holding it get in`);
  }
  if (o.token !== undefined && (o.token === '' || /\s/.test(o.token))) throw new TypeError('startApiServer: token must be a non-empty string without spaces');
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
  if (o.bookmarkIntervalMs !== undefined && !(o.bookmarkIntervalMs > 0)) throw new TypeError(`startApiServer: bookmarkIntervalMs must be > 0, got ${o.bookmarkIntervalMs}`);
  if (o.dataCompactBytes !== undefined && !(Number.isInteger(o.dataCompactBytes) && o.dataCompactBytes > 0)) {
    throw new TypeError(`startApiServer: dataCompactBytes must be a positive integer, got ${o.dataCompactBytes}`);
  }
  if (o.historySize !== undefined && !(Number.isInteger(o.historySize) && o.historySize > 0)) {
    throw new TypeError(`startApiServer: historySize must be a positive integer, got ${o.historySize}`);
  }
}

async function openDataDir(dir: string, compactBytes: number | undefined): ReturnType<typeof Journal.open> {
  try {
    return await Journal.open(dir, { compactBytes });
  } catch (err) {
    throw new Error(`startApiServer: dataDir: ${(err as Error).message}`);
  }
}

/** A client reaches a server bound to the unspecified address through loopback. */
function clientAddress(bound: string): string {
  if (bound === '0.0.0.0') return '127.0.0.1';
  if (bound === '::') return '::1';
  return bound;
}

async function generatedTls(host: string): Promise<{ key: string; cert: string; ca: string }> {
  return generateServingTls(servingNames(host));
}

/**
 * Holds a response's bytes until every change made so far is in the fsynced log, so no client
 * (not even a watcher or a reader) sees a write that a crash could still take back. When the log
 * is idle the bytes go out at once; otherwise they wait for the flush in progress or the next,
 * which concurrent writers share (group commit). Order within a response is kept.
 */
function holdUntilDurable(res: ServerResponse, journal: Journal): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let tail: Promise<unknown> | undefined;
  const later = (send: () => void): void => {
    const mine: Promise<unknown> = Promise.all([tail, journal.sync()]).then(
      () => {
        if (tail === mine) tail = undefined;
        send();
      },
      (err: unknown) => res.destroy(err as Error),
    );
    tail = mine;
  };
  res.write = ((...args: unknown[]) => {
    if (tail === undefined && journal.idle) return write(...args);
    later(() => write(...args));
    return true;
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    if (tail === undefined && journal.idle) return end(...args);
    later(() => end(...args));
    return res;
  }) as typeof res.end;
}

/**
 * An identity for a kubeconfig file. kubectl drops tokens over plain HTTP, so there it would act as
 * the admin (no credentials) and a test would pass that fails on a real cluster: refused.
 */
function kubectlIdentity(as: KubeconfigIdentity | undefined, https: boolean): KubeconfigIdentity | undefined {
  if (as?.token !== undefined && !https) {
    throw new Error(
      'kubeconfigYaml/writeKubeconfig with a token: kubectl sends tokens over HTTPS only, so against this plain-HTTP server it would act as the admin; start the server with `tls` or off loopback (`host`), or use kubeConfig({ token }) with client-node',
    );
  }
  return as;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  validateOptions(options);
  const clientNode = options.clientNode === false ? undefined : import('@kubernetes/client-node');
  const host = options.host ?? '127.0.0.1';
  const token = options.token;
  const opened = options.dataDir ? await openDataDir(options.dataDir, options.dataCompactBytes) : undefined;
  const journal = opened?.journal;
  const store = new Store({ historySize: options.historySize, journal: journal && ((change) => journal.append(change)) });
  const registry = new Registry();
  for (const t of [...builtinTypes(), ...rbacTypes(), ...reviewTypes()]) registry.add(t);
  const clock = options.simulate?.clock;
  // Creation and deletion times in the simulation's time, as a real cluster's share one clock.
  const core = new ApiCore(store, registry, patchEngine, { continueTtlMs: options.continueTtlMs, now: clock && (() => new Date(clock.now())) });
  const hub = new WatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs });
  const terminating = new Set<string>();
  const crds = new CrdController(core, registry, store, hub, terminating);
  const gc = new GarbageCollector(core, store, registry);
  const namespaces = new NamespaceController(core, store, registry);
  const simulation = options.simulate ? startSimulation(core, store, options.simulate) : undefined;
  const aggregator = new ClusterRoleAggregator(core, store);
  const auth = new Auth(store, { adminToken: token });
  const faults = new Faults(store, hub, options.random);
  const requests = new RequestLog();

  if (opened && journal) {
    // Everything as it was, at a resourceVersion past any used before; then the CRDs are served again.
    store.restore(opened.state.resourceVersion, opened.state.objects);
    journal.snapshotFrom(() => store.dump());
    crds.serveAll();
    namespaces.resumeAll();
  }
  for (const ns of DEFAULT_NAMESPACES) {
    if (!store.get(NAMESPACES_KEY, '', ns)) core.createInternal(NAMESPACES_KEY, { metadata: { name: ns } });
  }
  for (const role of bootstrapClusterRoles()) {
    if (!store.get(CLUSTER_ROLES_KEY, '', nameOf(role))) core.createInternal(CLUSTER_ROLES_KEY, role);
  }
  for (const binding of bootstrapClusterRoleBindings()) {
    if (!store.get(CLUSTER_ROLE_BINDINGS_KEY, '', nameOf(binding))) core.createInternal(CLUSTER_ROLE_BINDINGS_KEY, binding);
  }
  aggregator.syncAll();
  simulation?.resume();

  const ctx: HandlerContext = {
    core,
    registry,
    hub,
    faults,
    requests,
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
    bodyTimeoutMs: options.bodyTimeoutMs,
    terminating,
    patch: (kind, live, patch, type) => patchEngine.patch(kind, live, patch, type),
    auth,
  };
  const hashPrefix = randomBytes(4).toString('hex');
  const openApiV2 = new OpenApiV2(registry);
  let serverAddress = '';

  const guard = requestGuard({ bindAddress: host, allowedHosts: options.allowedHosts, machineNames: [hostname()] });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      checkHostPresent(req);
      guard(req.method ?? 'GET', req.headers);
      const user = auth.authenticate(req.headers);
      const url = requestUrl(req.url ?? '/');
      const path = url.pathname.replace(/\/+$/, '') || '/';
      const method = req.method ?? 'GET';
      const definitionsLoading = loadBuiltinSchemas();
      if (definitionsLoading) await definitionsLoading;
      const info = parsePath(path);
      if (info.kind === 'resource') {
        await handleResource(req, res, url, info.request, ctx, user);
        return;
      }
      auth.authorize(user, { kind: 'path', verb: method.toLowerCase(), path: url.pathname });
      if (method !== 'GET' && method !== 'HEAD') {
        if (info.kind === 'discovery' || path === '/version') throw methodNotAllowed();
        throw pathNotFound();
      }
      if (info.kind === 'discovery') {
        const doc =
          info.group === undefined && info.legacy
            ? apiVersions(serverAddress)
            : info.group === undefined
              ? apiGroupList(registry)
              : info.version === undefined
                ? apiGroup(registry, info.group)
                : apiResourceList(registry, info.group, info.version);
        if (!doc) throw pathNotFound();
        sendJson(res, 200, doc);
        return;
      }
      if (path === '/version') return sendJson(res, 200, versionInfo());
      if (path === '/healthz' || path === '/livez' || path === '/readyz') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return;
      }
      if (path === '/openapi/v2') return await openApiV2.serve(req, res);
      if (path === '/openapi/v3') return sendJson(res, 200, openApiIndex(registry, hashPrefix));
      const gv = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
      if (gv) {
        const [group, version] = gv[1] !== undefined ? ['', gv[1]] : [gv[2] as string, gv[3] as string];
        const doc = openApiDocument(registry, group, version, (_t, v) => v.schema);
        if (!doc) throw pathNotFound();
        return sendJson(res, 200, doc);
      }
      throw pathNotFound();
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof RequestAborted) debug(err.message);
      else if (err instanceof ApiError) sendError(res, err);
      else {
        console.error('rxkube apiserver: request failed', err);
        sendError(res, internalError((err as Error).message ?? String(err)));
      }
    }
  };

  const inFlight = inFlightTracker();
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight.track(req, res);
    if (journal) holdUntilDurable(res, journal);
    void handle(req, res);
  };
  const tls = options.tls ?? (isLoopbackName(host) ? undefined : await generatedTls(host));
  // Node's own Host check answers 400 without a Status; checkHostPresent answers with one.
  const server: Server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert, requireHostHeader: false }, listener) : createHttpServer({ requireHostHeader: false }, listener);
  answerClientErrors(server, inFlight);
  server.keepAliveTimeout = 65_000;
  // Watches are long, so no whole-request timeout; headers must arrive within 60 s, bodies too (readBody).
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${clientAddress(address.address)}]` : clientAddress(address.address);
  serverAddress = `${urlHost}:${address.port}`;
  const url = `${tls ? 'https' : 'http'}://${serverAddress}`;
  const caCert = tls ? (tls.ca ?? tls.cert).toString() : undefined;
  const spec: KubeconfigSpec = { server: url, token, caCert };
  let closed: Promise<void> | undefined;
  const k8s = clientNode ? await clientNode : undefined;

  return {
    url,
    port: address.port,
    host,
    token,
    faults,
    requests,
    kubeConfig: (as) => {
      if (!k8s) throw new Error('kubeConfig() needs @kubernetes/client-node, which startApiServer({ clientNode: false }) does not load; use writeKubeconfig() or kubeconfigYaml()');
      return kubeConfigFor(k8s, { ...spec, ...as });
    },
    kubeconfigYaml: (as) => kubeconfigYaml({ ...spec, ...kubectlIdentity(as, tls !== undefined) }),
    writeKubeconfig: async (path: string, as) => writeKubeconfigFile(path, { ...spec, ...kubectlIdentity(as, tls !== undefined) }),
    stats: () => ({
      resourceVersion: store.resourceVersion,
      objects: store.totalObjects(),
      watches: hub.watches().length,
      eventsDelivered: hub.watches().reduce((n, w) => n + w.delivered, 0),
      ...(journal ? { logFlushes: journal.flushes } : {}),
    }),
    close: () =>
      (closed ??= (async () => {
        faults.clear();
        aggregator.close();
        simulation?.close();
        namespaces.close();
        gc.close();
        crds.close();
        hub.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await journal?.close();
      })()),
  };
}

/**
 * The request target as Go's server reads it: a path that starts with `//` is a path, not a
 * protocol-relative URL (`new URL('//x/y', base)` would take `x` for a host, and `//?a` throws).
 */
function requestUrl(target: string): URL {
  try {
    return target.startsWith('/') ? new URL(`http://apiserver${target}`) : new URL(target, 'http://apiserver');
  } catch {
    throw badRequest(`malformed request target ${JSON.stringify(target.slice(0, 200))}`);
  }
}
