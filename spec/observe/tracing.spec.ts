/**
 * Traces of runs with the OpenTelemetry SDK a user installs today, its in-memory exporter and
 * its AsyncLocalStorage context manager, for one reconciliation of the WebPage demo against the
 * embedded API server.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import type { Reconciler } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { managedConfig, managedReconciler } from '../../demos/webpage/managed.js';
import { WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { capturingLogger } from '../controller/fixtures.js';
import { ConfigurationError } from '../../lib/core/index.js';
import { Tracing } from '../../lib/observe/tracing.js';

const VALID = '<html><body><h1>Hi</h1></body></html>';

describe('tracing: one reconciliation of the WebPage demo as a trace', function () {
  this.timeout(30_000);
  let cluster: TestCluster;
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let contextManager: AsyncLocalStorageContextManager;

  beforeEach(async () => {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 50 } } });
  });
  afterEach(async () => {
    await cluster.close();
    await provider.shutdown();
    context.disable();
  });

  /** The managed demo, whose reconcile makes a span of its own and logs a line. */
  const withUserSpan: Reconciler<WebPage> = {
    ...managedReconciler,
    reconcile: (page, ctx) =>
      provider.getTracer('the-users-code').startActiveSpan('user work', async (span) => {
        ctx.logger.info('reconciling in the user span');
        try {
          return await managedReconciler.reconcile(page, ctx);
        } finally {
          span.end();
        }
      }),
  };

  it('a run span with its attributes, linked to the change; request, dependent, status-write and user spans under it; log lines carry its ids', async () => {
    const { logger, lines } = capturingLogger('info');
    const operator = cluster.operator({ logger, tracing: { tracerProvider: provider } });
    operator.register(withUserSpan, managedConfig);
    await operator.start();
    const page = await cluster.apply(WEBPAGE, webPage('site', VALID));
    await eventually(
      'site ready',
      async () => (await cluster.client.resource<WebPage>(WEBPAGE).find({ name: 'site', namespace: 'default' }))?.status?.ready === true,
    );

    const spans = exporter.getFinishedSpans();
    const childrenOf = (parent: ReadableSpan) => spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
    // The run of the WebPage's creation (the demo keeps no finalizer: it reconciles at once).
    const run = spans.find((s) => s.name === 'webpage' && s.attributes['rxkube.cause.action'] === 'added');
    expect(run, `a run span among ${spans.map((s) => s.name).join(', ')}`).to.not.equal(undefined);
    if (!run) return;
    expect(run.kind).to.equal(SpanKind.INTERNAL);
    expect(run.parentSpanContext).to.equal(undefined); // a trace of its own
    expect(run.attributes).to.include({
      'rxkube.controller': 'webpage',
      'rxkube.run': 'reconcile',
      'rxkube.resource.kind': 'WebPage',
      'rxkube.resource.namespace': 'default',
      'rxkube.resource.name': 'site',
      'rxkube.resource.uid': page.metadata?.uid,
      'rxkube.resource.generation': 1,
      'rxkube.cause': 'event',
      'rxkube.cause.source': 'webpage',
      'rxkube.cause.coalesced': 1,
      'rxkube.retry.attempt': 0,
      'rxkube.outcome': 'success',
    });
    expect(run.attributes['rxkube.queue.duration_ms']).to.be.a('number');
    expect(run.status.code).to.not.equal(SpanStatusCode.ERROR);
    // Linked to the span that marks the watch event's arrival.
    const arrival = spans.find((s) => s.name === 'webpage added' && s.attributes['rxkube.resource.name'] === 'site');
    expect(arrival?.kind).to.equal(SpanKind.CONSUMER);
    expect(run.links.map((l) => l.context.spanId)).to.deep.equal([arrival?.spanContext().spanId]);
    // A later run says what it scheduled next, and links to each change it covers.
    const later = spans.find((s) => s.name === 'webpage' && s.attributes['rxkube.reschedule.reason'] === 'maxInterval');
    expect(later?.attributes['rxkube.reschedule.after_ms']).to.be.within(35_999_000, 36_001_000);
    expect(later?.links.length).to.equal(later?.attributes['rxkube.cause.coalesced']);

    const children = childrenOf(run);
    const names = children.map((s) => s.name);
    // Each dependent of the workflow, with its ready condition under it.
    for (const dependent of ['configmap', 'deployment', 'service']) expect(names, names.join(', ')).to.include(`reconcile ${dependent}`);
    const deployment = children.find((s) => s.name === 'reconcile deployment')!;
    expect(deployment.attributes).to.include({ 'rxkube.dependent': 'deployment', 'rxkube.dependent.operation': 'reconcile' });
    const deploymentChildren = childrenOf(deployment);
    expect(deploymentChildren.map((s) => s.name)).to.include('readyPostcondition deployment');
    // A dependent's requests: client spans with HTTP semantic conventions.
    const request = deploymentChildren.find((s) => s.kind === SpanKind.CLIENT);
    expect(request?.attributes['http.request.method']).to.be.oneOf(['GET', 'PATCH']);
    expect(String(request?.attributes['url.full'])).to.match(/^https?:\/\/[^/]+\/apis\/apps\/v1\/namespaces\/default\/deployments/);
    expect(request?.attributes['server.address']).to.be.a('string');
    // The status write, and its PATCH.
    const statusWrite = children.find((s) => s.name === 'write status')!;
    const patch = childrenOf(statusWrite).find((s) => s.kind === SpanKind.CLIENT);
    expect(patch?.attributes).to.include({ 'http.request.method': 'PATCH' });
    expect(String(patch?.attributes['url.path'])).to.match(/\/webpages\/site\/status$/);
    // The user's own span nests under the run.
    const user = children.find((s) => s.name === 'user work');
    expect(user, names.join(', ')).to.not.equal(undefined);
    expect(user?.spanContext().traceId).to.equal(run.spanContext().traceId);

    // Logs joined to the trace: the user's line in the run carries the run's ids.
    const line = lines().find((l) => l['msg'] === 'reconciling in the user span');
    expect(line).to.include({ trace_id: run.spanContext().traceId, span_id: run.spanContext().spanId });
    // Lists and watches of the informers make no spans: only requests inside a run do.
    expect(spans.filter((s) => s.kind === SpanKind.CLIENT && s.parentSpanContext === undefined)).to.deep.equal([]);
    expect(trace.getSpan(context.active())).to.equal(undefined);
  });
});

describe('tracing: the option', () => {
  it('a span ended with a thrown value that is not an Error says what it was, not "[object Object]"', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    Tracing.of({ tracerProvider: provider })?.startRoot('run', {}, []).end({ kind: 'Status', code: 409, reason: 'Conflict' });
    const [span] = exporter.getFinishedSpans();
    expect(span?.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: '{"kind":"Status","code":409,"reason":"Conflict"}' });
    await provider.shutdown();
  });

  it('is true, false or { tracerProvider }; anything else is a ConfigurationError naming it', () => {
    expect(Tracing.of(undefined)).to.equal(undefined);
    expect(Tracing.of(false)).to.equal(undefined);
    expect(Tracing.of(true)).to.be.instanceOf(Tracing);
    expect(() => Tracing.of('yes' as never)).to.throw(
      ConfigurationError,
      /^tracing: must be true, false or \{ tracerProvider \}, got "yes"/,
    );
    expect(() => Tracing.of({ tracerProvider: {} } as never)).to.throw(
      ConfigurationError,
      /^tracing\.tracerProvider: must be an OpenTelemetry TracerProvider/,
    );
    expect(() => Tracing.of({ provider: new BasicTracerProvider() } as never)).to.throw(
      ConfigurationError,
      /^tracing\.provider: is not an option/,
    );
  });

  it('tells whether a context manager carries the active span (without one nothing nests under a run)', () => {
    const tracing = Tracing.of(true)!;
    expect(tracing.hasContextManager()).to.equal(false);
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      expect(tracing.hasContextManager()).to.equal(true);
    } finally {
      context.disable();
    }
  });
});
