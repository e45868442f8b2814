/**
 * What a status claims against the spec it stands for: a status that says it has seen an older
 * generation than the object's, while its operator keeps rescheduling the object without writing
 * it, tells a reader something that is no longer true (Acto's oracle on what the status claims).
 */
import type { KubernetesObject } from '@kubernetes/client-node';

/** Runs of the object, each without a write to it, after which a lagging status is a finding. */
export const STATUS_RUNS = 3;

interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly observedGeneration?: number;
}

/**
 * How the status of `o` lags its generation: `status.observedGeneration`, or a `Ready` condition
 * that is True for an older generation; undefined when it is current or says nothing of it.
 */
export function statusLag(o: KubernetesObject): string | undefined {
  const generation = o.metadata?.generation;
  const status = (o as { status?: { observedGeneration?: unknown; conditions?: unknown } }).status;
  if (typeof generation !== 'number' || !status) return undefined;
  if (typeof status.observedGeneration === 'number' && status.observedGeneration < generation) {
    return `status.observedGeneration is ${status.observedGeneration}, the object's generation ${generation}`;
  }
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
  const ready = conditions.find((c) => c.type === 'Ready' && c.status === 'True');
  if (ready && typeof ready.observedGeneration === 'number' && ready.observedGeneration < generation) {
    return `condition Ready is True for generation ${ready.observedGeneration}, the object's generation is ${generation}`;
  }
  return undefined;
}
