/**
 * startApiServer: opens the data directory, assembles the server's parts (parts.ts), seeds the
 * cluster, and serves it over HTTP(S) through the router (http/router.ts).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { hostname } from 'node:os';
import type * as ClientNode from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { Journal } from './storage/durable/journal.js';
import { holdUntilDurable } from './http/durable-responses.js';
import { FLOW_CONTROL_DEFAULTS, FlowControl } from './http/flow-control.js';
import { sendError } from './http/http.js';
import type { ApiError } from './base/errors.js';
import type { Faults } from './http/faults.js';
import { isLoopbackName, requestGuard } from './http/guards.js';
import { listen, servingTls } from './http/listen.js';
import type { RequestLog } from './http/request-log.js';
import { requestHandler } from './http/router.js';
import { OpenApiV2 } from './http/openapi-v2.js';
import { kubeConfigFor, kubeconfigYaml, writeKubeconfigFile, type KubeconfigSpec } from './kubeconfig.js';
import { validateOptions, type ApiServerOptions } from './options.js';
import { assembleParts, seedCluster, stopParts, type ServerParts } from './parts.js';
import { patchEngine } from './patch/engine.js';

export type { ApiServerOptions } from './options.js';

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

export { isLoopbackName as isLoopback };

async function openDataDir(dir: string, compactBytes: number | undefined): ReturnType<typeof Journal.open> {
  try {
    return await Journal.open(dir, { compactBytes });
  } catch (err) {
    throw new Error(`startApiServer: dataDir: ${(err as Error).message}`);
  }
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
  const opened = options.dataDir ? await openDataDir(options.dataDir, options.dataCompactBytes) : undefined;
  const parts = assembleParts(options, opened?.journal);
  seedCluster(parts, opened);

  let address = '';
  const handle = requestHandler({
    resources: {
      core: parts.core,
      registry: parts.registry,
      hub: parts.hub,
      faults: parts.faults,
      requests: parts.requests,
      minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
      bodyTimeoutMs: options.bodyTimeoutMs,
      terminating: parts.terminating,
      patch: (kind, live, patch, type) => patchEngine.patch(kind, live, patch, type),
      auth: parts.auth,
      admission: parts.admission,
      conversion: parts.conversion,
    },
    registry: parts.registry,
    auth: parts.auth,
    guard: requestGuard({ bindAddress: host, allowedHosts: options.allowedHosts, machineNames: [hostname()] }),
    openApiV2: new OpenApiV2(parts.registry),
    hashPrefix: randomBytes(4).toString('hex'),
    address: () => address,
  });
  const journal = parts.journal;
  const flow = new FlowControl({
    maxInFlight: options.maxRequestsInFlight ?? FLOW_CONTROL_DEFAULTS.maxInFlight,
    maxPendingBytes: options.maxPendingResponseBytes ?? FLOW_CONTROL_DEFAULTS.maxPendingBytes,
    writeTimeoutMs: options.writeTimeoutMs ?? FLOW_CONTROL_DEFAULTS.writeTimeoutMs,
    queueWaitMs: options.requestQueueWaitMs ?? FLOW_CONTROL_DEFAULTS.queueWaitMs,
    maxQueuedPerUser: FLOW_CONTROL_DEFAULTS.maxQueuedPerUser,
  });
  // Fairness is per user as the credentials say (impersonation aside); bad credentials share one
  // queue, and the handler answers them 401.
  const userOf = (req: IncomingMessage): string => {
    try {
      return parts.auth.authenticate({ authorization: req.headers.authorization }).username;
    } catch {
      return '';
    }
  };
  const tls = await servingTls(options.tls, host);
  const listening = await listen(
    (req, res) => {
      flow.admit(req, res, userOf(req)).then(
        () => {
          if (journal) holdUntilDurable(res, journal);
          void handle(req, res);
        },
        (err: unknown) => {
          if (!res.headersSent && !res.destroyed) sendError(res, err as ApiError);
        },
      );
    },
    { host, port: options.port ?? 0, tls },
  );
  address = listening.address;
  const url = `${tls ? 'https' : 'http'}://${address}`;
  const spec: KubeconfigSpec = { server: url, token: options.token, caCert: tls ? (tls.ca ?? tls.cert).toString() : undefined };
  const k8s = clientNode ? await clientNode : undefined;
  return serverHandle(parts, {
    url,
    port: listening.port,
    host,
    spec,
    k8s,
    https: tls !== undefined,
    close: () => closeHttp(listening.server),
  });
}

/** Stops accepting, and ends the open connections (watches included) rather than wait for them. */
function closeHttp(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** What startApiServer gives its caller: the address, kubeconfigs, the test hooks, stats and close. */
function serverHandle(
  parts: ServerParts,
  at: {
    url: string;
    port: number;
    host: string;
    spec: KubeconfigSpec;
    k8s: typeof ClientNode | undefined;
    https: boolean;
    close: () => Promise<void>;
  },
): ApiServer {
  const { store, hub, journal } = parts;
  const { spec, k8s } = at;
  let closed: Promise<void> | undefined;
  return {
    url: at.url,
    port: at.port,
    host: at.host,
    token: spec.token,
    faults: parts.faults,
    requests: parts.requests,
    kubeConfig: (as) => {
      if (!k8s)
        throw new Error(
          'kubeConfig() needs @kubernetes/client-node, which startApiServer({ clientNode: false }) does not load; use writeKubeconfig() or kubeconfigYaml()',
        );
      return kubeConfigFor(k8s, { ...spec, ...as });
    },
    kubeconfigYaml: (as) => kubeconfigYaml({ ...spec, ...kubectlIdentity(as, at.https) }),
    writeKubeconfig: async (path: string, as) => writeKubeconfigFile(path, { ...spec, ...kubectlIdentity(as, at.https) }),
    stats: () => ({
      resourceVersion: store.resourceVersion,
      objects: store.totalObjects(),
      watches: hub.watches().length,
      eventsDelivered: hub.watches().reduce((n, w) => n + w.delivered, 0),
      ...(journal ? { logFlushes: journal.flushes } : {}),
    }),
    close: () =>
      (closed ??= (async () => {
        stopParts(parts);
        await at.close();
        await journal?.close();
      })()),
  };
}
