import type { KubernetesObject } from '@kubernetes/client-node';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import type { Primaries } from '../../lib/controller/primaries.js';
import { RunTraces } from '../../lib/controller/run-traces.js';
import type { ReconcileOutcome, ResourceEvent } from '../../lib/core/index.js';
import { MAX_LINKS, Tracing } from '../../lib/observe/index.js';
import type { RunContext } from '../../lib/processing/index.js';

const id = { name: 'w1', namespace: 'default' };
const primary: KubernetesObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { ...id, uid: 'u1', generation: 3 } };
const primaries = { get: () => primary } as unknown as Primaries<KubernetesObject>;
const event = (source = 'widgets'): ResourceEvent => ({ id, source, action: 'modified', primary: source === 'widgets' });
const ctx = (coalesced: number) =>
  ({
    retry: { attempt: 0, lastAttempt: false },
    cause: { type: 'event', source: 'inbound', action: 'modified', primary: false, coalesced },
    queuedMs: 7,
  }) as unknown as RunContext;
const outcome = (result: 'success' | 'failure', extra: Partial<ReconcileOutcome> = {}): ReconcileOutcome => ({
  id,
  cause: { type: 'event', source: 'inbound', action: 'modified', primary: false, coalesced: 1 },
  startedAt: 100,
  endedAt: 150,
  result,
  ...extra,
});

describe('run traces', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let traces: RunTraces<KubernetesObject>;

  beforeEach(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    traces = new RunTraces(Tracing.of({ tracerProvider: provider })!, 'widgets', primaries);
  });
  afterEach(async () => {
    context.disable();
    await provider.shutdown();
  });

  it("an event a source emits inside the user's span is marked under it, and the run it causes links there", async () => {
    const request = provider.getTracer('user').startSpan('POST /hooks/widget');
    context.with(trace.setSpan(context.active(), request), () => traces.eventArrived(event('inbound')));
    request.end();
    await traces.wrap(async () => undefined)(id, ctx(1));
    traces.ended(outcome('success', { reschedule: { at: 1150, reason: 'requested' } }));
    const spans = exporter.getFinishedSpans();
    const mark = spans.find((s) => s.name === 'widgets modified')!;
    const run = spans.find((s) => s.name === 'widgets')!;
    expect(mark.parentSpanContext?.spanId).to.equal(request.spanContext().spanId);
    expect(run.links.map((l) => l.context.spanId)).to.deep.equal([mark.spanContext().spanId]);
    expect(run.attributes).to.include({
      'rxkube.cause.source': 'inbound',
      'rxkube.queue.duration_ms': 7,
      'rxkube.resource.uid': 'u1',
      'rxkube.reschedule.after_ms': 1000,
      'rxkube.reschedule.reason': 'requested',
    });
  });

  it('a run covering many changes links to the first few and counts the rest; a failure marks the span and names the retry', async () => {
    for (let i = 0; i < MAX_LINKS + 3; i++) traces.eventArrived(event());
    await traces.wrap(async () => undefined)(id, ctx(MAX_LINKS + 3));
    traces.ended(outcome('failure', { error: new RangeError('no'), retry: { attempt: 1, at: 2150 } }));
    const run = exporter.getFinishedSpans().find((s) => s.name === 'widgets')!;
    expect(run.links).to.have.length(MAX_LINKS);
    expect(run.attributes).to.include({
      'rxkube.cause.links_dropped': 3,
      'rxkube.outcome': 'failure',
      'rxkube.retry.next_attempt': 1,
      'rxkube.retry.after_ms': 2000,
      'error.type': 'RangeError',
    });
    expect(run.status.code).to.equal(2); // ERROR
  });

  it('a run still open when the controller stops ends with it', async () => {
    await traces.wrap(async () => undefined)(id, ctx(1));
    expect(exporter.getFinishedSpans().filter((s) => s.name === 'widgets')).to.have.length(0);
    traces.dispose();
    expect(exporter.getFinishedSpans().find((s) => s.name === 'widgets')?.status.message).to.equal(
      'the controller stopped before the run ended',
    );
  });
});
