/**
 * An embedded API server with CRDs installed and operators that are stopped with it: what an
 * integration test of an operator needs, over real HTTP with the real client.
 */
import { CoreV1Api, type KubeConfig, type KubernetesObject, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { ApiServer, ApiServerOptions } from '@rxkube/apiserver';
import type { Operator, OperatorOptions } from '../../operator/index.js';
import {
  builtinResources,
  createKubeClient,
  installCustomResourceDefinition,
  resolveDescriptor,
  type KubeClient,
  type ResourceDescriptor,
} from '../../kube/index.js';
import { harnessOperator } from '../harness.js';
import { eventually } from '../wait.js';
import { loadApiServer } from './apiserver.js';

export interface TestClusterOptions extends ApiServerOptions {
  /** Created, and waited for until served, before `startTestCluster` resolves. */
  readonly crds?: readonly V1CustomResourceDefinition[];
}

/** A ServiceAccount to act as: RBAC decides what it may do, as on a real cluster. */
export interface ServiceAccountIdentity {
  readonly serviceAccount: string;
  /** Default 'default'. */
  readonly namespace?: string;
  /** Lifetime of the token (TokenRequest `expirationSeconds`, at least 600; default 24 hours). */
  readonly expirationSeconds?: number;
}

export interface TestCluster {
  readonly server: ApiServer;
  /** The admin's (system:masters): every right. */
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
  /**
   * A KubeConfig that acts as a ServiceAccount (created if missing) with a token from
   * TokenRequest, so requests RBAC does not allow fail with the real server's 403.
   */
  kubeConfigFor(identity: ServiceAccountIdentity): Promise<KubeConfig>;
  /**
   * An operator on this cluster with a silent logger unless you pass one; stopped by `close()`.
   * It acts as the admin unless given a `kubeConfig` (e.g. from `kubeConfigFor`).
   */
  operator(options?: Omit<OperatorOptions, 'kubeConfig'> & { kubeConfig?: KubeConfig }): Operator;
  /** Server-side applies `obj` as the field manager 'rxkube-test' (creates or updates). */
  apply<T extends KubernetesObject>(resource: ResourceDescriptor, obj: T): Promise<T>;
  /** Creates a namespace and resolves with its name. */
  createNamespace(name: string): Promise<string>;
  /** Resolves once the server has exactly `count` watches open (an operator's informers, say); rejects after `timeoutMs`. */
  watchesOpen(count: number, timeoutMs?: number): Promise<void>;
  /** Stops every operator made here, then the server. */
  close(): Promise<void>;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const { crds = [], ...serverOptions } = options;
  const server = await (await loadApiServer()).startApiServer(serverOptions);
  const kubeConfig = server.kubeConfig();
  const client = createKubeClient(kubeConfig);
  const operators: Operator[] = [];
  try {
    for (const crd of crds) await installCustomResourceDefinition(client, crd, { timeoutMs: 5000 });
  } catch (err) {
    await server.close();
    throw err;
  }
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return {
    server,
    kubeConfig,
    client,
    async kubeConfigFor({ serviceAccount, namespace = 'default', expirationSeconds = 24 * 3600 }) {
      await core
        .createNamespacedServiceAccount({ namespace, body: { metadata: { name: serviceAccount } } })
        .catch((err: { code?: number }) => {
          if (err.code !== 409) throw err;
        });
      const request = await core.createNamespacedServiceAccountToken({
        name: serviceAccount,
        namespace,
        body: { spec: { audiences: [], expirationSeconds } },
      });
      const token = request.status?.token;
      if (!token) throw new Error(`kubeConfigFor: TokenRequest for ServiceAccount ${namespace}/${serviceAccount} returned no token`);
      return server.kubeConfig({ token, namespace });
    },
    operator(operatorOptions = {}) {
      const { kubeConfig: own = kubeConfig, ...rest } = operatorOptions;
      const { operator } = harnessOperator(own, rest);
      operators.push(operator);
      return operator;
    },
    async createNamespace(name) {
      await client.resource(builtinResources.namespace).create({ metadata: { name } });
      return name;
    },
    async watchesOpen(count, timeoutMs) {
      await eventually(
        () => `${count} open watches (have ${server.stats().watches})`,
        () => server.stats().watches === count,
        timeoutMs,
      );
    },
    apply(resource, obj) {
      const d = resolveDescriptor(resource);
      return client
        .resource<typeof obj>(d)
        .apply({ apiVersion: d.apiVersion, kind: d.kind, ...obj }, { fieldManager: 'rxkube-test', force: true });
    },
    async close() {
      await Promise.all(operators.map((operator) => operator.stop()));
      await server.close();
    },
  };
}
