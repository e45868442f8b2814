import { expect } from 'chai';
import { DeleteControl, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import {
  createWidget,
  deleteWidget,
  eventually,
  FINALIZER,
  getWidget,
  patchWidget,
  patchWidgetStatus,
  recordOutcomes,
  RunTracker,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

describe('controller lifecycle against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  const observed = (name: string, value: string) =>
    eventually(`${name} status.observed = ${value}`, async () => {
      const w = await getWidget(env, name);
      return w?.status?.['observed'] === value ? w : undefined;
    });

  it('FZ2, UP1, EP6, FZ3: finalizer first, reconcile, status, spec change; status/label changes do not run; cleanup removes the finalizer', async () => {
    const runs = new RunTracker();
    const seen: Widget[] = [];
    const cleaned: Widget[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        runs.begin(w)();
        seen.push(w);
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
      cleanup(w) {
        cleaned.push(w);
        return DeleteControl.defaultDelete();
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    // How many times reconcile had been called when each run of w1 ended.
    const reconcilesAtOutcome: number[] = [];
    ctrl.outcome$.subscribe((o) => {
      if (o.id.name === 'w1') reconcilesAtOutcome.push(runs.count('w1'));
    });
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();

    await createWidget(env, widget('w1'));
    const done = await observed('w1', 'a');
    // FZ2: the first run only added the finalizer; reconcile first ran in the run after it.
    expect(reconcilesAtOutcome.slice(0, 2)).to.deep.equal([0, 1]);
    expect(outcomes.of('w1')[0]?.reschedule?.reason).to.equal('requested');
    expect(seen[0]?.metadata?.finalizers).to.deep.equal([FINALIZER]);
    expect(done.metadata?.finalizers).to.deep.equal([FINALIZER]);
    // UP1: the status was applied on the status subresource with an intent of identity + status only.
    const statusEntry = done.metadata?.managedFields?.find((m) => m.manager === 'widgets.sample.rxkube.dev' && m.subresource === 'status');
    expect(statusEntry?.operation).to.equal('Apply');
    expect(Object.keys(statusEntry?.fieldsV1 as object)).to.deep.equal(['f:status']);

    // A spec change (generation bump) runs again.
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await observed('w1', 'b');
    expect(runs.count('w1')).to.equal(2);

    // EP6: a status-only and a label-only change do not. Proven by a later event: once w2 (whose
    // ADDED comes after them on the same watch) has been reconciled, w1 would have run already.
    await patchWidgetStatus(env, 'w1', { status: { foreign: 'x' } });
    await patchWidget(env, 'w1', { metadata: { labels: { touched: 'yes' } } });
    await createWidget(env, widget('w2'));
    await observed('w2', 'a');
    expect(runs.count('w1'), 'status- and label-only changes of w1 ran it').to.equal(2);

    // FZ3: delete → cleanup (not reconcile) → finalizer removed → gone.
    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(cleaned.map((w) => w.metadata?.name)).to.deep.equal(['w1']);
    expect(cleaned[0]?.metadata?.deletionTimestamp).to.be.a('string');
    expect(runs.count('w1')).to.equal(2);
  });

  it('FZ1, FZ4: without cleanup no finalizer is ever added, and a deletion runs nothing', async () => {
    const runs = new RunTracker();
    const reconciler: Reconciler<Widget> = {
      reconcile(w) {
        runs.begin(w)();
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();

    await createWidget(env, widget('w1'));
    const w1 = await observed('w1', 'a');
    expect(w1.metadata?.finalizers ?? []).to.deep.equal([]);
    expect(outcomes.of('w1')).to.have.length(1); // the first run reconciled: nothing to add first

    // FZ4: marked for deletion, held by someone else's finalizer: the run happens, nothing is called.
    await createWidget(env, widget('w2', { value: 'a' }, 'default', { finalizers: ['example.com/keep'] }));
    await observed('w2', 'a');
    await deleteWidget(env, 'w2');
    await outcomes.until('w2', (o) => o.length === 2, 'a run for the deletion');
    expect(runs.count('w2')).to.equal(1);
    const held = await getWidget(env, 'w2');
    expect(held?.metadata?.deletionTimestamp).to.be.a('string');
    expect(held?.metadata?.finalizers).to.deep.equal(['example.com/keep']);
    await patchWidget(env, 'w2', { metadata: { finalizers: null } });
    await eventually('w2 gone', async () => (await getWidget(env, 'w2')) === undefined);

    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(runs.count('w1')).to.equal(1);
    expect(runs.count('w2')).to.equal(1);
  });

  it('FZ3: noFinalizerRemoval().rescheduleAfter(ms) keeps the finalizer and runs cleanup again', async () => {
    const cleanups: { cause: string; finalizers: string[] | undefined }[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
      async cleanup(w, ctx) {
        cleanups.push({ cause: ctx.cause.type, finalizers: w.metadata?.finalizers });
        if (cleanups.length < 3) {
          // Still there while cleanup is not done.
          const now = await getWidget(env, 'w1');
          expect(now?.metadata?.finalizers).to.include(FINALIZER);
          return DeleteControl.noFinalizerRemoval().rescheduleAfter(20);
        }
        return DeleteControl.defaultDelete();
      },
    };
    const op = env.operator();
    op.register(reconciler, widgetConfig());
    await op.start();
    await createWidget(env, widget('w1'));
    await observed('w1', 'a');
    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(cleanups.map((c) => c.cause)).to.deep.equal(['event', 'reschedule', 'reschedule']);
    expect(cleanups.every((c) => c.finalizers?.includes(FINALIZER))).to.equal(true);
  });

  it('EP6, FZ2: a metadata-only change that removes our finalizer passes the generation filter and puts it back', async () => {
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
      cleanup: () => DeleteControl.defaultDelete(),
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    await observed('w1', 'a');
    const before = outcomes.of('w1').length;
    const stripped = await patchWidget(env, 'w1', { metadata: { finalizers: null } });
    expect(stripped.metadata?.finalizers ?? []).to.deep.equal([]);
    await eventually('finalizer back', async () => (await getWidget(env, 'w1'))?.metadata?.finalizers?.includes(FINALIZER));
    expect(outcomes.of('w1')[before]?.cause).to.deep.include({ type: 'event', action: 'modified' });
  });

  it('FZ3: a conflict while removing the finalizer re-reads and retries within the same run', async () => {
    const cleaned: string[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
      cleanup(w) {
        cleaned.push(w.metadata!.name!);
        return DeleteControl.defaultDelete();
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    // Another finalizer ahead of ours: when ours goes, the object stays until that one goes too.
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: ['example.com/first'] }));
    await observed('w1', 'a');
    expect((await getWidget(env, 'w1'))?.metadata?.finalizers).to.deep.equal(['example.com/first', FINALIZER]);
    const runsBefore = outcomes.of('w1').length;
    const conflicts = env.server.faults.failRequests({ verb: 'patch', resource: 'widgets', name: 'w1', status: 409, count: 2 });
    await deleteWidget(env, 'w1');
    await eventually('our finalizer removed', async () => !(await getWidget(env, 'w1'))?.metadata?.finalizers?.includes(FINALIZER));
    expect(conflicts.hits).to.equal(2);
    const cleanupRuns = outcomes.of('w1').slice(runsBefore);
    expect(cleanupRuns.map((o) => o.result)).to.deep.equal(['success']);
    expect(cleaned).to.deep.equal(['w1']);
    expect((await getWidget(env, 'w1'))?.metadata?.finalizers).to.deep.equal(['example.com/first']);
  });

  it('UP1: observedGeneration: true writes status.observedGeneration with every status patch', async () => {
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
    };
    const op = env.operator();
    op.register(reconciler, widgetConfig({ observedGeneration: true }));
    await op.start();
    await createWidget(env, widget('w1'));
    expect((await observed('w1', 'a')).status).to.deep.equal({ observed: 'a', observedGeneration: 1 });
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    expect((await observed('w1', 'b')).status).to.deep.equal({ observed: 'b', observedGeneration: 2 });
  });

  for (const patchStrategy of ['apply', 'merge'] as const) {
    it(`UP1, ES4: patchResourceAndStatus with ${patchStrategy} writes the resource, then status, keeps the finalizer and runs no more`, async () => {
      const runs = new RunTracker();
      const reconciler: Reconciler<Widget> = {
        reconcile(w) {
          runs.begin(w)();
          return UpdateControl.patchResourceAndStatus({
            ...w,
            metadata: { ...w.metadata, labels: { ...w.metadata?.labels, reconciled: 'yes' } },
            spec: { ...w.spec, value: `${w.spec?.value ?? ''}!` },
            status: { observed: w.spec?.value },
          });
        },
        cleanup: () => DeleteControl.defaultDelete(),
      };
      const op = env.operator();
      op.register(reconciler, widgetConfig({ patchStrategy }));
      await op.start();
      await createWidget(env, widget('w1'));
      const w1 = await observed('w1', 'a');
      expect(w1.metadata?.labels).to.deep.equal({ reconciled: 'yes' });
      expect(w1.spec?.value).to.equal('a!');
      expect(w1.metadata?.finalizers).to.deep.equal([FINALIZER]);
      const operations = (w1.metadata?.managedFields ?? [])
        .filter((m) => m.manager === 'widgets.sample.rxkube.dev')
        .map((m) => `${m.operation}:${m.subresource ?? ''}`);
      expect(operations).to.include(patchStrategy === 'apply' ? 'Apply:status' : 'Update:status');
      // ES4: our own spec change (a generation bump) did not run w1 again.
      await createWidget(env, widget('w2'));
      await observed('w2', 'a');
      expect(runs.count('w1')).to.equal(1);
    });
  }
});
