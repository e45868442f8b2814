import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

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

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads a KubeConfig: the explicit path, else every existing file of KUBECONFIG (merged, the first
 * one's current-context wins), else ~/.kube/config, else the in-cluster service account.
 * Unlike client-node's loadFromDefault it never falls back to http://localhost:8080 silently:
 * when nothing works, the error names everything that was tried.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kc = new KubeConfig();
  const tried: string[] = [];

  if (options.kubeconfigPath !== undefined) {
    if (!existsSync(options.kubeconfigPath)) {
      throw new Error(`loadKubeConfig: kubeconfigPath '${options.kubeconfigPath}' does not exist`);
    }
    loadFile(kc, options.kubeconfigPath);
    return selectContext(kc, options.context, `kubeconfigPath '${options.kubeconfigPath}'`);
  }
  tried.push('kubeconfigPath option (not given)');

  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p.length > 0);
  const existing = fromEnv.filter((p) => existsSync(p));
  if (existing.length > 0) {
    const [first, ...rest] = existing as [string, ...string[]];
    loadFile(kc, first);
    for (const file of rest) {
      const other = new KubeConfig();
      loadFile(other, file);
      kc.mergeConfig(other, true);
    }
    return selectContext(kc, options.context, `KUBECONFIG '${existing.join(delimiter)}'`);
  }
  tried.push(fromEnv.length === 0 ? 'KUBECONFIG (unset)' : `KUBECONFIG '${fromEnv.join(delimiter)}' (no such file)`);

  const home = options.homeDir ?? homedir();
  const homeConfig = join(home, '.kube', 'config');
  if (existsSync(homeConfig)) {
    loadFile(kc, homeConfig);
    return selectContext(kc, options.context, `'${homeConfig}'`);
  }
  tried.push(`'${homeConfig}' (no such file)`);

  const root = options.inClusterRoot ?? '';
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const tokenFile = `${root}${SERVICE_ACCOUNT_TOKEN}`;
  if (host && port && existsSync(tokenFile)) {
    withEnv(env, () => kc.loadFromCluster(root));
    if (options.context !== undefined) {
      throw new Error(`loadKubeConfig: context '${options.context}' was asked for, but the in-cluster config has no contexts to choose from`);
    }
    return kc;
  }
  tried.push(
    !host || !port
      ? 'in-cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset)'
      : `in-cluster ('${tokenFile}' missing)`,
  );
  throw new Error(`loadKubeConfig: no Kubernetes configuration found; tried ${tried.join(', ')}`);
}

function loadFile(kc: KubeConfig, file: string): void {
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new Error(`loadKubeConfig: cannot read kubeconfig '${file}': ${(err as Error).message}`, { cause: err });
  }
}

function selectContext(kc: KubeConfig, context: string | undefined, source: string): KubeConfig {
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new Error(`loadKubeConfig: context '${context}' not found in ${source} (contexts: ${known.join(', ') || 'none'})`);
    }
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentContext() || !kc.getContextObject(kc.getCurrentContext())) {
    throw new Error(`loadKubeConfig: ${source} has no current context; pass the context option`);
  }
  if (!kc.getCurrentCluster()) {
    throw new Error(`loadKubeConfig: context '${kc.getCurrentContext()}' of ${source} names a cluster that is not defined`);
  }
  return kc;
}

// client-node's loadFromCluster reads process.env itself; a caller-provided env must win for its duration.
function withEnv(env: Record<string, string | undefined>, fn: () => void): void {
  if (env === process.env) return fn();
  const keys = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
  const saved = keys.map((k) => process.env[k]);
  try {
    for (const k of keys) setEnv(k, env[k]);
    fn();
  } finally {
    keys.forEach((k, i) => setEnv(k, saved[i]));
  }
}

function setEnv(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace this operator runs in (ES6 "the operator's own"): POD_NAMESPACE if set (the
 * downward API), else the service account's namespace file in a pod, else the kubeconfig
 * context's namespace, else 'default'.
 */
export function ownNamespace(
  kubeConfig: KubeConfig,
  options: { env?: Record<string, string | undefined>; inClusterRoot?: string } = {},
): string {
  const fromEnv = (options.env ?? process.env)['POD_NAMESPACE'];
  if (fromEnv) return fromEnv;
  const file = `${options.inClusterRoot ?? ''}${SERVICE_ACCOUNT_NAMESPACE}`;
  if (existsSync(file)) {
    const fromFile = readFileSync(file, 'utf8').trim();
    if (fromFile) return fromFile;
  }
  return kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace || 'default';
}
