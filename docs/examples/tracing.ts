// An operator traced with OpenTelemetry (docs/tracing.md), against the embedded API server: spans
// go to the console, and to an OTLP collector too when OTEL_EXPORTER_OTLP_ENDPOINT is set
// (e.g. http://localhost:4318). `npx tsx docs/examples/tracing.ts`
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { DeleteControl, Operator, UpdateControl, type Reconciler } from 'rxkube';
import { createKubeClient, customResourceDefinition, installCustomResourceDefinition } from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';

// First the SDK: a context manager (so that what a run does nests under the run's span), and a
// tracer provider with its exporters, registered globally.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const spanProcessors: SpanProcessor[] = [new SimpleSpanProcessor(new ConsoleSpanExporter())];
if (process.env['OTEL_EXPORTER_OTLP_ENDPOINT']) spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
const provider = new BasicTracerProvider({ spanProcessors });
trace.setGlobalTracerProvider(provider);

interface Backup {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec: { target: string };
  status?: { lastRun?: string };
}
const backups = { apiVersion: 'example.com/v1', kind: 'Backup', plural: 'backups', namespaced: true } as const;

const tracer = trace.getTracer('backup-operator');
async function takeSnapshot(target: string, signal: AbortSignal): Promise<void> {
  // Your own spans nest under the run's (and so do the HTTP calls an instrumentation traces).
  await tracer.startActiveSpan('take snapshot', async (span) => {
    span.setAttribute('backup.target', target);
    await new Promise((resolve) => setTimeout(resolve, 5));
    signal.throwIfAborted();
    span.end();
  });
}
async function deleteSnapshots(backup: Backup, signal: AbortSignal): Promise<void> {
  await takeSnapshot(`${backup.spec.target}/all`, signal);
}

const reconciler: Reconciler<Backup> = {
  async reconcile(backup, ctx) {
    await takeSnapshot(backup.spec.target, ctx.signal);
    ctx.logger.info('snapshot taken'); // the line carries trace_id and span_id
    return UpdateControl.patchStatus({ ...backup, status: { lastRun: new Date().toISOString() } });
  },
  async cleanup(backup, ctx) {
    ctx.setRunTimeout(10 * 60_000);
    await deleteSnapshots(backup, ctx.signal);
    return DeleteControl.defaultDelete();
  },
};

const server = await startApiServer();
const kubeConfig = server.kubeConfig();
await installCustomResourceDefinition(
  createKubeClient(kubeConfig),
  customResourceDefinition({ group: 'example.com', version: 'v1', kind: 'Backup', plural: 'backups' }),
);

const operator = new Operator({ kubeConfig, tracing: true });
operator.register(reconciler, { resource: backups, runTimeoutMs: 60_000 });
await operator.start();

const client = createKubeClient(kubeConfig).resource<Backup>(backups);
await client.create({ metadata: { name: 'nightly', namespace: 'default' }, spec: { target: 's3://backups/nightly' } });
while (!(await client.get({ name: 'nightly', namespace: 'default' })).status?.lastRun)
  await new Promise((resolve) => setTimeout(resolve, 50));

await operator.stop();
await provider.shutdown(); // exports what the batch still holds
await server.close();
