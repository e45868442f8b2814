/**
 * Issue 9, finding 1: a change someone else makes must never be absorbed by a write of ours.
 * Each scenario orders the events with the embedded server's faults: a run is held after it read
 * the object, the foreign change happens, the run's write lands on top of it, and the watch either
 * misses the change's own event (dropped watch, failing resumes, compacted history: a relist) or
 * delivers it only after the write's answer (a stalled watch).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { DeleteControl, UpdateControl, type Context, type Reconciler } from '../../lib/controller/index.js';
import { intentOf } from '../../lib/controller/tracked-client.js';
import { customResourceDefinition, descriptorOf, type ResourceClient } from '../../lib/kube/index.js';
import {
  createWidget,
  deleteWidget,
  eventually,
  FINALIZER,
  getWidget,
  patchWidget,
  recordOutcomes,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

interface Part extends KubernetesObject {
  spec?: { value?: string };
  status?: { observed?: string };
}

const partCrd = customResourceDefinition({ group: 'sample.rxkube.dev', kind: 'Part', plural: 'parts' });
const PART = descriptorOf(partCrd);
const HOLD_FINALIZER = 'example.com/hold';

/** Holds the next run that matches until `release()`; `entered` resolves when it is held. */
class RunHold {
  private armed: ((w: Widget, ctx: Context<Widget>) => boolean) | undefined;
  private enter!: () => void;
  private open!: () => void;
  entered!: Promise<void>;
  private released!: Promise<void>;

  arm(matches: (w: Widget, ctx: Context<Widget>) => boolean = () => true): void {
    this.armed = matches;
    this.entered = new Promise((r) => (this.enter = r));
    this.released = new Promise((r) => (this.open = r));
  }

  async pass(w: Widget, ctx: Context<Widget>): Promise<void> {
    if (!this.armed?.(w, ctx)) return;
    this.armed = undefined;
    this.enter();
    await this.released;
  }

  release(): void {
    this.open();
  }
}

const observed = (env: Env, name: string) => getWidget(env, name).then((w) => w?.status?.['observed']);

describe('controller/intentOf: what a tracked write may change (ES4, issue 9)', () => {
  const base: Part = {
    apiVersion: PART.apiVersion,
    kind: PART.kind,
    metadata: { name: 'p', namespace: 'default', resourceVersion: '7', generation: 2, labels: { a: '1' } },
    spec: { value: 'x' },
    status: { observed: 'x' },
  };
  const head = { apiVersion: PART.apiVersion, kind: PART.kind };

  it("ES4: a create, and a write with the base's resourceVersion as precondition, cannot land on a foreign change", () => {
    expect(intentOf(undefined, { kind: 'object', body: base })).to.deep.equal({});
    expect(intentOf(base, { kind: 'create' })).to.deep.equal({});
    expect(intentOf(base, { kind: 'object', body: { metadata: { resourceVersion: '7' }, spec: { value: 'y' } } })).to.deep.equal({});
    expect(
      intentOf(base, {
        kind: 'jsonPatch',
        ops: [
          { op: 'test', path: '/metadata/resourceVersion', value: '7' },
          { op: 'replace', path: '/spec/value', value: 'y' },
        ],
      }),
    ).to.deep.equal({});
  });

  it('ES4: an apply or merge patch keeps the generation when the object already has its content, and changes nothing when it has all of it', () => {
    expect(
      intentOf(base, { kind: 'object', body: { ...head, metadata: { name: 'p', labels: { a: '1' } }, spec: { value: 'x' } } }),
    ).to.deep.include({ generation: 'keep', unchanged: true });
    expect(intentOf(base, { kind: 'object', body: { metadata: { labels: { b: '2' } } } })).to.deep.include({
      generation: 'keep',
      unchanged: false,
    });
    expect(intentOf(base, { kind: 'object', body: { ...head, spec: { value: 'y' } } })).to.deep.include({ generation: 'bump' });
    expect(intentOf(base, { kind: 'object', body: { ...head, status: { observed: 'y' } } }), 'status as content').to.deep.include({
      generation: 'keepOrBump',
    });
    expect(intentOf(base, { kind: 'object', body: { metadata: { labels: { a: null } } } })).to.deep.include({
      generation: 'keep',
      unchanged: false,
    });
  });

  it('ES4: status writes keep the generation; a delete may mark and bump; what cannot be read keeps or bumps', () => {
    expect(intentOf(base, { kind: 'status', body: { status: { observed: 'x' } } })).to.deep.include({
      generation: 'keep',
      keepsFinalizers: true,
      unchanged: true,
    });
    expect(intentOf(base, { kind: 'status', body: { status: { observed: 'y' } } })).to.deep.include({
      generation: 'keep',
      unchanged: false,
    });
    expect(intentOf(base, { kind: 'delete' })).to.deep.include({ generation: 'keepOrBump', deletes: true });
    expect(intentOf(base, { kind: 'jsonPatch', ops: [{ op: 'add', path: '/metadata/labels/b', value: '2' }] })).to.deep.include({
      generation: 'keep',
    });
    expect(intentOf(base, { kind: 'jsonPatch', ops: [{ op: 'replace', path: '/spec/value', value: 'y' }] })).to.deep.include({
      generation: 'keepOrBump',
    });
    expect(
      intentOf(base, { kind: 'object', body: { ...base, spec: { value: 'y' }, metadata: { name: 'p' } }, replaces: true }),
    ).to.deep.include({ generation: 'keepOrBump' });
    expect(intentOf(base, { kind: 'unknown' })).to.deep.include({ base, generation: 'keepOrBump' });
  });
});

describe('own writes never absorb a foreign change (issue 9)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    env.server.faults.clear();
    await env.close();
  });

  /** A new operator running `reconciler`, started, with its `watches` open; its outcomes. */
  const run = async (reconciler: Reconciler<Widget>, config = widgetConfig(), watches = 1) => {
    const op = env.operator();
    const outcomes = recordOutcomes(op.register(reconciler, config).outcome$);
    await op.start();
    await env.watchesOpen(watches);
    return outcomes;
  };

  /** Closes the watch of `resource` and fails every list and watch of it until the returned function runs. */
  const cutWatch = (resource: string): (() => void) => {
    const fault = env.server.faults.failRequests({ verb: ['list', 'watch'], resource, status: 500 });
    expect(env.server.faults.dropWatches({ resource })).to.equal(1);
    return () => fault.remove();
  };

  describe('primaries', () => {
    const hold = new RunHold();
    const cleaned: string[] = [];

    /** Status records the spec value; the first reconcile reschedules soon, every later one in a minute. */
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        await hold.pass(w, ctx);
        const control = UpdateControl.patchStatus<Widget>({ ...w, status: { observed: w.spec?.value } });
        return control.rescheduleAfter(w.status?.['observed'] === undefined ? 50 : 60_000);
      },
      cleanup(w) {
        cleaned.push(w.metadata!.name!);
        return DeleteControl.defaultDelete();
      },
    };

    const start = async () => {
      cleaned.length = 0;
      const outcomes = await run(reconciler);
      await createWidget(env, widget('w1'));
      await eventually('w1 observed a', async () => (await observed(env, 'w1')) === 'a');
      return outcomes;
    };

    /**
     * A run reads generation 2 and is held; the watch is cut; `foreign` changes the widget; the
     * run's status write lands on that change; history is compacted; the watch resumes from before
     * the change: 410, and the relist sees only the version our write produced.
     */
    const foreignChangeUnderStatusWriteThenRelist = async (foreign: () => Promise<unknown>) => {
      const outcomes = await start();
      hold.arm((w) => w.spec?.value === 'b');
      await patchWidget(env, 'w1', { spec: { value: 'b' } });
      await hold.entered;
      const runs = outcomes.of('w1').length;
      const resume = cutWatch('widgets');
      await foreign(); // its event is never delivered
      hold.release();
      await outcomes.until('w1', (o) => o.length > runs, 'the held run wrote its status on the changed object');
      env.server.faults.compact();
      resume();
    };

    it('ES4, UP3: issue 9 — a spec bump under our status write, with history compacted before the watch resumes, is reconciled', async () => {
      await foreignChangeUnderStatusWriteThenRelist(() => patchWidget(env, 'w1', { spec: { value: 'c' } }));
      await eventually('w1 observed c', async () => (await observed(env, 'w1')) === 'c', 3_000);
      expect((await getWidget(env, 'w1'))?.metadata?.generation).to.equal(3);
    });

    it('FZ3, ES4: issue 9 — a delete under our status write, with history compacted before the watch resumes, runs cleanup and removes the finalizer', async () => {
      await foreignChangeUnderStatusWriteThenRelist(() => deleteWidget(env, 'w1')); // held by our finalizer: marked for deletion
      await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined, 3_000);
      expect(cleaned).to.deep.equal(['w1']);
    });

    it('FZ2, ES4: issue 9 — our finalizer removed under our status write, with history compacted before the watch resumes, is added again', async () => {
      await foreignChangeUnderStatusWriteThenRelist(() => patchWidget(env, 'w1', { metadata: { finalizers: null } }));
      await eventually('our finalizer back', async () => (await getWidget(env, 'w1'))?.metadata?.finalizers?.includes(FINALIZER), 3_000);
    });

    it('ES4, EP6: issue 9 — a periodic run whose unchanged status write races a spec bump reconciles the bump at once, not at the next reschedule', async () => {
      // The run rescheduled by the first reconcile reads generation 1 and writes the same status again.
      hold.arm((w, ctx) => ctx.cause.type === 'reschedule' && w.status?.['observed'] === 'a');
      const outcomes = await start();
      await hold.entered;
      const runs = outcomes.of('w1').length;
      const stall = env.server.faults.stallWatches({ resource: 'widgets' });
      await patchWidget(env, 'w1', { spec: { value: 'b' } }); // its event is in transit
      hold.release();
      // The held run's write changed nothing: the API answered with the bumped version.
      await outcomes.until('w1', (o) => o.length > runs, 'the held run ended');
      stall.remove();
      await eventually('w1 observed b', async () => (await observed(env, 'w1')) === 'b', 3_000);
    });
  });

  it('UP1, UP2, ES4: issue 9 — patchResource carries the resourceVersion the run read: a spec bump under it is a 409, and after a relist the bump is reconciled', async () => {
    const hold = new RunHold();
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        await hold.pass(w, ctx);
        return UpdateControl.patchResource<Widget>({ ...w, metadata: { ...w.metadata, labels: { seen: w.spec?.value ?? '' } } });
      },
    };
    const outcomes = await run(reconciler);
    await createWidget(env, widget('w1'));
    await eventually('w1 labelled a', async () => (await getWidget(env, 'w1'))?.metadata?.labels?.['seen'] === 'a');
    hold.arm((w) => w.spec?.value === 'b');
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await hold.entered;
    const runs = outcomes.of('w1').length;
    const resume = cutWatch('widgets');
    await patchWidget(env, 'w1', { spec: { value: 'c' } });
    hold.release();
    const [held] = (await outcomes.until('w1', (o) => o.length > runs, 'the held run ended')).slice(runs);
    expect(held?.result).to.equal('failure');
    expect((held as { error?: { code?: number } }).error?.code, 'a conflict, not a write on top of the bump').to.equal(409);
    expect((await getWidget(env, 'w1'))?.metadata?.labels?.['seen']).to.equal('a');
    env.server.faults.compact();
    resume();
    await eventually('w1 labelled c', async () => (await getWidget(env, 'w1'))?.metadata?.labels?.['seen'] === 'c', 3_000);
  });

  describe('secondaries written through ctx.secondaryClient', () => {
    const hold = new RunHold();
    let parts: ResourceClient<Part>;
    const seen: (string | undefined)[] = [];
    const released: string[] = [];
    let written = 0;

    /**
     * Applies a label to the widget's Part (a no-op after the first time) and records the Part's
     * spec value in its status; lets a Part marked for deletion go (drops its finalizer).
     */
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        const part = ctx.getSecondaryResource<Part>('parts');
        seen.push(part?.spec?.value);
        if (!part) return UpdateControl.noUpdate();
        await hold.pass(w, ctx);
        const client = ctx.secondaryClient<Part>('parts');
        const ref = { name: part.metadata!.name!, namespace: part.metadata!.namespace! };
        if (part.metadata?.deletionTimestamp) {
          await client.mergePatch(ref, { metadata: { finalizers: null } });
          released.push(ref.name);
          return UpdateControl.noUpdate();
        }
        await client.apply(
          { apiVersion: PART.apiVersion, kind: PART.kind, metadata: { ...ref, labels: { 'example.com/seen': 'yes' } } },
          { force: true },
        );
        await client.mergePatchStatus(ref, { status: { observed: part.spec?.value } });
        written++;
        return UpdateControl.noUpdate();
      },
    };

    const partObserved = async () => (await parts.find({ name: 'w1-part', namespace: 'default' }))?.status?.observed;

    const start = async () => {
      seen.length = 0;
      released.length = 0;
      written = 0;
      await env.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({ body: partCrd });
      parts = env.client.resource<Part>(PART);
      await run(reconciler, widgetConfig({ secondaries: [{ resource: PART, name: 'parts' }] }), 2);
      const w1 = await createWidget(env, widget('w1'));
      await parts.create({
        apiVersion: PART.apiVersion,
        kind: PART.kind,
        metadata: {
          name: 'w1-part',
          namespace: 'default',
          finalizers: [HOLD_FINALIZER],
          ownerReferences: [{ apiVersion: w1.apiVersion!, kind: w1.kind!, name: 'w1', uid: w1.metadata!.uid!, controller: true }],
        },
        spec: { value: 'a' },
      });
      await eventually('w1-part observed a', async () => (await partObserved()) === 'a');
    };

    /** Holds the run a widget change triggers, after it read the Part. */
    const holdRunOfWidgetChange = async () => {
      hold.arm((w) => w.spec?.value === 'go');
      await patchWidget(env, 'w1', { spec: { value: 'go' } });
      await hold.entered;
    };

    it('ES4, UP3: issue 9 — a spec bump of a secondary under our writes, with history compacted before its watch resumes, runs the primary', async () => {
      await start();
      await holdRunOfWidgetChange();
      const resume = cutWatch('parts');
      await parts.mergePatch({ name: 'w1-part', namespace: 'default' }, { spec: { value: 'b' } });
      const before = written;
      hold.release();
      await eventually('the held run wrote on generation 2', () => written > before);
      expect((await parts.get({ name: 'w1-part', namespace: 'default' })).metadata?.generation).to.equal(2);
      env.server.faults.compact();
      resume();
      await eventually('w1-part observed b', async () => (await partObserved()) === 'b', 3_000);
      expect(seen.at(-1)).to.equal('b');
    });

    it('ES4: issue 9 — a delete of a secondary under our writes, with history compacted before its watch resumes, runs the primary, which lets it go', async () => {
      await start();
      await holdRunOfWidgetChange();
      const resume = cutWatch('parts');
      await parts.delete({ name: 'w1-part', namespace: 'default' }); // held by its finalizer
      const before = written;
      hold.release();
      await eventually('the held run wrote on the deleted Part', () => written > before);
      env.server.faults.compact();
      resume();
      await eventually('w1-part gone', async () => (await parts.find({ name: 'w1-part', namespace: 'default' })) === undefined, 3_000);
      expect(released).to.deep.equal(['w1-part']);
    });

    it('ES4: issue 9 — unchanged writes of a secondary racing a foreign bump run the primary at once', async () => {
      await start();
      await holdRunOfWidgetChange();
      const stall = env.server.faults.stallWatches({ resource: 'parts' });
      await parts.mergePatch({ name: 'w1-part', namespace: 'default' }, { spec: { value: 'b' } }); // its event is in transit
      const before = written;
      hold.release();
      // Both writes (the same label, the same status) changed nothing: the API answered with the bumped version.
      await eventually('the held run wrote', () => written > before);
      stall.remove();
      await eventually('w1-part observed b', async () => (await partObserved()) === 'b', 3_000);
    });
  });
});
