// @dot-i/k8s-operator variant of the end-to-end bench (its own client-node 0.20, installed in this folder).
import k8sOperator from '@dot-i/k8s-operator';

const { default: Operator, ResourceEventType } = k8sOperator;
globalThis.e2eMark?.('imports');

const silent = { debug() {}, info() {}, warn() {}, error() {} };
class CounterOperator extends Operator {
  async init() {
    await this.watchResource(
      'bench.rxkube.io',
      'v1',
      'counters',
      async (event) => {
        if (event.type === ResourceEventType.Deleted) return;
        globalThis.e2eRuns = (globalThis.e2eRuns ?? 0) + 1;
        const counter = event.object;
        const status = { observedGeneration: counter.metadata.generation, value: counter.spec.value * 2 };
        if (counter.status?.observedGeneration === status.observedGeneration && counter.status?.value === status.value) return;
        await this.patchResourceStatus(event.meta, status);
      },
      'default',
    );
  }
}
await new CounterOperator(silent).start();
globalThis.e2eMark?.('started');
