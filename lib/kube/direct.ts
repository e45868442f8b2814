/** The connection of a kubeconfig's current context that rxkube can use without client-node. */
import { readFileSync } from 'node:fs';
import type { Cluster, User } from '@kubernetes/client-node';
import type { KubeConfigData } from './config.js';
import { agentPool, DEFAULT_POOL_CONNECTIONS, type Pool } from './connections.js';

/**
 * What rxkube's requests and watches need of a kubeconfig, read from its data without
 * client-node: the server, one connection pool (TLS: CA, client certificate,
 * insecure-skip-tls-verify, tls-server-name) and the user's headers (a token, the in-cluster
 * token file read again every minute as client-node does, basic auth, impersonation).
 */
export interface DirectConnection {
  readonly server: string;
  readonly pool: Pool;
  headers(): Record<string, string>;
}

const TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * The connection of the current context, or undefined when it needs client-node: an exec or
 * auth-provider plugin (other than the in-cluster token file), or a proxy.
 */
export function directConnection(data: KubeConfigData, connections = DEFAULT_POOL_CONNECTIONS): DirectConnection | undefined {
  const context = data.contexts.find((c) => c.name === data.currentContext);
  const cluster = data.clusters.find((c) => c.name === context?.cluster);
  const user: User = data.users.find((u) => u.name === context?.user) ?? { name: '' };
  // client-node types the auth provider as `any`: a plugin's name and its own config.
  const authProvider = user.authProvider as { name?: unknown; config?: { tokenFile?: unknown } } | undefined;
  const tokenFile = authProvider?.name === 'tokenFile' ? authProvider.config?.tokenFile : undefined;
  if (!cluster || cluster.proxyUrl || user.exec || (user.authProvider && typeof tokenFile !== 'string')) return undefined;
  const fixed: Record<string, string> = {};
  if (user.username) fixed['Authorization'] = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  if (user.token) fixed['Authorization'] = `Bearer ${user.token}`;
  if (user.impersonateUser) fixed['Impersonate-User'] = user.impersonateUser;
  let token: { value: string; readAt: number } | undefined;
  const headers =
    typeof tokenFile === 'string'
      ? () => {
          const now = Date.now();
          if (!token || now - token.readAt > TOKEN_FILE_REFRESH_MS) token = { value: readFileSync(tokenFile, 'utf8'), readAt: now };
          return { ...fixed, Authorization: `Bearer ${token.value}` };
        }
      : () => fixed;
  return { server: cluster.server, pool: agentPool(tlsOptions(cluster, user), connections), headers };
}

/** As client-node's applyHTTPSOptions: files are read here, data is base64. */
function tlsOptions(cluster: Cluster, user: User): Record<string, unknown> {
  const connect: Record<string, unknown> = {};
  const bytes = (file: string | undefined, data: string | undefined) =>
    file ? readFileSync(file) : data ? Buffer.from(data, 'base64') : undefined;
  const ca = bytes(cluster.caFile, cluster.caData);
  const cert = bytes(user.certFile, user.certData);
  const key = bytes(user.keyFile, user.keyData);
  if (ca) connect['ca'] = ca;
  if (cert) connect['cert'] = cert;
  if (key) connect['key'] = key;
  if (cluster.skipTLSVerify) connect['rejectUnauthorized'] = false;
  if (cluster.tlsServerName) connect['servername'] = cluster.tlsServerName;
  return connect;
}
