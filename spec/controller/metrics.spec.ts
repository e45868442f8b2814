import { expect } from 'chai';
import { Registry } from 'prom-client';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { NoRetryError, RunTimeoutError } from '../../lib/core/index.js';
import { GenericRetry } from '../../lib/processing/index.js';
import {
  capturingLogger,
  CONFIGMAPS,
  createWidget,
  eventually,
  getWidget,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

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
    await eventually('all three reconciled', async () =>
      (await Promise.all(['w1', 'w2', 'w3'].map((n) => getWidget(env, n)))).every((w) => w?.status?.['seen']),
    );
    const text = await eventually('three successes', async () => {
      const metrics = await registry.metrics();
      return metrics.includes(`rxkube_reconciliations_success_total{${LABELS}} 3`) ? metrics : undefined;
    });
    expect(text).to.include(`rxkube_reconciliations_started_total{${LABELS}} 3`);
    expect(text).to.include(`rxkube_reconciliations_active{${LABELS}} 0`);
    expect(text).to.include(`rxkube_events_received_total{${LABELS},source="widgets.sample.rxkube.dev",action="added"} 3`);
    expect(text).to.include(`rxkube_cache_size{${LABELS},source="widgets.sample.rxkube.dev"} 3`);
    expect(text).to.match(/^rxkube_leader 1$/m);
    expect(text).to.include(`rxkube_reconcile_queue_duration_seconds_count{${LABELS}} 3`);
    expect(text).to.include(`rxkube_max_concurrent_reconciliations{${LABELS}} 50`);
    expect(text).to.include(`rxkube_controller_ready{${LABELS}} 1`);
    const startup = (phase: string) =>
      Number(new RegExp(`^rxkube_startup_seconds\\{${LABELS},phase="${phase}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(startup('caches_synced')).to.be.greaterThan(0);
    expect(startup('first_run')).to.be.at.least(startup('caches_synced'));
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

describe('run deadlines in a controller', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('EP14: a run past runTimeoutMs aborts its signal and its client requests, is counted, logged and retried, and runs alone', async () => {
    const registry = new Registry();
    const { logger, lines } = capturingLogger('info');
    let running = 0;
    let overlapped = false;
    const seenByRequests: unknown[] = [];
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        if (running++ > 0) overlapped = true;
        try {
          if (ctx.retry.attempt > 0) return UpdateControl.patchStatus({ ...w, status: { seen: true } });
          // A request sent through ctx.client once the signal aborted is refused with the deadline's error.
          await new Promise((resolve) => setTimeout(resolve, 300));
          try {
            await ctx.client.resource(CONFIGMAPS).list({ namespace: 'default' });
          } catch (error) {
            seenByRequests.push(error);
          }
          return UpdateControl.noUpdate();
        } finally {
          running--;
        }
      },
    };
    const op = env.operator({ registry, logger });
    op.register(reconciler, widgetConfig({ runTimeoutMs: 100, retry: GenericRetry.defaults().withInitialMs(50).withMaxAttempts(2) }));
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('the retry reconciled', async () => (await getWidget(env, 'w1'))?.status?.['seen'] === true);
    expect(overlapped).to.equal(false);
    expect(seenByRequests).to.have.length(1);
    expect(seenByRequests[0]).to.be.instanceOf(RunTimeoutError);
    const metrics = await registry.metrics();
    expect(metrics).to.include(`rxkube_reconcile_timeouts_total{${LABELS}} 1`);
    expect(metrics).to.include(`rxkube_reconciliations_failure_total{${LABELS}} 1`);
    expect(lines().map((l) => l['msg'])).to.include.members(['run of default/w1 passed its deadline; its signal is aborted']);
    const overrun = lines().find((l) => String(l['msg']).startsWith('run of default/w1 overran its deadline by'));
    expect(overrun?.['err']).to.include({ type: 'RunTimeoutError' });
  });
});
