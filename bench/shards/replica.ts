// One replica of bench:shards: bench:e2e's rxkube variant, sharded (`sharding: { replicas: 'auto' }`)
// under the identity in RXKUBE_BENCH_IDENTITY. Prints one JSON line per change of its shard
// status ({ member, members, settled, handovers }) and records its status writes for the probe.
import { Operator } from '../../lib/operator/index.js';
import { loadKubeConfig } from '../../lib/kube/index.js';
import { createLogger } from '../../lib/observe/index.js';
import { COUNTER_RESOURCE, counterReconciler } from '../e2e/variants/counter-reconciler.js';

const identity = process.env['RXKUBE_BENCH_IDENTITY'];
if (!identity) throw new Error('bench/shards/replica: RXKUBE_BENCH_IDENTITY must name this replica');

const probe = globalThis as { e2eWrites?: number; e2eWritten?: Set<string> };
probe.e2eWrites = 0;
probe.e2eWritten = new Set();
const reconciler = counterReconciler((counter) => {
  probe.e2eWrites = (probe.e2eWrites ?? 0) + 1;
  probe.e2eWritten?.add(counter.metadata?.name ?? '');
});

const operator = new Operator({ kubeConfig: loadKubeConfig(), logger: createLogger({ level: 'warn' }), handleSignals: true });
const registered = operator.register(reconciler, {
  resource: COUNTER_RESOURCE,
  namespaces: ['default'],
  sharding: { replicas: 'auto', identity },
});
registered.shardStatus$?.subscribe(({ member, members, settled, handovers }) =>
  process.stdout.write(`${JSON.stringify({ member, members, settled, handovers })}\n`),
);
await operator.start();
