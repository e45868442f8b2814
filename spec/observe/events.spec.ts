/** The event recorder against the embedded API server: series, the per-object rate limit, failures. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { VirtualTimeScheduler } from 'rxjs';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createKubeClient, type KubeClient } from '../../lib/kube/index.js';
import { createLogger, createMetrics, EventBroadcaster, type RxkubeMetrics } from '../../lib/observe/index.js';
import { type EventBroadcasterOptions } from '../../lib/observe/events.js';
import { capturingLogger } from '../controller/fixtures.js';

interface CoreEvent extends KubernetesObject {
  reason: string;
  message: string;
  type: string;
  count?: number;
  series?: { count: number; lastObservedTime: string };
  involvedObject: { name: string; uid?: string };
  reportingComponent: string;
  reportingInstance: string;
  action: string;
}

const CORE_EVENTS = { apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true } as const;

function widget(name: string, uid = `uid-${name}`): KubernetesObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default', uid } };
}

describe('observe: the event recorder (events.k8s.io/v1)', () => {
  let server: ApiServer;
  let client: KubeClient;
  let scheduler: VirtualTimeScheduler;
  let metrics: RxkubeMetrics;
  const recorders: EventBroadcaster[] = [];

  beforeEach(async () => {
    server = await startApiServer();
    client = createKubeClient(server.kubeConfig());
    scheduler = new VirtualTimeScheduler();
    metrics = createMetrics(new Registry());
  });
  afterEach(async () => {
    await Promise.all(recorders.splice(0).map((r) => r.stop()));
    await server.close();
  });

  const recorder = (options: Partial<EventBroadcasterOptions> = {}) => {
    const r = new EventBroadcaster({
      client,
      reportingController: 'example.com/widgets',
      logger: createLogger({ level: 'silent' }),
      metrics,
      scheduler,
      ...options,
    });
    recorders.push(r);
    return r;
  };
  /** The Events about `name`, through the core view (what kubectl describe reads). */
  const eventsOf = async (name: string) =>
    (await client.resource<CoreEvent>(CORE_EVENTS).list({ namespace: 'default', fieldSelector: { 'involvedObject.name': name } })).items;
  const countOf = (e: CoreEvent) => e.series?.count ?? 1;
  /** Runs the virtual timers due up to `ms` from the start. */
  const advanceTo = (ms: number) => {
    scheduler.maxFrames = ms;
    scheduler.flush();
    scheduler.frame = ms;
  };
  const metricValue = async (name: string, labels: Record<string, string>) => {
    const metric = await metrics.registry.getSingleMetric(name)?.get();
    return metric?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
  };

  it('repeats of an event are one Event whose series.count grows; another message, reason or type is another Event', async () => {
    const events = recorder().about(widget('w'), 'Reconcile');
    for (let i = 0; i < 3; i++) events.warning('ReconcileFailed', 'backend unavailable');
    events.warning('ReconcileFailed', 'quota exceeded');
    events.normal('ReconcileFailed', 'backend unavailable');
    events.warning('Other', 'backend unavailable');
    await recorders[0].flush();
    const found = await eventsOf('w');
    expect(found.map((e) => `${e.type} ${e.reason} ${e.message} x${countOf(e)}`).sort()).to.deep.equal([
      'Normal ReconcileFailed backend unavailable x1',
      'Warning Other backend unavailable x1',
      'Warning ReconcileFailed backend unavailable x3',
      'Warning ReconcileFailed quota exceeded x1',
    ]);
    const first = found.find((e) => e.message === 'backend unavailable' && e.reason === 'ReconcileFailed' && e.type === 'Warning')!;
    expect(first).to.deep.include({
      reportingComponent: 'example.com/widgets',
      action: 'Reconcile',
      involvedObject: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'default', uid: 'uid-w' },
    });
    expect(first.reportingInstance).to.match(/^example\.com\/widgets-/);
    expect(first.metadata?.name).to.match(/^w\.[0-9a-f]+$/);

    events.warning('ReconcileFailed', 'backend unavailable');
    await recorders[0].flush();
    const again = (await eventsOf('w')).filter((e) => e.metadata?.name === first.metadata?.name);
    expect(again.map(countOf), 'the same Event, patched').to.deep.equal([4]);
    expect(await metricValue('rxkube_events_recorded_total', { type: 'Warning' })).to.equal(6);
  });

  it('rate limit: a burst of writes per object, then one per refill period; held-back repeats are written with the next token', async () => {
    const r = recorder({ burst: 2, refillMs: 60_000 });
    const a = r.about(widget('a'), 'Reconcile');
    for (const reason of ['One', 'Two', 'Three', 'Four']) a.normal(reason, 'happened');
    r.about(widget('b'), 'Reconcile').normal('One', 'happened'); // another object has its own bucket
    await r.flush();
    expect((await eventsOf('a')).map((e) => e.reason).sort()).to.deep.equal(['One', 'Two']);
    expect(await eventsOf('b')).to.have.length(1);

    advanceTo(60_000); // one token: the first held-back event
    await r.flush();
    expect((await eventsOf('a')).map((e) => e.reason).sort()).to.deep.equal(['One', 'Three', 'Two']);

    // Repeats while the bucket is empty are counted, and written as one patch when a token comes.
    a.normal('One', 'happened');
    a.normal('One', 'happened');
    await r.flush();
    expect((await eventsOf('a')).find((e) => e.reason === 'One')?.series).to.equal(undefined);
    advanceTo(180_000);
    await r.flush();
    expect(countOf((await eventsOf('a')).find((e) => e.reason === 'One')!)).to.equal(3);
    expect((await eventsOf('a')).map((e) => e.reason).sort()).to.deep.equal(['Four', 'One', 'Three', 'Two']);
  });

  it('a repeat after the series went idle (6 minutes) starts a new Event, as client-go finishes a series', async () => {
    const events = recorder().about(widget('w'), 'Reconcile');
    events.warning('Failed', 'boom');
    await recorders[0].flush();
    scheduler.frame = 6 * 60_000 + 1;
    events.warning('Failed', 'boom');
    await recorders[0].flush();
    expect((await eventsOf('w')).map(countOf)).to.deep.equal([1, 1]);
  });

  it('recording never throws and never waits: bad arguments and failed writes are logged and counted as dropped', async () => {
    const { logger, lines } = capturingLogger();
    const r = recorder({ logger });
    const events = r.about(widget('w'), 'Reconcile');
    expect(events.warning('', 'no reason')).to.equal(undefined);
    expect(events.normal('Fine', 'ok', { action: 'x'.repeat(129) })).to.equal(undefined);
    expect(
      lines()
        .filter((l) => l['msg'] === 'event not recorded')
        .map((l) => (l['err'] as { message: string }).message),
    ).to.deep.equal([
      'reason must be a non-empty string of at most 128 characters, got ""',
      `action must be a non-empty string of at most 128 characters, got "${'x'.repeat(129)}"`,
    ]);
    // The server rejects the write (the namespace does not exist): logged at warn, counted, not thrown.
    r.about({ ...widget('v'), metadata: { name: 'v', namespace: 'missing' } }, 'Reconcile').warning('Failed', 'boom');
    await r.flush();
    const failed = lines().find((l) => l['msg'] === 'event write failed');
    expect(failed?.['level']).to.equal(40);
    expect(failed?.['kind']).to.equal('notFound');
    expect(await metricValue('rxkube_events_dropped_total', { cause: 'invalid' })).to.equal(2);
    expect(await metricValue('rxkube_events_dropped_total', { cause: 'writeFailed' })).to.equal(1);
  });

  it('a message longer than the 1024 bytes the server takes is shortened, not rejected', async () => {
    recorder().about(widget('w'), 'Reconcile').warning('Failed', 'é'.repeat(1000));
    await recorders[0].flush();
    const [event] = await eventsOf('w');
    expect(Buffer.byteLength(event.message)).to.be.at.most(1024);
    expect(event.message.endsWith('…')).to.equal(true);
  });

  it('stop() drops held-back writes (counted) and records nothing more', async () => {
    const r = recorder({ burst: 1, refillMs: 60_000 });
    const events = r.about(widget('w'), 'Reconcile');
    events.normal('One', 'x');
    events.normal('Two', 'x'); // held back
    await r.stop();
    events.normal('Three', 'x');
    advanceTo(120_000);
    await r.flush();
    expect((await eventsOf('w')).map((e) => e.reason)).to.deep.equal(['One']);
    expect(await metricValue('rxkube_events_dropped_total', { cause: 'rateLimited' })).to.equal(1);
  });
});
