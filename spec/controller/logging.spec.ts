import { expect } from 'chai';
import { DeleteControl, ErrorStatusUpdateControl, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import {
  capturingLogger,
  createWidget,
  eventually,
  getWidget,
  recordOutcomes,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

describe('controller logging against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('OB1: every line logged during a run carries the controller name and resource.{apiVersion,kind,name,namespace,resourceVersion,generation,uid}', async () => {
    const { logger, lines } = capturingLogger('debug');
    let calls = 0;
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        ctx.logger.info({ attempt: ctx.retry.attempt }, 'reconciling');
        if (++calls === 1) throw new Error('first attempt fails');
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      updateErrorStatus(w, ctx, error) {
        ctx.logger.warn({ err: error }, 'writing the error status');
        return ErrorStatusUpdateControl.patchStatus({ ...w, status: { error: String(error) } });
      },
      cleanup: () => DeleteControl.defaultDelete(),
    };
    const op = env.operator({ logger });
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    const created = await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.some((x) => x.result === 'success' && x.cause.type === 'retry'), 'the retried run');
    await eventually('status observed', async () => (await getWidget(env, 'w1'))?.status?.['observed'] === 'a');

    const runLines = lines().filter(
      (l) =>
        ['finalizer added', 'reconciling', 'writing the error status'].includes(l['msg'] as string) ||
        /^run of default\/w1/.test(l['msg'] as string),
    );
    expect(runLines.map((l) => l['msg'])).to.include.members([
      'finalizer added',
      'reconciling',
      'writing the error status',
      'run of default/w1 failed',
      'run of default/w1: success',
    ]);
    for (const line of runLines) {
      expect(line['controller'], `controller on '${String(line['msg'])}'`).to.equal('widgets.sample.rxkube.dev');
      const resource = line['resource'] as Record<string, unknown>;
      expect(Object.keys(resource).sort(), `resource fields on '${String(line['msg'])}'`).to.deep.equal([
        'apiVersion',
        'generation',
        'kind',
        'name',
        'namespace',
        'resourceVersion',
        'uid',
      ]);
      expect(resource).to.deep.include({
        apiVersion: 'sample.rxkube.dev/v1',
        kind: 'Widget',
        name: 'w1',
        namespace: 'default',
        uid: created.metadata?.uid,
        generation: 1,
      });
      expect(resource['resourceVersion']).to.be.a('string');
    }
    // The lines of the first run name the version that run read: the one created.
    expect((runLines.find((l) => l['msg'] === 'finalizer added')?.['resource'] as Record<string, unknown>)['resourceVersion']).to.equal(
      created.metadata?.resourceVersion,
    );
  });
});
