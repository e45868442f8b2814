import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { inboundSource, timerSource } from '../../lib/sources/index.js';
import { createWidget, eventually, getWidget, recordOutcomes, startEnv, widget, widgetConfig, type Env, type Widget } from './fixtures.js';

describe('controller with other event sources (ES5)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('ES5, EP4: an inbound source triggers existing primaries; a push for an unknown primary is dropped', async () => {
    const inbound = inboundSource<{ note: string }>('webhook');
    let runs = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        runs++;
        const source = ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type;
        return UpdateControl.patchStatus({ ...w, status: { runs, source } });
      },
    };
    const op = env.operator();
    const controller = op.register(reconciler, widgetConfig({ sources: [inbound] }));
    const outcomes = recordOutcomes(controller.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('first run', async () => (await getWidget(env, 'w1'))?.status?.['runs'] === 1);

    inbound.push({ name: 'nobody', namespace: 'default' }, { note: 'dropped: no such primary' });
    inbound.push({ name: 'w1', namespace: 'default' }, { note: 'deployed' });
    const status = await eventually('the pushed event ran', async () => {
      const w = await getWidget(env, 'w1');
      return w?.status?.['runs'] === 2 ? w.status : undefined;
    });
    expect(status['source']).to.equal('webhook');
    expect(outcomes.of('nobody')).to.deep.equal([]);
  });

  it('ES5: a timer source schedules a run of one primary, and is stopped with the controller', async () => {
    const timers = timerSource('timers');
    let runs = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        runs++;
        if (runs === 1) timers.schedule({ name: w.metadata!.name!, namespace: 'default' }, 30);
        return UpdateControl.patchStatus({ ...w, status: { runs } });
      },
    };
    const op = env.operator();
    op.register(reconciler, widgetConfig({ sources: [timers] }));
    await op.start();
    await createWidget(env, widget('w1'));
    await eventually('the timer ran it again', async () => (await getWidget(env, 'w1'))?.status?.['runs'] === 2);
    timers.schedule({ name: 'w1', namespace: 'default' }, 60_000);
    await op.stop();
    expect(timers.pending(), 'stop() stops the source').to.deep.equal([]);
  });

  it('a source that is neither an Observable nor has events$ fails at register() naming sources[0]', () => {
    const op = env.operator();
    const bad = { push() {} } as unknown as never;
    expect(() => op.register({ reconcile: () => undefined }, widgetConfig({ sources: [bad] }))).to.throw(
      ConfigurationError,
      /^sources\[0\]: must be an Observable/,
    );
  });
});
