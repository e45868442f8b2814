import { expect } from 'chai';
import { ErrorStatusUpdateControl, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import type { RetryInfo } from '../../lib/core/index.js';
import { classifyError } from '../../lib/kube/index.js';
import {
  capturingLogger,
  createWidget,
  eventually,
  FAST_RETRY,
  getWidget,
  patchWidget,
  recordOutcomes,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

describe('controller errors against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  const statusOf = async (name: string) => (await getWidget(env, name))?.status;

  it('EP7, UP4: a throwing reconciler is retried with the backoff; updateErrorStatus writes each error (attempt 0 first); success resets it', async () => {
    let failuresLeft = 3;
    const reconciles: RetryInfo[] = [];
    const errorStatusAttempts: number[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        reconciles.push(ctx.retry);
        if (failuresLeft > 0) {
          failuresLeft--;
          throw new Error(`backend unavailable (${w.spec?.value})`);
        }
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      updateErrorStatus(w, ctx, error) {
        errorStatusAttempts.push(ctx.retry.attempt);
        return ErrorStatusUpdateControl.patchStatus({ ...w, status: { error: String(error), attempt: ctx.retry.attempt } });
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ retry: FAST_RETRY.withMaxAttempts(3) }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();

    await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.some((x) => x.result === 'success'), 'a success');
    expect(reconciles).to.deep.equal([
      { attempt: 0, lastAttempt: false },
      { attempt: 1, lastAttempt: false },
      { attempt: 2, lastAttempt: false },
      { attempt: 3, lastAttempt: true },
    ]);
    expect(errorStatusAttempts).to.deep.equal([0, 1, 2]);
    const runs = outcomes.of('w1');
    expect(runs.map((o) => o.result)).to.deep.equal(['failure', 'failure', 'failure', 'success']);
    expect(runs.map((o) => o.retry?.attempt)).to.deep.equal([1, 2, 3, undefined]);
    expect(runs.slice(1).map((o) => o.cause)).to.deep.equal([1, 2, 3].map((attempt) => ({ type: 'retry', attempt })));
    // EP7 backoff: 20, 20, 30 ms (scheduled from the end of the failed run).
    // (`at` and `endedAt` are read from the clock one after the other; a busy machine may pause between.)
    const delays = runs.slice(0, 3).map((o) => (o.retry ? o.retry.at - o.endedAt : -1));
    [20, 20, 30].forEach((d, i) => expect(delays[i]).to.be.within(d, d + 50));
    for (let i = 1; i < 4; i++) {
      expect(runs[i].startedAt - runs[i - 1].endedAt).to.be.at.least([20, 20, 30][i - 1] - 1);
    }
    // The last error status was overwritten by the success: our manager no longer applies `error`.
    expect(await statusOf('w1')).to.deep.equal({ observed: 'a' });

    // After a success the retry state is reset: the next failure is attempt 0 again.
    failuresLeft = 1;
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await eventually('status observed b', async () => (await statusOf('w1'))?.['observed'] === 'b');
    expect(errorStatusAttempts).to.deep.equal([0, 1, 2, 0]);
    expect(reconciles.slice(4).map((r) => r.attempt)).to.deep.equal([0, 1]);
  });

  it('UP4: withNoRetry() writes the error status and schedules no retry', async () => {
    let calls = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile() {
        calls++;
        throw new Error('quota exceeded: ask an administrator');
      },
      updateErrorStatus: (w, _ctx, error) =>
        ErrorStatusUpdateControl.patchStatus({ ...w, status: { error: (error as Error).message } }).withNoRetry(),
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    const [failed] = await outcomes.until('w1', (o) => o.length >= 1, 'a run');
    expect(failed?.result).to.equal('failure');
    expect((failed?.error as Error).message).to.equal('quota exceeded: ask an administrator');
    expect(failed?.retry, 'a retry was scheduled').to.equal(undefined);
    expect(failed?.reschedule?.reason).to.equal('maxInterval');
    await eventually('error status', async () => (await statusOf('w1'))?.['error'] === 'quota exceeded: ask an administrator');
    expect(calls).to.equal(1);
  });

  it('UP4, EP9: withNoRetry().rescheduleAfter(ms) runs again after ms instead of retrying', async () => {
    const runs: { attempt: number; cause: string }[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        runs.push({ attempt: ctx.retry.attempt, cause: ctx.cause.type });
        if (runs.length === 1) throw new Error('waiting for an external system');
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      updateErrorStatus: (w, _ctx, error) =>
        ErrorStatusUpdateControl.patchStatus({ ...w, status: { waiting: (error as Error).message } })
          .withNoRetry()
          .rescheduleAfter(30),
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    const [failed, next] = await outcomes.until('w1', (o) => o.length >= 2, 'the rescheduled run');
    expect(failed?.result).to.equal('failure');
    expect(failed?.retry).to.equal(undefined);
    expect(failed?.reschedule?.reason).to.equal('requested');
    // Armed for 30 ms after the run; no upper bound in real time (no retry is armed: checked above).
    expect(failed.reschedule!.at - failed.endedAt).to.be.at.least(30);
    expect(next?.result).to.equal('success');
    expect(runs).to.deep.equal([
      { attempt: 0, cause: 'event' },
      { attempt: 0, cause: 'reschedule' },
    ]);
    await eventually('status observed a', async () => (await statusOf('w1'))?.['observed'] === 'a');
  });

  it('UP4: a failing error-status patch is logged, never thrown; the run fails with the reconcile error and is retried', async () => {
    const { logger, lines } = capturingLogger('info');
    let calls = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        if (++calls === 1) throw new Error('first try fails');
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      updateErrorStatus: (w) => ErrorStatusUpdateControl.patchStatus({ ...w, status: { error: 'x' } }),
    };
    const op = env.operator({ logger });
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    const fault = env.server.faults.failRequests({ verb: 'patch', resource: 'widgets/status', status: 500, count: 1 });
    await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.some((x) => x.result === 'success'), 'a success');
    expect(fault.hits).to.equal(1);
    const first = outcomes.of('w1').find((o) => o.result === 'failure');
    expect((first?.error as Error).message).to.equal('first try fails');
    expect(first?.retry?.attempt).to.equal(1);
    const patchFailed = lines().find((l) => l['msg'] === 'error status patch failed');
    expect(patchFailed?.['level'], 'a 500 is logged at warn').to.equal(40);
    expect(await statusOf('w1')).to.deep.equal({ observed: 'a' });
  });

  it('UP2: a 409 on the status patch is an ordinary failure: retried, logged at info (not error), converges', async () => {
    const { logger, lines } = capturingLogger('info');
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
    };
    const op = env.operator({ logger });
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    const conflict = env.server.faults.failRequests({ verb: 'patch', resource: 'widgets/status', status: 409, count: 1 });
    await createWidget(env, widget('w1'));
    await eventually('status observed a', async () => (await statusOf('w1'))?.['observed'] === 'a');
    expect(conflict.hits).to.equal(1);
    const runs = outcomes.of('w1');
    expect(runs.map((o) => o.result)).to.deep.equal(['failure', 'success']);
    expect(classifyError(runs[0]?.error)).to.equal('conflict');
    expect(runs[0]?.retry?.attempt).to.equal(1);
    const failureLines = lines().filter((l) => typeof l['msg'] === 'string' && l['msg'].includes('failed'));
    expect(failureLines.map((l) => l['level'])).to.deep.equal([30]);
    expect(failureLines[0]?.['kind']).to.equal('conflict');
    expect(lines().filter((l) => (l['level'] as number) >= 50)).to.deep.equal([]);
  });

  it('UP4: a custom resource the reconciler cannot parse gets a clear error in status, and no retries when asked', async () => {
    const reconcileCalls: unknown[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        reconcileCalls.push(w.spec?.replicas);
        const replicas = w.spec?.replicas;
        if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
          throw new TypeError(`spec.replicas must be a non-negative integer, got ${JSON.stringify(replicas)}`);
        }
        return UpdateControl.patchStatus({ ...w, status: { replicas } });
      },
      updateErrorStatus(w, _ctx, error) {
        const control = ErrorStatusUpdateControl.patchStatus({ ...w, status: { error: (error as Error).message } });
        return error instanceof TypeError ? control.withNoRetry() : control;
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1', { replicas: 'three' }));
    await eventually('error in status', async () => (await statusOf('w1'))?.['error']);
    expect(await statusOf('w1')).to.deep.equal({ error: 'spec.replicas must be a non-negative integer, got "three"' });
    expect(outcomes.of('w1').map((o) => [o.result, o.retry])).to.deep.equal([['failure', undefined]]);

    // Fixed by the user: reconciled, and the error is gone from status.
    await patchWidget(env, 'w1', { spec: { replicas: 3 } });
    await eventually('replicas in status', async () => (await statusOf('w1'))?.['replicas'] === 3);
    expect(await statusOf('w1')).to.deep.equal({ replicas: 3 });
    expect(reconcileCalls).to.deep.equal(['three', 3]);
  });

  it('UP1: reconcile returning something else than an UpdateControl fails the run with a message saying so', async () => {
    const reconciler = { reconcile: () => ({ status: 'ok' }) } as unknown as Reconciler<Widget>;
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ retry: false }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    const [run] = await outcomes.until('w1', (o) => o.length === 1, 'a run');
    expect(String(run?.error)).to.match(/reconcile must return an UpdateControl or nothing/);
  });
});
