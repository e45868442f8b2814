/**
 * startApiServer: assembles storage, registry, core, watch hub, the controllers inside the server
 * (CRDs, garbage collector, namespaces, optional simulators) and the HTTP front.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { debuglog } from 'node:util';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { builtinTypes } from './builtins.js';
import { ApiCore } from './core.js';
import { CrdController } from './crds.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.js';
import { ApiError, internalError, methodNotAllowed, pathNotFound, unauthorized } from './errors.js';
import { Faults } from './faults.js';
import { GarbageCollector } from './gc.js';
import { requestGuard, isLoopbackName } from './guards.js';
import { handleResource, type HandlerContext } from './handlers.js';
import { parsePath, RequestAborted, sendError, sendJson } from './http.js';
import type { JsonObject } from './json.js';
import { isJsonObject } from './json.js';
import { kubeConfigFor, kubeconfigYaml, writeKubeconfigFile, type KubeconfigSpec } from './kubeconfig.js';
import { NamespaceController, NAMESPACES_KEY } from './namespaces.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import { patchEngine } from './patching.js';
import { Registry } from './registry.js';
import { DeploymentSimulator, type SimulateOptions } from './simulators.js';
import { Store } from './store.js';
import { WatchHub } from './watch.js';

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
  /** State is loaded from this file at start (if it exists) and saved to it by `close()`. */
  dataFile?: string;
  /** Simulated built-in controllers (off by default). */
  simulate?: SimulateOptions;
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP. */
  tls?: { key: string | Buffer; cert: string | Buffer };
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

export interface ApiServerStats {
  resourceVersion: number;
  objects: number;
  watches: number;
  eventsDelivered: number;
}

export interface ApiServer {
  /** The server's base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The bearer token clients must send, if any. */
  readonly token: string | undefined;
  /** A client-node KubeConfig for this server (context `rxkube`, namespace `default`). */
  kubeConfig(): KubeConfig;
  kubeconfigYaml(): string;
  writeKubeconfig(path: string): Promise<void>;
  readonly faults: Faults;
  stats(): ApiServerStats;
  /** Stops serving, ends open watches, and saves state to `dataFile` if given. */
  close(): Promise<void>;
}

/** Aborted requests and the like, one line each, with NODE_DEBUG=rxkube-apiserver. */
const debug = debuglog('rxkube-apiserver');

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const STATE_KIND = 'RxkubeApiServerState';

/** Compares a request's Authorization header with the expected one in constant time. */
function sameSecret(given: string | undefined, expected: Buffer): boolean {
  const g = Buffer.from(given ?? '');
  return g.length === expected.length && timingSafeEqual(g, expected);
}

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
  const ready = o.simulate?.deployments?.readyAfterMs;
  if (ready !== undefined && !(ready >= 0)) throw new TypeError(`startApiServer: simulate.deployments.readyAfterMs must be >= 0, got ${ready}`);
  if (o.bookmarkIntervalMs !== undefined && !(o.bookmarkIntervalMs > 0)) throw new TypeError(`startApiServer: bookmarkIntervalMs must be > 0, got ${o.bookmarkIntervalMs}`);
  if (o.historySize !== undefined && !(Number.isInteger(o.historySize) && o.historySize > 0)) {
    throw new TypeError(`startApiServer: historySize must be a positive integer, got ${o.historySize}`);
  }
}

async function readState(file: string): Promise<{ resourceVersion: number; objects: { resource: string; object: JsonObject }[] } | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`startApiServer: data file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isJsonObject(parsed) || parsed.kind !== STATE_KIND || typeof parsed.resourceVersion !== 'number' || !Array.isArray(parsed.objects)) {
    throw new Error(`startApiServer: data file ${file} is not an rxkube apiserver state file (kind ${STATE_KIND})`);
  }
  const objects = parsed.objects.filter(
    (o): o is { resource: string; object: JsonObject } => isJsonObject(o) && typeof o.resource === 'string' && isJsonObject(o.object),
  );
  return { resourceVersion: parsed.resourceVersion, objects };
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  validateOptions(options);
  const clientNode = options.clientNode === false ? undefined : import('@kubernetes/client-node');
  const host = options.host ?? '127.0.0.1';
  const token = options.token;
  const store = new Store({ historySize: options.historySize });
  const registry = new Registry();
  for (const t of builtinTypes()) registry.add(t);
  const core = new ApiCore(store, registry, patchEngine, { continueTtlMs: options.continueTtlMs });
  const hub = new WatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs });
  const terminating = new Set<string>();
  const crds = new CrdController(core, registry, store, hub, terminating);
  const gc = new GarbageCollector(core, store, registry);
  const namespaces = new NamespaceController(core, store, registry);
  const simulator = options.simulate?.deployments ? new DeploymentSimulator(core, store, options.simulate.deployments) : undefined;
  const faults = new Faults(store, hub, options.random);

  if (options.dataFile) {
    const state = await readState(options.dataFile);
    if (state) {
      // CRDs first, so their resources are served; then everything as it was.
      store.restore(state.resourceVersion, state.objects);
      crds.serveAll();
      namespaces.resumeAll();
      simulator?.resumeAll();
    }
  }
  for (const ns of DEFAULT_NAMESPACES) {
    if (!store.get(NAMESPACES_KEY, '', ns)) core.createInternal(NAMESPACES_KEY, { metadata: { name: ns } });
  }

  const ctx: HandlerContext = {
    core,
    registry,
    hub,
    faults,
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
    bodyTimeoutMs: options.bodyTimeoutMs,
    terminating,
    patch: (kind, live, patch, type) => patchEngine.patch(kind, live, patch, type),
  };
  const hashPrefix = randomBytes(4).toString('hex');
  const expectedAuth = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  let serverAddress = '';

  const guard = requestGuard({ bindAddress: host, allowedHosts: options.allowedHosts, machineNames: [hostname()] });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      guard(req.method ?? 'GET', req.headers);
      if (expectedAuth !== undefined && !sameSecret(req.headers.authorization, expectedAuth)) throw unauthorized();
      const url = new URL(req.url ?? '/', 'http://apiserver');
      const path = url.pathname.replace(/\/+$/, '') || '/';
      const method = req.method ?? 'GET';
      const info = parsePath(path);
      if (info.kind === 'resource') {
        await handleResource(req, res, url, info.request, ctx);
        return;
      }
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

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    void handle(req, res);
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createHttpServer(listener);
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
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  serverAddress = `${urlHost}:${address.port}`;
  const url = `${options.tls ? 'https' : 'http'}://${serverAddress}`;
  const caCert = options.tls ? options.tls.cert.toString() : undefined;
  const spec: KubeconfigSpec = { server: url, token, caCert };
  let closed: Promise<void> | undefined;
  const k8s = clientNode ? await clientNode : undefined;

  return {
    url,
    port: address.port,
    host,
    token,
    faults,
    kubeConfig: () => {
      if (!k8s) throw new Error('kubeConfig() needs @kubernetes/client-node, which startApiServer({ clientNode: false }) does not load; use writeKubeconfig() or kubeconfigYaml()');
      return kubeConfigFor(k8s, spec);
    },
    kubeconfigYaml: () => kubeconfigYaml(spec),
    writeKubeconfig: (path: string) => writeKubeconfigFile(path, spec),
    stats: () => ({
      resourceVersion: store.resourceVersion,
      objects: store.totalObjects(),
      watches: hub.watches().length,
      eventsDelivered: hub.watches().reduce((n, w) => n + w.delivered, 0),
    }),
    close: () =>
      (closed ??= (async () => {
        faults.clear();
        simulator?.close();
        namespaces.close();
        gc.close();
        crds.close();
        hub.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        if (options.dataFile) {
          const state = { kind: STATE_KIND, ...store.dump() };
          const tmp = `${options.dataFile}.${process.pid}.tmp`;
          await writeFile(tmp, JSON.stringify(state));
          await rename(tmp, options.dataFile);
        }
      })()),
  };
}


