/**
 * One connection pool per cluster identity for every request made with a KubeConfig.
 *
 * @kubernetes/client-node 2.x builds a new undici Agent for every request whose kubeconfig has
 * any TLS setting (a CA, a client certificate, insecure-skip-tls-verify): a new connection, and
 * against a real cluster a TLS handshake, per request, and descriptors that pile up under load.
 * client-node has no option for it, so `shareConnections` wraps its request path in this one
 * place: `createDispatcher` answers with a pooled Agent per identity, and watches get a pool of
 * their own so that long-lived watches never starve the bounded pool of other requests.
 *
 * It relies on two internals of client-node's KubeConfig (`createDispatcherOptions` and the
 * private `createDispatcher`, both called from `applySecurityAuthentication`) and on
 * `RequestContext.getUrl/getDispatcher/setDispatcher`; spec/kube/connections.spec.ts fails when
 * an upgrade changes them.
 */
import type { Cluster, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';

/** Connections per server for requests other than watches (default of `shareConnections`). */
export const DEFAULT_POOL_CONNECTIONS = 32;

/** What client-node's `createDispatcherOptions` answers (client-node 2.0). */
type DispatcherPlan = { type: 'agent'; connect: Record<string, unknown> } | { type: 'proxy' | 'socks'; uri: string } | { type: 'none' };

interface ClientNodeInternals {
  createDispatcherOptions(cluster: Cluster | null, agentOptions: object): DispatcherPlan;
  createDispatcher(cluster: Cluster | null, agentOptions: object): Dispatcher | undefined;
  applySecurityAuthentication(context: RequestContext): Promise<void>;
}

export interface Pool {
  readonly requests: Dispatcher;
  readonly watches: Dispatcher;
}

const SHARED = Symbol.for('rxkube.sharedConnections');
const pools = new Map<string, Pool>();
const poolOf = new WeakMap<Dispatcher, Pool>();
/** The last plan and pool per cluster object, user and pool size: most requests end here, without building a key. */
const recent = new WeakMap<object, Map<string, { readonly plan: DispatcherPlan; readonly pool: Pool }>>();
const NO_CLUSTER = {};

/** Options of `shareConnections`. */
export interface ShareConnectionsOptions {
  /** Most connections per server for requests other than watches (default 32). */
  connections?: number;
}

/**
 * Makes every request sent with `kc` (client-node API clients, `Watch`, rxkube's request
 * function) use one keep-alive pool per cluster identity (server, TLS options including the CA
 * and client certificate, user). Idempotent; changes `kc` in place and returns it.
 */
export function shareConnections(kc: KubeConfig, options: ShareConnectionsOptions = {}): KubeConfig {
  const marked = kc as KubeConfig & { [SHARED]?: true };
  if (marked[SHARED]) return kc;
  const internals = clientNodeInternals(kc);
  const connections = options.connections ?? DEFAULT_POOL_CONNECTIONS;
  const original = internals.createDispatcher.bind(kc);
  const authenticate = internals.applySecurityAuthentication.bind(kc);

  internals.createDispatcher = (cluster, agentOptions) => {
    const plan = internals.createDispatcherOptions(cluster, agentOptions);
    const user = kc.getCurrentUser()?.name;
    let byUser = recent.get(cluster ?? NO_CLUSTER);
    if (!byUser) recent.set(cluster ?? NO_CLUSTER, (byUser = new Map<string, { readonly plan: DispatcherPlan; readonly pool: Pool }>()));
    // client-node reads the CA and client certificate anew for every request (files may rotate):
    // comparing them with the last plan's bytes costs no allocation, a key string costs one per request.
    const userKey = `${user ?? ''}\0${connections}`;
    const last = byUser.get(userKey);
    if (last && samePlan(last.plan, plan)) return last.pool.requests;
    const key = identityKey(cluster, user, plan, connections);
    let pool = pools.get(key);
    if (!pool) {
      pool =
        plan.type === 'agent' || plan.type === 'none'
          ? agentPool(plan.type === 'agent' ? plan.connect : {}, connections)
          : proxyPool(original(cluster, agentOptions));
      pools.set(key, pool);
      poolOf.set(pool.requests, pool);
    }
    byUser.set(userKey, { plan, pool });
    return pool.requests;
  };
  internals.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    // A kubeconfig without TLS options leaves the dispatcher unset (undici's unbounded global one).
    const requests = context.getDispatcher() ?? internals.createDispatcher(kc.getCurrentCluster(), {});
    const pool = requests && poolOf.get(requests);
    if (pool) context.setDispatcher(isWatch(context) ? pool.watches : pool.requests);
  };
  marked[SHARED] = true;
  return kc;
}

/** The internals `shareConnections` replaces, or an error naming what a client-node upgrade changed. */
export function clientNodeInternals(kc: KubeConfig): ClientNodeInternals {
  const internals = kc as unknown as Partial<ClientNodeInternals>;
  const missing = (['createDispatcherOptions', 'createDispatcher', 'applySecurityAuthentication'] as const).filter(
    (name) => typeof internals[name] !== 'function',
  );
  if (missing.length > 0) {
    throw new Error(
      `rxkube shareConnections: @kubernetes/client-node's KubeConfig has no ${missing.join(', ')} any more; connection reuse needs updating for this client-node version`,
    );
  }
  return internals as ClientNodeInternals;
}

/** A pool for requests and one for watches, with the TLS options given. */
export function agentPool(connect: Record<string, unknown>, connections: number): Pool {
  // Watches hold their connection for minutes: a pool of their own, unbounded (one per watch).
  return {
    requests: new Agent({ connect, connections }),
    watches: new Agent({ connect }),
  };
}

function proxyPool(dispatcher: Dispatcher | undefined): Pool {
  if (!dispatcher) throw new Error('rxkube shareConnections: client-node built no dispatcher for a proxied cluster');
  return { requests: dispatcher, watches: dispatcher };
}

/** `watch=true` in the query (a value of another parameter would have its `=` and `&` escaped). */
const WATCH_QUERY = /[?&]watch=true(?:&|#|$)/;

function isWatch(context: RequestContext): boolean {
  return WATCH_QUERY.test(context.getUrl());
}

function samePlan(a: DispatcherPlan, b: DispatcherPlan): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'none' || b.type === 'none') return true;
  if (a.type !== 'agent' || b.type !== 'agent') return a.type !== 'agent' && b.type !== 'agent' && a.uri === b.uri;
  const names = Object.keys(a.connect);
  if (names.length !== Object.keys(b.connect).length) return false;
  return names.every((name) => sameValue(a.connect[name], b.connect[name]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b);
}

/** A plain string, not a hash: built for every request, it must cost next to nothing. */
function identityKey(cluster: Cluster | null, user: string | undefined, plan: DispatcherPlan, connections: number): string {
  let key = `${cluster?.server ?? ''}\0${cluster?.name ?? ''}\0${user ?? ''}\0${plan.type}\0${connections}`;
  if (plan.type === 'proxy' || plan.type === 'socks') key += `\0${plan.uri}`;
  if (plan.type === 'agent') {
    for (const name of Object.keys(plan.connect).sort()) {
      const value = plan.connect[name];
      key += `\0${name}=${Buffer.isBuffer(value) ? value.toString('base64') : typeof value === 'string' ? value : JSON.stringify(value)}`;
    }
  }
  return key;
}
