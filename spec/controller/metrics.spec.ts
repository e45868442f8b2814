import { expect } from 'chai';
import { Registry } from 'prom-client';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { NoRetryError } from '../../lib/core/index.js';
import { CONFIGMAPS, createWidget, eventually, getWidget, startEnv, widget, widgetConfig, type Env, type Widget } from './fixtures.js';

const LABELS = 'controller="widgets.sample.rxkube.dev",group="sample.rxkube.dev",version="v1",kind="Widget"';

describe('controller metrics and error handling', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('OB2: runs, events by source and action, cache sizes and leader status are recorded with bounded labels', async () => {
    const registry = new Registry();
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { seen: true } }),
    };
    const op = env.operator({ registry });
    op.register(reconciler, widgetConfig({ secondaries: [{ resource: CONFIGMAPS }] }));
    await op.start();
    for (const name of ['w1', 'w2', 'w3']) await createWidget(env, widget(name));
    await eventually('all three reconciled', async () => (await Promise.all(['w1', 'w2', 'w3'].map((n) => getWidget(env, n)))).every((w) => w?.status?.['seen']));
    const text = await eventually('three successes', async () => {
      const metrics = await registry.metrics();
      return metrics.includes(`rxkube_reconciliations_success_total{${LABELS}} 3`) ? metrics : undefined;
    });
    expect(text).to.include(`rxkube_reconciliations_started_total{${LABELS}} 3`);
    expect(text).to.include(`rxkube_reconciliations_active{${LABELS}} 0`);
    expect(text).to.include(`rxkube_events_received_total{${LABELS},source="widgets.sample.rxkube.dev",action="added"} 3`);
    expect(text).to.include(`rxkube_cache_size{${LABELS},source="widgets.sample.rxkube.dev"} 3`);
    expect(text).to.match(/^rxkube_leader 1$/m);
    expect(text, 'no per-resource series').to.not.match(/w1|w2|w3/);
  });

  it('UP4: updateErrorStatus sees the cause of a NoRetryError the reconciler threw, and no retry follows', async () => {
    const seen: unknown[] = [];
    let runs = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile() {
        runs++;
        throw new NoRetryError(new RangeError('spec.value is out of range'));
      },
      updateErrorStatus(_w, _ctx, error) {
        seen.push(error);
        return undefined;
      },
    };
    const op = env.operator();
    const controller = op.register(reconciler, widgetConfig());
    const outcomes: string[] = [];
    controller.outcome$.subscribe((o) => outcomes.push(`${o.result}${o.retry ? ' +retry' : ''}`));
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('one failed run', () => outcomes.length === 1);
    expect(seen).to.have.length(1);
    expect(seen[0]).to.be.instanceOf(RangeError);
    expect(outcomes).to.deep.equal(['failure']);
    expect(runs).to.equal(1);
  });
});
