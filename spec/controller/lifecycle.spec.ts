import { expect } from 'chai';
import { UpdateControl, DeleteControl, type Reconciler } from '../../lib/controller/index.js';
import { createWidget, deleteWidget, eventually, getWidget, patchWidget, startEnv, widget, WIDGET, type Env, type Widget } from './harness.js';

describe('controller lifecycle against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('FZ2, UP1, FZ3: finalizer first, then reconcile and status, then cleanup and removal', async () => {
    const seen: Widget[] = [];
    const cleaned: string[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        seen.push(w);
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      cleanup(w) {
        cleaned.push(w.metadata!.name!);
        return DeleteControl.defaultDelete();
      },
    };
    const op = env.operator();
    op.register(reconciler, { resource: WIDGET });
    await op.start();
    await createWidget(env, widget('w1'));
    const done = await eventually('status.observed = a', async () => {
      const w = await getWidget(env, 'w1');
      return w?.status?.['observed'] === 'a' ? w : undefined;
    });
    expect(done.metadata?.finalizers).to.deep.equal(['widgets.sample.rxkube.dev/finalizer']);
    expect(seen.every((w) => w.metadata?.finalizers?.includes('widgets.sample.rxkube.dev/finalizer'))).to.equal(true);
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await eventually('status.observed = b', async () => (await getWidget(env, 'w1'))?.status?.['observed'] === 'b');
    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(cleaned).to.deep.equal(['w1']);
  });
});
