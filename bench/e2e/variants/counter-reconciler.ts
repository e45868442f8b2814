// The reconciler of the rxkube variants (bench:e2e's rxkube, bench:shards' replicas): status =
// { observedGeneration, value: spec.value * 2 }; runs counted in globalThis.e2eRuns for the probe.
// Module paths that exist in older trees too (the rxkube-before variant compiles this file there).
import { UpdateControl, type Reconciler } from '../../../lib/controller/index.js';

export interface Counter {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number };
  spec: { value: number };
  status?: { observedGeneration?: number; value?: number };
}

export const COUNTER_RESOURCE = { apiVersion: 'bench.rxkube.io/v1', kind: 'Counter', plural: 'counters' } as const;

const runs = globalThis as { e2eRuns?: number };

/** `onWrite` is told each counter whose status the run writes. */
export function counterReconciler(onWrite?: (counter: Counter) => void): Reconciler<Counter> {
  return {
    reconcile(counter) {
      runs.e2eRuns = (runs.e2eRuns ?? 0) + 1;
      const status = { observedGeneration: counter.metadata?.generation, value: counter.spec.value * 2 };
      if (counter.status?.observedGeneration === status.observedGeneration && counter.status?.value === status.value)
        return UpdateControl.noUpdate();
      onWrite?.(counter);
      return UpdateControl.patchStatus({ ...counter, status });
    },
  };
}
