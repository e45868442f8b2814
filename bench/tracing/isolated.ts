/**
 * The tracing work of one run on its own, in a process of its own (argv: mode, runs): what
 * rxkube adds to a run when traced — the span marking the event, the run's span, the status
 * write's span and two request spans — around a run whose requests answer at once. Prints one
 * JSON line with the CPU time per run.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Primaries } from '../../lib/controller/primaries.js';
import { RunTraces } from '../../lib/controller/run-traces.js';
import type { ReconcileOutcome, ResourceEvent } from '../../lib/core/index.js';
import type { RequestFn } from '../../lib/kube/index.js';
import { Tracing } from '../../lib/observe/tracing.js';
import type { RunContext } from '../../lib/processing/index.js';

const mode = process.argv[2];
const runs = Number(process.argv[3] ?? 50_000);
let exported = 0;
const dropping: SpanExporter = {
  export: (spans: ReadableSpan[], done) => ((exported += spans.length), done({ code: 0 })),
  shutdown: () => Promise.resolve(),
};
let provider: BasicTracerProvider | undefined;
if (mode === 'sdk') {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 100_000, maxExportBatchSize: 512 })],
  });
}
const tracing = mode === 'none' ? undefined : Tracing.of(mode === 'noop' ? true : { tracerProvider: provider! });

const primary: KubernetesObject = {
  apiVersion: 'bench.rxkube.io/v1',
  kind: 'Counter',
  metadata: { name: 'c1', namespace: 'default', uid: 'u1', generation: 1 },
};
const primaries = { get: () => primary } as unknown as Primaries<KubernetesObject>;
const traces = tracing ? new RunTraces(tracing, 'counters', primaries) : undefined;
const answered: RequestFn = () => Promise.resolve(primary);
const request = tracing ? tracing.requests(answered, 'https://10.0.0.1:6443') : answered;
const id = { name: 'c1', namespace: 'default' };
const event: ResourceEvent = { id, source: 'counters', action: 'modified', primary: true };
const ctx = {
  retry: { attempt: 0, lastAttempt: false },
  cause: { type: 'event', source: 'counters', action: 'modified', primary: true, coalesced: 1 },
  queuedMs: 0,
} as unknown as RunContext;
const run = async (): Promise<void> => {
  await request({ method: 'GET', path: '/apis/bench.rxkube.io/v1/namespaces/default/counters/c1' });
  const write = () => request({ method: 'PATCH', path: '/apis/bench.rxkube.io/v1/namespaces/default/counters/c1/status', body: {} });
  await (tracing ? tracing.span('write status', { 'rxkube.controller': 'counters' }, write) : write());
};
const wrapped = traces ? traces.wrap(run) : run;
const outcome: ReconcileOutcome = {
  id,
  cause: { type: 'event', source: 'counters', action: 'modified', primary: true, coalesced: 1 },
  startedAt: 0,
  endedAt: 1,
  result: 'success',
};

const once = async (): Promise<void> => {
  traces?.eventArrived(event);
  await wrapped(id, ctx);
  traces?.ended(outcome);
};
for (let i = 0; i < 5_000; i++) await once(); // warm-up
const cpu = process.cpuUsage();
for (let i = 0; i < runs; i++) await once();
const used = process.cpuUsage(cpu);
await provider?.shutdown();
console.log(JSON.stringify({ mode, runs, cpuUsPerRun: (used.user + used.system) / runs, spans: exported }));
