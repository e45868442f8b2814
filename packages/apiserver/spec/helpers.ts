/** Shared helpers of the API server specs: a server per suite, raw HTTP, errors, waiting for state. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../src/index.js';
import { waitFor } from './wait.js';

export interface Clients {
  server: ApiServer;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  custom: k8s.CustomObjectsApi;
  coordination: k8s.CoordinationV1Api;
  ext: k8s.ApiextensionsV1Api;
}

export async function startWithClients(options: ApiServerOptions = {}): Promise<Clients> {
  const server = await startApiServer(options);
  const kc = server.kubeConfig();
  return {
    server,
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
    ext: kc.makeApiClient(k8s.ApiextensionsV1Api),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/**
 * A plain HTTP request (for what client-node cannot send: malformed bodies, odd content types).
 * A header given as undefined is left out (e.g. no Content-Type at all).
 */
export function raw(
  server: ApiServer,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string | undefined> = {},
): Promise<RawResponse> {
  const url = new URL(path, server.url);
  const all: Record<string, string | undefined> = {
    ...(server.token ? { authorization: `Bearer ${server.token}` } : {}),
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: sent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The HTTP status and Status body of a failed client-node call. */
export async function failure(p: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      const body: unknown = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, status: body as Record<string, unknown> };
    }
    throw err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Waits until `check` returns a value (not undefined/false) — for work the server does asynchronously. */
export function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  return waitFor(what, check, timeoutMs);
}

/** True when a client-node read fails with 404. */
export async function isGone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (err) {
    if (err instanceof k8s.ApiException && err.code === 404) return true;
    throw err;
  }
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown> & { metadata?: { name?: string; resourceVersion?: string; namespace?: string } };
}

/** A client-node watch that records its events and how it ended. */
export class RecordingWatch {
  readonly events: WatchEvent[] = [];
  done: Error | null | undefined = undefined;
  private controller: AbortController | undefined;

  static async start(
    kc: k8s.KubeConfig,
    path: string,
    params: Record<string, string | number | boolean | undefined> = {},
  ): Promise<RecordingWatch> {
    const w = new RecordingWatch();
    const watch = new k8s.Watch(kc);
    w.controller = await watch.watch(
      path,
      params,
      (type, object) => {
        w.events.push({ type, object: object as WatchEvent['object'] });
      },
      (err) => {
        w.done = (err as Error | null) ?? null;
      },
    );
    return w;
  }

  async waitFor(predicate: (events: WatchEvent[]) => boolean, what: string, timeoutMs = 5000): Promise<WatchEvent[]> {
    return eventually(() => (predicate(this.events) ? this.events : undefined), what, timeoutMs);
  }

  async ended(timeoutMs = 5000): Promise<Error | null> {
    return eventually(() => (this.done !== undefined ? { v: this.done } : undefined), 'the watch to end', timeoutMs).then((x) => x.v);
  }

  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`);
  }

  stop(): void {
    this.controller?.abort();
  }
}

let kubectlCheck: Promise<boolean> | undefined;

/** Whether kubectl is on PATH (the kubectl specs skip themselves without it). */
export function kubectlAvailable(): Promise<boolean> {
  kubectlCheck ??= new Promise((resolve) => {
    execFile('kubectl', ['version', '--client'], { timeout: 20_000 }, (err) => resolve(!err));
  });
  return kubectlCheck;
}

export interface KubectlResult {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs kubectl with `kubeconfig` and resolves with its exit code and trimmed output.
 * Asynchronously: a synchronous child process would block the server in this process.
 */
export function kubectlWith(kubeconfig: string, ...args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: out.trim(), err: err.trim() }),
    );
  });
}

/** A namespaced CRD (WebPage, short name wp) served at v1 (storage, status subresource, a printer column) and v1beta1. */
export function webPageCrd(overrides: Partial<k8s.V1CustomResourceDefinitionSpec> = {}): k8s.V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'webpages.sample.rxkube.dev' },
    spec: {
      group: 'sample.rxkube.dev',
      scope: 'Namespaced',
      names: { plural: 'webpages', singular: 'webpage', kind: 'WebPage', shortNames: ['wp'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          additionalPrinterColumns: [{ name: 'Title', type: 'string', jsonPath: '.spec.title' }],
        },
        {
          name: 'v1beta1',
          served: true,
          storage: false,
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        },
      ],
      ...overrides,
    },
  };
}

export interface KubectlSession {
  /** Runs kubectl against the server; resolves to its stdout (rejects on a non-zero exit). */
  kubectl(...args: string[]): Promise<string>;
  /** Runs kubectl and resolves to stdout and stderr (for `-v=8` request logs). */
  kubectlOutput(...args: string[]): Promise<{ stdout: string; stderr: string }>;
  /** A directory of the session's own, removed by `close`. */
  readonly dir: string;
  close(): Promise<void>;
}

/** kubectl with a kubeconfig for `server` and a cache directory of its own. */
export async function kubectlSession(server: ApiServer): Promise<KubectlSession> {
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await server.writeKubeconfig(kubeconfig);
  const kubectlOutput = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 30_000 },
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- it is an Error: Node types execFile's as an Omit<> of ExecException, which the rule does not recognise
        (err, stdout, stderr) => (err ? reject(Object.assign(err, { stdout, stderr })) : resolve({ stdout, stderr })),
      );
    });
  return {
    dir,
    kubectlOutput,
    kubectl: async (...args) => (await kubectlOutput(...args)).stdout,
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A ServiceAccount's token from TokenRequest, as `kubectl create token` gets it. */
export async function tokenFor(core: k8s.CoreV1Api, name: string, namespace = 'default'): Promise<string> {
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
  const request = await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [] } } });
  return request.status?.token as string;
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output: () => string;
}

/**
 * A server on `dataDir` in a child process (spec/fixtures/serve-data.ts), started through `sh -c`
 * so that `shellPrefix` (e.g. `ulimit -f 64;`) applies to it. Resolves when it listens; rejects
 * with its output if it exits first.
 */
export async function serveDataInChild(dataDir: string, shellPrefix = ''): Promise<ServerProcess> {
  const fixture = new URL('./fixtures/serve-data.ts', import.meta.url).pathname;
  const child = spawn(
    'sh',
    ['-c', `${shellPrefix} exec "$0" --import tsx --conditions=rxkube-source "$1" "$2"`, process.execPath, fixture, dataDir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', () => {
      const m = /^url (\S+)$/m.exec(out);
      if (m) resolve(m[1]);
    });
    void exited.then(() => reject(new Error(`the server process exited before it listened:\n${out}`)));
  });
  return { child, url, exited, output: () => out };
}

/** A ServiceAccount in default with a ClusterRole of `rules` bound to it, and a token for it (raw HTTP, as the admin). */
export async function saToken(server: ApiServer, name: string, rules: unknown[]): Promise<string> {
  const post = async (path: string, body: unknown): Promise<RawResponse> => {
    const res = await raw(server, 'POST', path, JSON.stringify(body));
    if (res.status !== 200 && res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res;
  };
  await post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name } });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name }, rules });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: 'default' }],
  });
  const token = await post(`/api/v1/namespaces/default/serviceaccounts/${name}/token`, { spec: { audiences: [] } });
  return (token.json as { status: { token: string } }).status.token;
}
