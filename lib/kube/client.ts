/** The Kubernetes client: typed reads, lists, watches and writes of one resource type, with their options and errors. */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { isRecord, redactJson, redactText, secretValues } from '../core/index.js';
import { apiVersionPath, resolveDescriptor, resourcePath, type ResolvedDescriptor, type ResourceDescriptor } from './descriptor.js';
import { kubeConfigOf, type KubeConfigData } from './config.js';
import { directConnection, type DirectConnection } from './direct.js';
import { classifyError, errorMessage, KubeApiError } from './errors.js';
import { createDirectRequestFn, createRequestFn, type RequestFn } from './request.js';
import { formatFieldSelector, formatLabelSelector, type FieldSelector, type LabelSelector } from './selectors.js';
import { rxkubeUserAgent } from './user-agent.js';

/** Names one object. `namespace` is required for namespaced types and ignored for cluster-scoped ones. */
export interface ObjectRef {
  name: string;
  namespace?: string | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

export interface WriteOptions extends RequestOptions {
  fieldManager?: string | undefined;
  dryRun?: boolean | undefined;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict' | undefined;
}

export interface ApplyOptions extends RequestOptions {
  /** Required by server-side apply: who owns the applied fields. */
  fieldManager: string;
  /** Take over fields another manager owns instead of failing with 409. */
  force?: boolean | undefined;
  dryRun?: boolean | undefined;
}

export interface ListOptions extends RequestOptions {
  /** For a namespaced type: undefined lists all namespaces. */
  namespace?: string | undefined;
  labelSelector?: LabelSelector | undefined;
  fieldSelector?: FieldSelector | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan' | undefined;
}

export interface DeleteOptions extends RequestOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' | undefined;
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  dryRun?: boolean | undefined;
}

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export type PatchType = 'apply' | 'merge' | 'json' | 'strategic';

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = Object.freeze({
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
});

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  /** e.g. 'status'. */
  subresource?: string | undefined;
  /** Only for type 'apply'. */
  force?: boolean | undefined;
}

/** A list answer as the server sends it (note `metadata.continue`, not client-node's `_continue`). */
export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** All pages of a list together. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/**
 * A typed client for one resource type. Answers are the server's JSON (timestamps are strings);
 * list items get the descriptor's apiVersion and kind when the server leaves them out.
 */
export interface ResourceClient<T extends KubernetesObject = KubernetesObject> {
  readonly descriptor: ResolvedDescriptor;
  get(ref: ObjectRef, options?: RequestOptions): Promise<T>;
  /** Like get, but resolves to undefined when the object does not exist. */
  find(ref: ObjectRef, options?: RequestOptions): Promise<T | undefined>;
  list(options?: ListOptions): Promise<KubeList<T>>;
  /** Follows `continue` tokens (pages of `limit`, default 500) and returns every item. */
  listAll(options?: Omit<ListOptions, 'continue'>): Promise<ListResult<T>>;
  create(obj: T, options?: WriteOptions): Promise<T>;
  /** PUT; metadata.resourceVersion, when set, makes it conditional (409 when stale). */
  replace(obj: T, options?: WriteOptions): Promise<T>;
  replaceStatus(obj: T, options?: WriteOptions): Promise<T>;
  /** The object as the server returned it (still there with deletionTimestamp if finalizers hold it), or undefined when the server answered with a Status. */
  delete(ref: ObjectRef, options?: DeleteOptions): Promise<T | undefined>;
  /** Server-side apply of the given intent (metadata.managedFields is dropped, as the server requires). */
  apply(obj: T, options: ApplyOptions): Promise<T>;
  applyStatus(obj: T, options: ApplyOptions): Promise<T>;
  mergePatch(ref: ObjectRef, patch: unknown, options?: WriteOptions): Promise<T>;
  mergePatchStatus(ref: ObjectRef, patch: unknown, options?: WriteOptions): Promise<T>;
  jsonPatch(ref: ObjectRef, operations: JsonPatchOperation[], options?: WriteOptions): Promise<T>;
  jsonPatchStatus(ref: ObjectRef, operations: JsonPatchOperation[], options?: WriteOptions): Promise<T>;
  /** Any patch type, on the object or a subresource. */
  patch(ref: ObjectRef, body: unknown, options: PatchOptions): Promise<T>;
}

export interface KubeClient {
  readonly kubeConfig: KubeConfig;
  /** The User-Agent of its requests and watches (an operator's: `rxkube/<version> (<name>)`). */
  readonly userAgent?: string | undefined;
  readonly request: RequestFn;
  resource<T extends KubernetesObject = KubernetesObject>(descriptor: ResourceDescriptor): ResourceClient<T>;
  /** Resolves plural and scope of apiVersion+kind from the server's discovery documents. */
  discover(apiVersion: string, kind: string, options?: RequestOptions): Promise<ResolvedDescriptor>;
}

/** Options of `createKubeClient` and `kubeClientOf`. */
export interface KubeClientOptions {
  /** The User-Agent of every request and watch (default `rxkube/<version>`). */
  readonly userAgent?: string | undefined;
}

/** One client per KubeConfig; its resource clients share client-node's connection handling. */
export function createKubeClient(kubeConfig: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  const userAgent = options.userAgent ?? rxkubeUserAgent();
  const request = createRequestFn(kubeConfig, userAgent);
  return {
    kubeConfig,
    userAgent,
    request,
    resource: <T extends KubernetesObject = KubernetesObject>(d: ResourceDescriptor) => resourceClient<T>(request, d),
    discover: (apiVersion, kind, options) => discoverDescriptor(request, apiVersion, kind, options),
  };
}

const directConnections = new WeakMap<KubeClient, DirectConnection>();

/**
 * The client of a kubeconfig read as data (`readKubeConfig`). When the current context needs no
 * auth plugin and no proxy, its requests and watches go straight to the server and client-node
 * is not loaded for them; `kubeConfig` is then made when first read. Otherwise, as
 * `createKubeClient`.
 */
export function kubeClientOf(data: KubeConfigData, options: KubeClientOptions = {}): KubeClient {
  const connection = directConnection(data);
  if (!connection) return createKubeClient(kubeConfigOf(data), options);
  const userAgent = options.userAgent ?? rxkubeUserAgent();
  const request = createDirectRequestFn(connection, userAgent);
  let kubeConfig: KubeConfig | undefined;
  const client: KubeClient = {
    get kubeConfig() {
      return (kubeConfig ??= kubeConfigOf(data));
    },
    userAgent,
    request,
    resource: <T extends KubernetesObject = KubernetesObject>(d: ResourceDescriptor) => resourceClient<T>(request, d),
    discover: (apiVersion, kind, options) => discoverDescriptor(request, apiVersion, kind, options),
  };
  directConnections.set(client, connection);
  return client;
}

/** Where a watch of `client` goes: its direct connection (`kubeClientOf`), else its KubeConfig. */
export function watchTargetOf(client: KubeClient): KubeConfig | DirectConnection {
  return directConnections.get(client) ?? client.kubeConfig;
}

/**
 * `client` with every request, its resource clients' too, sent through `wrap(client.request)`
 * (a run's client that aborts with the run, a client whose requests are traced).
 */
export function wrapRequests(client: KubeClient, wrap: (request: RequestFn) => RequestFn): KubeClient {
  const request = wrap(client.request);
  const wrapped: KubeClient = {
    get kubeConfig() {
      return client.kubeConfig;
    },
    request,
    resource: <T extends KubernetesObject = KubernetesObject>(d: ResourceDescriptor) => resourceClient<T>(request, d),
    discover: (apiVersion, kind, options) => discoverDescriptor(request, apiVersion, kind, options),
  };
  const connection = directConnections.get(client);
  if (connection) directConnections.set(wrapped, connection);
  return wrapped;
}

/** A request function whose requests also abort with `signal()` (read as each request is sent). */
export function abortingWith(request: RequestFn, signal: () => AbortSignal): RequestFn {
  return (req) => {
    const own = signal();
    return request({ ...req, signal: req.signal === undefined || req.signal === own ? own : AbortSignal.any([req.signal, own]) });
  };
}

/** The API server's URL `client` sends to, without loading client-node for a direct client. */
export function serverOf(client: KubeClient): string | undefined {
  return directConnections.get(client)?.server ?? client.kubeConfig.getCurrentCluster()?.server;
}

/** Whether `kube` is a KubeClient (as opposed to the KubeConfig one is made from). */
export function isKubeClient(kube: KubeClient | KubeConfig): kube is KubeClient {
  const candidate = kube as Partial<KubeClient>;
  return typeof candidate.resource === 'function' && typeof candidate.request === 'function';
}

/**
 * A request function whose errors carry none of the values of the Secret it wrote: a server may
 * echo them (a 422 naming an invalid value, an admission policy's message), and errors end up in
 * logs, Events and status.
 */
function redactingSecretValues(request: RequestFn): RequestFn {
  return async (req) => {
    try {
      return await request(req);
    } catch (error) {
      const values = secretValues(req.body, true);
      if (values.length === 0) throw error;
      if (error instanceof KubeApiError) throw new KubeApiError(error.code, redactJson(error.body, values), error.headers, error.request);
      if (error instanceof Error) {
        error.message = redactText(error.message, values);
        if (error.stack !== undefined) error.stack = redactText(error.stack, values);
      }
      throw error;
    }
  };
}

/** The object's name and namespace. */
export function refOf(obj: KubernetesObject): ObjectRef {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`${obj.kind ?? 'object'}: metadata.name is required`);
  return { name, namespace: obj.metadata?.namespace };
}

export function resourceClient<T extends KubernetesObject = KubernetesObject>(
  send: RequestFn,
  descriptor: ResourceDescriptor,
): ResourceClient<T> {
  const d = resolveDescriptor(descriptor);
  const request = d.apiVersion === 'v1' && d.kind === 'Secret' ? redactingSecretValues(send) : send;

  const pathOf = (ref: ObjectRef, subresource?: string): string =>
    resourcePath(d, { name: ref.name, namespace: d.namespaced ? ref.namespace : undefined, subresource });

  const withTypeMeta = (obj: T, verb: string): T => {
    if (obj === null || typeof obj !== 'object') throw new Error(`${d.kind} ${verb}: the object must be an object`);
    if (obj.apiVersion !== undefined && obj.apiVersion !== d.apiVersion) {
      throw new Error(`${d.kind} ${verb}: object apiVersion '${obj.apiVersion}' does not match the resource's '${d.apiVersion}'`);
    }
    if (obj.kind !== undefined && obj.kind !== d.kind) {
      throw new Error(`${d.apiVersion} ${verb}: object kind '${obj.kind}' does not match the resource's '${d.kind}'`);
    }
    return { ...obj, apiVersion: d.apiVersion, kind: d.kind };
  };

  // An item that is no object is left as it came, for the caller to name (an informer refuses the list).
  const fillTypeMeta = (obj: T): T =>
    !isRecord(obj) || (obj.apiVersion && obj.kind) ? obj : { ...obj, apiVersion: obj.apiVersion ?? d.apiVersion, kind: obj.kind ?? d.kind };

  const writeQuery = (o: WriteOptions | undefined) => ({
    fieldManager: o?.fieldManager,
    dryRun: o?.dryRun ? 'All' : undefined,
    fieldValidation: o?.fieldValidation,
  });

  const list = async (options: ListOptions = {}): Promise<KubeList<T>> => {
    if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 0)) {
      throw new Error(`${d.kind} list: limit must be a non-negative integer (got ${options.limit})`);
    }
    const answer = (await request({
      method: 'GET',
      path: resourcePath(d, { namespace: d.namespaced ? options.namespace : undefined }),
      query: {
        labelSelector: formatLabelSelector(options.labelSelector) || undefined,
        fieldSelector: formatFieldSelector(options.fieldSelector) || undefined,
        limit: options.limit || undefined,
        continue: options.continue || undefined,
        resourceVersion: options.resourceVersion,
        resourceVersionMatch: options.resourceVersionMatch,
      },
      signal: options.signal,
    })) as KubeList<T>;
    return { ...answer, items: (answer.items ?? []).map(fillTypeMeta) };
  };

  const patch = async (ref: ObjectRef, body: unknown, options: PatchOptions): Promise<T> => {
    const contentType = PATCH_CONTENT_TYPES[options.type];
    if (!contentType) throw new Error(`${d.kind} patch: unknown patch type '${String(options.type)}'`);
    if (options.type === 'apply' && !options.fieldManager) {
      throw new Error(`${d.kind} '${ref.name}': server-side apply needs a fieldManager`);
    }
    if (options.force !== undefined && options.type !== 'apply') {
      throw new Error(`${d.kind} '${ref.name}': force is only allowed with server-side apply`);
    }
    return (await request({
      method: 'PATCH',
      path: pathOf(ref, options.subresource),
      query: { ...writeQuery(options), force: options.force },
      body,
      contentType,
      signal: options.signal,
    })) as T;
  };

  const apply = (obj: T, options: ApplyOptions, subresource?: string): Promise<T> => {
    const intent = withTypeMeta(obj, 'apply');
    if (intent.metadata?.managedFields !== undefined) {
      const { managedFields: _dropped, ...metadata } = intent.metadata;
      intent.metadata = metadata;
    }
    return patch(refOf(intent), intent, { ...options, type: 'apply', subresource });
  };

  const put = async (obj: T, options: WriteOptions | undefined, subresource?: string): Promise<T> => {
    const body = withTypeMeta(obj, 'replace');
    return (await request({
      method: 'PUT',
      path: pathOf(refOf(body), subresource),
      query: writeQuery(options),
      body,
      signal: options?.signal,
    })) as T;
  };

  const client: ResourceClient<T> = {
    descriptor: d,
    get: async (ref, options) => (await request({ method: 'GET', path: pathOf(ref), signal: options?.signal })) as T,
    find: async (ref, options) => {
      try {
        return await client.get(ref, options);
      } catch (err) {
        if (classifyError(err) === 'notFound') return undefined;
        throw err;
      }
    },
    list,
    listAll: async (options = {}) => {
      const items: T[] = [];
      let next: string | undefined;
      let resourceVersion = '';
      do {
        const page = await list({ limit: 500, ...options, continue: next });
        items.push(...page.items);
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
        next = page.metadata?.continue || undefined;
      } while (next);
      return { items, resourceVersion };
    },
    create: async (obj, options) => {
      const body = withTypeMeta(obj, 'create');
      const namespace = body.metadata?.namespace;
      if (d.namespaced && !namespace) {
        throw new Error(
          `${d.kind} '${body.metadata?.name ?? body.metadata?.generateName ?? ''}' is namespaced: metadata.namespace is required`,
        );
      }
      return (await request({
        method: 'POST',
        path: resourcePath(d, { namespace: d.namespaced ? namespace : undefined }),
        query: writeQuery(options),
        body,
        signal: options?.signal,
      })) as T;
    },
    replace: (obj, options) => put(obj, options),
    replaceStatus: (obj, options) => put(obj, options, 'status'),
    delete: async (ref, options = {}) => {
      const answer = await request({
        method: 'DELETE',
        path: pathOf(ref),
        query: {
          propagationPolicy: options.propagationPolicy,
          gracePeriodSeconds: options.gracePeriodSeconds,
          dryRun: options.dryRun ? 'All' : undefined,
        },
        body: options.preconditions ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: options.preconditions } : undefined,
        signal: options.signal,
      });
      const isStatus = typeof answer === 'object' && answer !== null && (answer as { kind?: unknown }).kind === 'Status';
      return isStatus || answer === undefined ? undefined : (answer as T);
    },
    apply: (obj, options) => apply(obj, options),
    applyStatus: (obj, options) => apply(obj, options, 'status'),
    mergePatch: (ref, body, options) => patch(ref, body, { ...options, type: 'merge' }),
    mergePatchStatus: (ref, body, options) => patch(ref, body, { ...options, type: 'merge', subresource: 'status' }),
    jsonPatch: (ref, ops, options) => patch(ref, ops, { ...options, type: 'json' }),
    jsonPatchStatus: (ref, ops, options) => patch(ref, ops, { ...options, type: 'json', subresource: 'status' }),
    patch,
  };
  return client;
}

interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Reads `/api/v1` or `/apis/<group>/<version>` and finds the resource serving `kind`. */
export async function discoverDescriptor(
  request: RequestFn,
  apiVersion: string,
  kind: string,
  options: RequestOptions = {},
): Promise<ResolvedDescriptor> {
  const path = apiVersionPath(apiVersion);
  let answer: { resources?: DiscoveredResource[] };
  try {
    answer = (await request({ method: 'GET', path, signal: options.signal })) as typeof answer;
  } catch (err) {
    if (classifyError(err) === 'notFound') {
      throw new Error(`discover ${kind}: apiVersion '${apiVersion}' is not served by the API server (GET ${path} answered 404)`, {
        cause: err,
      });
    }
    throw new Error(`discover ${kind} in ${apiVersion}: ${errorMessage(err)}`, { cause: err });
  }
  const resources = (answer.resources ?? []).filter((r) => !r.name.includes('/'));
  const found = resources.find((r) => r.kind === kind);
  if (!found) {
    const kinds = [...new Set(resources.map((r) => r.kind))].sort();
    throw new Error(`discover: kind '${kind}' is not served by apiVersion '${apiVersion}' (it serves: ${kinds.join(', ') || 'nothing'})`);
  }
  return resolveDescriptor({ apiVersion, kind, plural: found.name, namespaced: found.namespaced });
}
