/** Kubeconfig loading: from a file, the environment or the in-cluster service account, read without client-node. */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';
// client-node's own parsing of kubeconfig entries: a module of its own, without its generated API.
import { newClusters, newContexts, newUsers } from '@kubernetes/client-node/dist/config_types.js';
import { load } from 'js-yaml';
import { clientNode } from './client-node.js';

export interface LoadKubeConfigOptions {
  /** An explicit kubeconfig file; when given, nothing else is tried. */
  kubeconfigPath?: string | undefined;
  /** Context to select instead of the file's current-context. */
  context?: string | undefined;
  /** Environment to read KUBECONFIG and KUBERNETES_SERVICE_* from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Home directory holding `.kube/config` (default: os.homedir()). */
  homeDir?: string;
  /** Prefix of the service-account files for in-cluster config (default: '' = the real paths). */
  inClusterRoot?: string;
}

/** A kubeconfig as client-node's KubeConfig holds it (`loadFromOptions`), read without loading client-node. */
export interface KubeConfigData {
  readonly clusters: Cluster[];
  readonly users: User[];
  readonly contexts: Context[];
  readonly currentContext: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
const SERVICE_ACCOUNT_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * Loads a KubeConfig: the explicit path, else every existing file of KUBECONFIG (merged, the first
 * one's current-context wins), else ~/.kube/config, else the in-cluster service account.
 * Unlike client-node's loadFromDefault it never falls back to http://localhost:8080 silently:
 * when nothing works, the error names everything that was tried.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  return kubeConfigOf(readKubeConfig(options));
}

/** A client-node KubeConfig holding `data` (client-node is loaded here if it was not yet). */
export function kubeConfigOf(data: KubeConfigData): KubeConfig {
  const kc = new (clientNode().KubeConfig)();
  kc.loadFromOptions({ clusters: data.clusters, users: data.users, contexts: data.contexts, currentContext: data.currentContext });
  return kc;
}

/** What `loadKubeConfig` loads, as data: the same search, checks and errors. */
export function readKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfigData {
  const env = options.env ?? process.env;
  const tried: string[] = [];

  if (options.kubeconfigPath !== undefined) {
    if (!existsSync(options.kubeconfigPath)) {
      throw new Error(`loadKubeConfig: kubeconfigPath '${options.kubeconfigPath}' does not exist`);
    }
    return selectContext(readFile(options.kubeconfigPath), options.context, `kubeconfigPath '${options.kubeconfigPath}'`);
  }
  tried.push('kubeconfigPath option (not given)');

  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p.length > 0);
  const existing = fromEnv.filter((p) => existsSync(p));
  if (existing.length > 0) {
    const [first, ...rest] = existing.map(readFile) as [KubeConfigData, ...KubeConfigData[]];
    return selectContext(rest.reduce(merge, first), options.context, `KUBECONFIG '${existing.join(delimiter)}'`);
  }
  tried.push(fromEnv.length === 0 ? 'KUBECONFIG (unset)' : `KUBECONFIG '${fromEnv.join(delimiter)}' (no such file)`);

  const home = options.homeDir ?? homedir();
  const homeConfig = join(home, '.kube', 'config');
  if (existsSync(homeConfig)) {
    return selectContext(readFile(homeConfig), options.context, `'${homeConfig}'`);
  }
  tried.push(`'${homeConfig}' (no such file)`);

  const root = options.inClusterRoot ?? '';
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const tokenFile = `${root}${SERVICE_ACCOUNT_TOKEN}`;
  if (host && port && existsSync(tokenFile)) {
    if (options.context !== undefined) {
      throw new Error(
        `loadKubeConfig: context '${options.context}' was asked for, but the in-cluster config has no contexts to choose from`,
      );
    }
    return inCluster(host, port, root, tokenFile);
  }
  tried.push(!host || !port ? 'in-cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset)' : `in-cluster ('${tokenFile}' missing)`);
  throw new Error(`loadKubeConfig: no Kubernetes configuration found; tried ${tried.join(', ')}`);
}

/** As client-node's loadFromFile: its entry parsing, file paths made absolute against the file's folder. */
function readFile(file: string): KubeConfigData {
  try {
    const config = (load(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
    const folder = dirname(file);
    const absolute = (path: string | undefined) => (path && !isAbsolute(path) ? join(folder, path) : path);
    const clusters = newClusters(config['clusters']).map((c) => (c.caFile ? { ...c, caFile: absolute(c.caFile) } : c));
    const users = newUsers(config['users']).map((u) =>
      u.certFile || u.keyFile ? { ...u, certFile: absolute(u.certFile), keyFile: absolute(u.keyFile) } : u,
    );
    const current = config['current-context'];
    return { clusters, users, contexts: newContexts(config['contexts']), currentContext: typeof current === 'string' ? current : '' };
  } catch (err) {
    throw new Error(`loadKubeConfig: cannot read kubeconfig '${file}': ${(err as Error).message}`, { cause: err });
  }
}

/** As client-node's mergeConfig with the first file's context kept: a name defined twice is an error. */
function merge(into: KubeConfigData, other: KubeConfigData): KubeConfigData {
  const add = <T extends { name: string }>(kind: string, list: readonly T[], more: readonly T[]): T[] => {
    for (const entry of more) if (list.some((e) => e.name === entry.name)) throw new Error(`Duplicate ${kind}: ${entry.name}`);
    return [...list, ...more];
  };
  return {
    clusters: add('cluster', into.clusters, other.clusters),
    users: add('user', into.users, other.users),
    contexts: add('context', into.contexts, other.contexts),
    currentContext: into.currentContext,
  };
}

/** As client-node's loadFromCluster: the service account's token file (read again every minute) and CA. */
function inCluster(host: string, port: string, root: string, tokenFile: string): KubeConfigData {
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const namespaceFile = `${root}${SERVICE_ACCOUNT_NAMESPACE}`;
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8') : undefined;
  return {
    clusters: [{ name: 'inCluster', caFile: `${root}${SERVICE_ACCOUNT_CA}`, server, skipTLSVerify: false }],
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [
      { cluster: 'inCluster', name: 'inClusterContext', user: 'inClusterUser', ...(namespace === undefined ? {} : { namespace }) },
    ],
    currentContext: 'inClusterContext',
  };
}

function selectContext(data: KubeConfigData, context: string | undefined, source: string): KubeConfigData {
  const contextNamed = (name: string) => data.contexts.find((c) => c.name === name);
  if (context !== undefined) {
    if (!contextNamed(context)) {
      const known = data.contexts.map((c) => c.name);
      throw new Error(`loadKubeConfig: context '${context}' not found in ${source} (contexts: ${known.join(', ') || 'none'})`);
    }
    data = { ...data, currentContext: context };
  }
  const current = data.currentContext ? contextNamed(data.currentContext) : undefined;
  if (!current) {
    throw new Error(`loadKubeConfig: ${source} has no current context; pass the context option`);
  }
  if (!data.clusters.some((c) => c.name === current.cluster)) {
    throw new Error(`loadKubeConfig: context '${data.currentContext}' of ${source} names a cluster that is not defined`);
  }
  return data;
}

/**
 * The namespace this operator runs in (ES6 "the operator's own"): POD_NAMESPACE if set (the
 * downward API), else the service account's namespace file in a pod, else the kubeconfig
 * context's namespace, else 'default'.
 */
export function ownNamespace(
  kubeConfig: Pick<KubeConfig, 'contexts' | 'currentContext'>,
  options: { env?: Record<string, string | undefined>; inClusterRoot?: string } = {},
): string {
  const fromEnv = (options.env ?? process.env)['POD_NAMESPACE'];
  if (fromEnv) return fromEnv;
  const file = `${options.inClusterRoot ?? ''}${SERVICE_ACCOUNT_NAMESPACE}`;
  if (existsSync(file)) {
    const fromFile = readFileSync(file, 'utf8').trim();
    if (fromFile) return fromFile;
  }
  return kubeConfig.contexts.find((c) => c.name === kubeConfig.currentContext)?.namespace || 'default';
}
