import { expect } from 'chai';
import { DeleteControl, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import {
  createWidget,
  deleteWidget,
  eventually,
  getWidget,
  patchWidget,
  recordOutcomes,
  RunTracker,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

describe('controller under injected API server faults', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  const allObserved = (names: string[], value: string) =>
    eventually(`${names.join(',')} observed ${value}`, async () => {
      for (const name of names) {
        if ((await getWidget(env, name))?.status?.['observed'] !== value) return false;
      }
      return true;
    });

  it('ES1, EP1: a dropped watch, a 410 after compaction and 500s on the relist lose no change, and one resource never runs twice at once', async () => {
    const runs = new RunTracker();
    const cleaned: string[] = [];
    const reconciler: Reconciler<Widget> = {
      async reconcile(w) {
        const end = runs.begin(w);
        try {
          await new Promise((r) => setTimeout(r, 5)); // some work, so that events arrive during runs
          return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
        } finally {
          end();
        }
      },
      async cleanup(w) {
        const end = runs.begin(w);
        cleaned.push(w.metadata!.name!);
        end();
        return DeleteControl.defaultDelete();
      },
    };
    const op = env.operator();
    op.register(reconciler, widgetConfig());
    await op.start();
    const names = ['w0', 'w1', 'w2', 'w3', 'w4'];
    for (const name of names) await createWidget(env, widget(name));
    await allObserved(names, 'a');
    await env.watchesOpen(1);

    // A dropped watch; its resumption answers only after 200 ms: the changes happen while none is open.
    env.server.faults.delayRequests({ verb: 'watch', resource: 'widgets', delayMs: 200, count: 1 });
    expect(env.server.faults.dropWatches({ resource: 'widgets' })).to.equal(1);
    for (const name of names) await patchWidget(env, name, { spec: { value: 'b' } });
    await allObserved(names, 'b');
    await env.watchesOpen(1);

    // The same, and history compacted meanwhile: the resumed watch gets 410 and the informer relists.
    env.server.faults.delayRequests({ verb: 'watch', resource: 'widgets', delayMs: 200, count: 1 });
    env.server.faults.dropWatches({ resource: 'widgets' });
    for (const name of names) await patchWidget(env, name, { spec: { value: 'c' } });
    await createWidget(env, widget('w5', { value: 'c' }));
    await deleteWidget(env, 'w1');
    env.server.faults.compact();
    const live = names.filter((n) => n !== 'w1');
    await allObserved([...live, 'w5'], 'c');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(cleaned).to.deep.equal(['w1']);
    await env.watchesOpen(1);

    // And the relist itself fails three times with 500 before it succeeds.
    const listFault = env.server.faults.failRequests({ verb: 'list', resource: 'widgets', status: 500, count: 3 });
    env.server.faults.delayRequests({ verb: 'watch', resource: 'widgets', delayMs: 200, count: 1 });
    env.server.faults.dropWatches({ resource: 'widgets' });
    for (const name of [...live, 'w5']) await patchWidget(env, name, { spec: { value: 'd' } });
    env.server.faults.compact();
    await allObserved([...live, 'w5'], 'd');
    expect(listFault.hits).to.equal(3);

    expect(runs.maxConcurrentPerResource).to.equal(1);
  });

  it('EP2, EP3: changes during a run cause one follow-up run, which reads the latest version from the cache', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const reconciler: Reconciler<Widget> = {
      async reconcile(w) {
        seen.push(`${w.metadata?.name}:${w.spec?.value}`);
        if (seen.length === 1) {
          inFlight();
          await gate;
        }
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    await started;
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await patchWidget(env, 'w1', { spec: { value: 'c' } });
    // w2's ADDED comes after both updates on the same watch: once w2 ran, both have arrived.
    await createWidget(env, widget('w2'));
    await outcomes.until('w2', (o) => o.length === 1, 'w2 reconciled');
    release();
    await allObserved(['w1'], 'c');
    expect(seen.filter((s) => s.startsWith('w1:'))).to.deep.equal(['w1:a', 'w1:c']);
    const runs = outcomes.of('w1');
    expect(runs).to.have.length(2);
    expect(runs[1]?.cause).to.deep.include({ type: 'event', action: 'modified', coalesced: 2 });
  });

  it('EP3, UP3: the run after a status patch sees the patched status while the watch is stalled', async () => {
    const seen: unknown[] = [];
    let releaseFirstRun!: () => void;
    const firstRunGate = new Promise<void>((r) => (releaseFirstRun = r));
    let firstRunStarted!: () => void;
    const started = new Promise<void>((r) => (firstRunStarted = r));
    const reconciler: Reconciler<Widget> = {
      async reconcile(w) {
        const count = (w.status?.['count'] as number | undefined) ?? 0;
        seen.push(count);
        if (seen.length === 1) {
          firstRunStarted();
          await firstRunGate;
        }
        if (count >= 2) return UpdateControl.noUpdate();
        return UpdateControl.patchStatus({ ...w, status: { count: count + 1 } }).rescheduleAfter(5);
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig());
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await env.watchesOpen(1);
    await createWidget(env, widget('w1'));
    await started;
    const stall = env.server.faults.stallWatches({ resource: 'widgets' });
    expect(stall.hits).to.equal(1);
    const deliveredAtStall = env.server.stats().eventsDelivered;
    releaseFirstRun();

    await outcomes.until('w1', (o) => o.length === 3, 'three runs');
    expect(seen).to.deep.equal([0, 1, 2]);
    expect(env.server.stats().eventsDelivered, 'the watch delivered nothing meanwhile').to.equal(deliveredAtStall);
    expect((await getWidget(env, 'w1'))?.status).to.deep.equal({ count: 2 });

    // ES4: once the stall ends, the held events of our own writes run nothing. w2's ADDED comes after them.
    stall.remove();
    await createWidget(env, widget('w2'));
    await outcomes.until('w2', (o) => o.length >= 1, 'w2 reconciled');
    expect(outcomes.of('w1').map((o) => o.cause.type)).to.deep.equal(['event', 'reschedule', 'reschedule']);
  });
});
