/** What the soak's processes share: the custom resource and the messages they send each other. */
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { customResourceDefinition, descriptorOf } from '../../lib/kube/index.js';

export interface Soak extends KubernetesObject {
  spec: { value: number };
  status?: { observedGeneration?: number; value?: number };
}

export const soakCrd = customResourceDefinition({
  group: 'soak.rxkube.dev',
  kind: 'Soak',
  plural: 'soaks',
  spec: { type: 'object', properties: { value: { type: 'integer' } } },
  status: { type: 'object', properties: { observedGeneration: { type: 'integer' }, value: { type: 'integer' } } },
});

export const SOAK = descriptorOf(soakCrd);
/** How the server's fault injection names the resource. */
export const SOAK_RESOURCE = `${SOAK.plural}.soak.rxkube.dev`;
export const NAMESPACE = 'default';
export const LEASE_NAME = 'soak-operator';

/** A fault the orchestrator asks the server process to inject. */
export type ServerCommand =
  | { type: 'dropWatches'; abrupt: boolean }
  | { type: 'stallWatches'; ms: number }
  | { type: 'failRequests'; status: number; ms: number; fraction: number }
  | { type: 'compact' }
  | { type: 'clear' };

export type ServerMessage = { type: 'listening'; url: string } | { type: 'memory'; at: number; heapUsed: number; rss: number };

export type OperatorMessage =
  | { type: 'started'; identity: string; healthUrl: string }
  | { type: 'begin'; name: string; at: number }
  | { type: 'run'; name: string; startedAt: number; endedAt: number; result: 'success' | 'failure' | 'skipped' }
  | { type: 'leader'; leader: boolean; at: number }
  | { type: 'memory'; at: number; heapUsed: number; rss: number };

export interface OperatorSettings {
  readonly url: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly failRate: number;
  readonly logFile: string;
}

/** Memory samples of a child process every few seconds. */
export const MEMORY_SAMPLE_MS = 5_000;

/** A KubeConfig for the embedded server (or a proxy in front of it) at `url`. */
export function kubeConfigFor(url: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromClusterAndUser({ name: 'soak', server: url, skipTLSVerify: true }, { name: 'soak', token: 'soak' });
  return kubeConfig;
}
