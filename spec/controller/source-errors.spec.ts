import { expect } from 'chai';
import { Registry } from 'prom-client';
import { defer, map, Subject, throwError, type Observable } from 'rxjs';
import { ConfigurationError, resourceEvent, type ResourceEvent } from '../../lib/core/index.js';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { inboundSource, perResourcePolling, pollingSource } from '../../lib/sources/index.js';
import { capturingLogger, createWidget, eventually, getWidget, startEnv, widget, widgetConfig, type Env, type Widget } from './fixtures.js';

/** Counts runs by the source that caused them, into the primary's status. */
function countingReconciler(): Reconciler<Widget> {
  let runs = 0;
  return {
    reconcile(w, ctx) {
      runs++;
      const source = ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type;
      return UpdateControl.patchStatus({ ...w, status: { runs, source } });
    },
  };
}

const FAST_BACKOFF = { initialMs: 20, maxMs: 40, jitter: 0 };
const w1 = { name: 'w1', namespace: 'default' };

describe('controller: a user source that errors is contained (ES5, OB3)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  const metric = async (registry: Registry, source: string) => {
    const found = (await registry.getSingleMetric('rxkube_source_errors_total')?.get())?.values.find((v) => v.labels['source'] === source);
    return found?.value ?? 0;
  };
  const health = async (url: string, path: string) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, body: await res.text() };
  };

  it('ES5, OB3: an inbound source whose producer errors is logged with its name, counted, subscribed again after a backoff, and the controller keeps reconciling', async () => {
    const producers: Subject<ResourceEvent>[] = [];
    // Each subscription is one connection to the producer (a queue, a webhook feed).
    const feed = {
      name: 'feed',
      events$: defer(() => {
        const producer = new Subject<ResourceEvent>();
        producers.push(producer);
        return producer;
      }),
    };
    const { logger, lines } = capturingLogger('info');
    const registry = new Registry();
    const op = env.operator({ logger, registry, health: { port: 0 } });
    // The default policy: subscribed again after the watch backoff (0.8–1.6 s for the first error).
    op.register(countingReconciler(), widgetConfig({ sources: [feed] }));
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('first run', async () => (await getWidget(env, 'w1'))?.status?.['runs'] === 1);

    producers.at(-1)!.error(new Error('feed connection lost'));
    await eventually('subscribed again', () => producers.length === 2, 5_000);
    producers.at(-1)!.next(resourceEvent('w1', 'trigger', { source: 'feed', primary: false }));
    await eventually('the new subscription triggers runs', async () => (await getWidget(env, 'w1'))?.status?.['source'] === 'feed');

    const failed = lines().find((l) => l['msg'] === 'event source failed; subscribing again after a backoff');
    expect(failed?.['source']).to.equal('feed');
    expect((failed?.['err'] as { message?: string } | undefined)?.message).to.equal('feed connection lost');
    expect(lines().filter((l) => (l['level'] as number) >= 60)).to.deep.equal([]);
    expect(await metric(registry, 'feed')).to.equal(1);
    expect((await health(op.healthUrl!, '/healthz')).status).to.equal(200);
    expect((await health(op.healthUrl!, '/readyz')).status, 'readiness is not affected unless asked').to.equal(200);
  });

  it('ES5: a custom source whose mapper throws, and an Observable source that errors at once, are subscribed again; the others go on', async () => {
    const inbound = inboundSource('hooks');
    let mapped = 0;
    const mapper$ = inbound.events$.pipe(
      map((event) => {
        mapped++;
        if (event.object === 'bad') throw new Error('cannot map this payload');
        return event;
      }),
    );
    let attempts = 0;
    const broken$: Observable<ResourceEvent> = defer(() =>
      ++attempts < 3 ? throwError(() => new Error('no connection')) : new Subject<ResourceEvent>(),
    );
    const registry = new Registry();
    const op = env.operator({ registry });
    op.register(countingReconciler(), widgetConfig({ sources: [mapper$, broken$], sourceErrors: { backoff: FAST_BACKOFF } }));
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('first run', async () => (await getWidget(env, 'w1'))?.status?.['runs'] === 1);
    inbound.push(w1, 'bad');
    await eventually('the mapper failed', () => mapped === 1);
    await eventually('the failing source was tried again', () => attempts === 3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    inbound.push(w1, 'good');
    await eventually('a push after the failure runs the primary', async () => (await getWidget(env, 'w1'))?.status?.['source'] === 'hooks');
    expect(await metric(registry, 'sources[0]')).to.equal(1);
    expect(await metric(registry, 'sources[1]')).to.equal(2);
  });

  it('ES5: a polling fetch that throws synchronously is a failed fetch: polling goes on (one and per-resource)', async () => {
    let calls = 0;
    const poll = pollingSource<{ seen: boolean }>({
      name: 'poll',
      intervalMs: 30,
      fetch: () => {
        calls++;
        if (calls === 2) throw new Error('thrown, not rejected');
        return Promise.resolve(new Map([[w1, { seen: calls > 2 }]]));
      },
    });
    let perCalls = 0;
    const perResource = perResourcePolling({
      name: 'per',
      intervalMs: 30,
      fetch: () => {
        perCalls++;
        if (perCalls === 1) throw new Error('thrown, not rejected');
        return Promise.resolve({ v: 1 });
      },
    });
    const registry = new Registry();
    const op = env.operator({ registry });
    op.register(countingReconciler(), widgetConfig({ sources: [poll, perResource] }));
    await op.start();
    perResource.track(w1);
    await createWidget(env, widget('w1'));
    await eventually(
      'polling went on past the throw',
      async () => calls >= 4 && perCalls >= 2 && (await getWidget(env, 'w1'))?.status?.['runs'] !== undefined,
    );
    await eventually(
      'both fetch failures counted',
      async () => (await metric(registry, 'poll')) === 1 && (await metric(registry, 'per')) === 1,
    );
  });

  it('ES5, OB3: with resubscribe false a failed source is left stopped and, when asked, /readyz names it; the controller keeps reconciling', async () => {
    const producer = new Subject<ResourceEvent>();
    const op = env.operator({ health: { port: 0 } });
    op.register(
      countingReconciler(),
      widgetConfig({ sources: [{ name: 'feed', events$: producer }], sourceErrors: { resubscribe: false, affectsReadiness: true } }),
    );
    await op.start();
    expect((await health(op.healthUrl!, '/readyz')).status).to.equal(200);
    producer.error(new Error('feed connection lost'));
    const ready = await health(op.healthUrl!, '/readyz');
    expect(ready.status).to.equal(503);
    expect(ready.body).to.contain('feed').and.to.contain('feed connection lost');
    expect((await health(op.healthUrl!, '/healthz')).status).to.equal(200);
    expect(producer.observed, 'left stopped').to.equal(false);
    await createWidget(env, widget('w1'));
    await eventually('primaries still reconciled', async () => (await getWidget(env, 'w1'))?.status?.['runs'] === 1);
  });

  it('ES5: sourceErrors with a bad value is a ConfigurationError naming the option', () => {
    const op = env.operator();
    const bad = (sourceErrors: unknown) => () =>
      op.register(countingReconciler(), widgetConfig({ name: `w-${Math.random()}`, sourceErrors: sourceErrors as never }));
    expect(bad({ resubscribe: 'yes' }))
      .to.throw(ConfigurationError)
      .with.property('option', 'sourceErrors.resubscribe');
    expect(bad({ backof: {} }))
      .to.throw(ConfigurationError)
      .with.property('option', 'sourceErrors.backof');
    expect(bad({ backoff: { initialMs: -1 } }))
      .to.throw(ConfigurationError)
      .with.property('option', 'sourceErrors.backoff');
    expect(bad(5)).to.throw(ConfigurationError).with.property('option', 'sourceErrors');
  });
});
