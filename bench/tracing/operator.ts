/**
 * One measured operator of bench/tracing.ts, in a process of its own (argv: mode, n):
 *   none  — no `tracing` option (no OpenTelemetry module loaded by rxkube);
 *   noop  — `tracing: true` and no tracer provider registered: the API's no-op tracer;
 *   sdk   — the OpenTelemetry SDK a user installs today: BasicTracerProvider, a BatchSpanProcessor
 *           to an exporter that drops the spans, the AsyncLocalStorage context manager.
 * Every counter gets one run at start-up: a GET through ctx.client and a status patch. Prints one
 * JSON line: the CPU time (user + system) and wall time from `start()` until every run ended.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Operator, UpdateControl, type Reconciler } from '../../lib/index.js';
import { createLogger } from '../../lib/observe/index.js';
import { COUNTERS, NAMESPACE } from '../e2e/counter.js';
import type { Counter } from '../e2e/variants/counter-reconciler.js';

const mode = process.argv[2];
const n = Number(process.argv[3]);
if (mode !== 'none' && mode !== 'noop' && mode !== 'sdk')
  throw new Error(`tracing/operator.ts: mode must be none, noop or sdk, got ${mode}`);

let exported = 0;
const dropping: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};
let provider: BasicTracerProvider | undefined;
if (mode === 'sdk') {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 100_000, maxExportBatchSize: 512 })],
  });
}

let runs = 0;
let allDone: () => void = () => undefined;
const done = new Promise<void>((resolve) => (allDone = resolve));
const reconciler: Reconciler<Counter> = {
  async reconcile(counter, ctx) {
    const current = await ctx.client
      .resource<Counter>(COUNTERS)
      .get({ name: counter.metadata!.name!, namespace: NAMESPACE }, { signal: ctx.signal });
    if (++runs === n) allDone();
    return UpdateControl.patchStatus({
      ...current,
      status: { observedGeneration: current.metadata?.generation, value: current.spec.value * 2 },
    });
  },
};

const operator = new Operator({
  logger: createLogger({ level: 'warn' }),
  ...(mode === 'noop' ? { tracing: true } : mode === 'sdk' ? { tracing: { tracerProvider: provider! } } : {}),
});
operator.register(reconciler, { resource: COUNTERS, namespaces: [NAMESPACE], maxReconciliationInterval: 0 });
const cpu = process.cpuUsage();
const wall = performance.now();
await operator.start();
await done;
// Let the last status writes finish before the clock stops.
await new Promise((resolve) => setTimeout(resolve, 200));
const used = process.cpuUsage(cpu);
const wallMs = performance.now() - wall - 200;
await operator.stop();
await provider?.forceFlush();
console.log(JSON.stringify({ mode, runs, cpuMs: (used.user + used.system) / 1000, wallMs, spans: exported }));
await provider?.shutdown();
process.exit(0);
