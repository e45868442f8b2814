import { expect } from 'chai';
import { Registry } from 'prom-client';
import { ConfigurationError } from '../../lib/core/index.js';
import { UpdateControl, type ControllerConfig, type Reconciler } from '../../lib/controller/index.js';
import { perResourcePolling } from '../../lib/sources/index.js';
import { createWidget, deleteWidget, eventually, getWidget, startEnv, widget, widgetConfig, type Env, type Widget } from './fixtures.js';

describe('controller: a bounded cache and per-resource polling (ES5, ES7, OB2)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  const noop: Reconciler<Widget> = { reconcile: () => UpdateControl.noUpdate() };

  it('ES7: informer.bounded with a bad value is a ConfigurationError whose option names the setting', () => {
    const cases: [unknown, string][] = [
      [{ maxEntries: 0 }, 'informer.bounded.maxEntries'],
      [{ maxEntries: -5 }, 'informer.bounded.maxEntries'],
      [{ maxEntries: Number.NaN }, 'informer.bounded.maxEntries'],
      [{ maxEntries: 2.5 }, 'informer.bounded.maxEntries'],
      [{ maxEntries: 5, timeToIdleMs: -1 }, 'informer.bounded.timeToIdleMs'],
      [{ maxEntries: 5, timeToIdelMs: 1000 }, 'informer.bounded.timeToIdelMs'],
      [{}, 'informer.bounded.maxEntries'],
      [5, 'informer.bounded'],
    ];
    for (const [bounded, option] of cases) {
      const op = env.operator();
      let caught: unknown;
      try {
        op.register(noop, widgetConfig({ informer: { bounded } } as Partial<ControllerConfig<Widget>>));
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(bounded)).to.be.instanceOf(ConfigurationError);
      expect((caught as ConfigurationError).option, JSON.stringify(bounded)).to.equal(option);
    }
  });

  it('OB2, ES7: rxkube_cache_size reports what a bounded cache holds, rxkube_cache_known_objects what its informer knows', async () => {
    const registry = new Registry();
    const op = env.operator({ registry });
    let runs = 0;
    op.register(
      { reconcile: () => (runs++, UpdateControl.noUpdate<Widget>()) },
      widgetConfig({ informer: { bounded: { maxEntries: 5 } } }),
    );
    await op.start();
    for (let i = 0; i < 30; i++) await createWidget(env, widget(`w${i}`));
    await eventually('every widget reconciled', () => runs >= 30);
    const gauge = async (name: string) =>
      (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels['source'] === 'widgets.sample.rxkube.dev')?.value;
    await eventually('the gauges to settle', async () => (await gauge('rxkube_cache_known_objects')) === 30);
    expect(await gauge('rxkube_cache_size')).to.equal(5);
  });

  it('ES5: a per-resource polling source stops polling a primary once it is deleted, without followPrimaries or untrack', async () => {
    const fetches = new Map<string, number>();
    const poll = perResourcePolling<{ n: number }>({
      name: 'external',
      intervalMs: 20,
      fetch: (id) => {
        fetches.set(id.name, (fetches.get(id.name) ?? 0) + 1);
        return Promise.resolve({ n: 1 });
      },
    });
    const op = env.operator();
    op.register(
      { reconcile: (w) => (poll.track({ name: w.metadata!.name!, namespace: 'default' }), UpdateControl.noUpdate()) },
      widgetConfig({ sources: [poll] }),
    );
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('polling w1', () => (fetches.get('w1') ?? 0) >= 3);
    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    await eventually('w1 no longer tracked', () => !poll.tracked().includes('default/w1'));
    const after = fetches.get('w1');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(fetches.get('w1'), 'fetches after the delete').to.equal(after);
  });
});
