// rxkube variant of the end-to-end bench: an Operator with defaults, status = { observedGeneration, value: spec.value * 2 }.
// Module paths that exist in older trees too (the rxkube-before variant compiles this file there).
import { Operator, UpdateControl, type Reconciler } from '../../../lib/controller/index.js';
import { loadKubeConfig } from '../../../lib/kube/index.js';
import { createLogger } from '../../../lib/observe/index.js';

interface Counter {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number };
  spec: { value: number };
  status?: { observedGeneration?: number; value?: number };
}

const runs = globalThis as { e2eRuns?: number };
const counters: Reconciler<Counter> = {
  reconcile(counter) {
    runs.e2eRuns = (runs.e2eRuns ?? 0) + 1;
    const status = { observedGeneration: counter.metadata?.generation, value: counter.spec.value * 2 };
    if (counter.status?.observedGeneration === status.observedGeneration && counter.status?.value === status.value) return UpdateControl.noUpdate();
    return UpdateControl.patchStatus({ ...counter, status });
  },
};

const operator = new Operator({ kubeConfig: loadKubeConfig(), logger: createLogger({ level: 'warn' }), handleSignals: true });
operator.register(counters, { resource: { apiVersion: 'bench.rxkube.io/v1', kind: 'Counter', plural: 'counters' }, namespaces: ['default'] });
await operator.start();
