import { expect } from 'chai';
import { DeleteControl, Primaries, reconcilerRun, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { primaryWriter } from '../../lib/controller/primary-writes.js';
import type { RunContext } from '../../lib/processing/index.js';
import { informer, type Informer } from '../../lib/cache/index.js';
import { createWidget, eventually, FINALIZER, getWidget, startEnv, widget, WIDGET, type Env, type Widget } from './fixtures.js';

const w1 = { name: 'w1', namespace: 'default' };
const runContext = (): RunContext => ({
  retry: { attempt: 0, lastAttempt: false },
  signal: new AbortController().signal,
  queuedMs: 0,
  setRunTimeout: () => undefined,
  cause: { type: 'event', source: 'widgets', action: 'modified', primary: true, coalesced: 0 },
});

/**
 * A run of a primary that was deleted and re-created under the same name while the cache lagged:
 * the cache (an informer whose watch has stopped) still holds the predecessor, the API the successor.
 */
describe('controller: writes bound to the uid reconciled (FZ3, UP1)', () => {
  let env: Env;
  let inf: Informer<Widget>;
  let primaries: Primaries<Widget>;
  /** The same primaries for a reconciler without cleanup: it keeps no finalizer. */
  let withoutFinalizer: Primaries<Widget>;
  const widgets = () => env.client.resource<Widget>(WIDGET);

  beforeEach(async () => {
    env = await startEnv();
    inf = informer<Widget>({ resource: WIDGET, kubeConfig: env.kubeConfig });
    primaries = new Primaries(inf, { finalizerName: FINALIZER });
    withoutFinalizer = new Primaries(inf);
    inf.start();
    await inf.whenSynced();
  });
  afterEach(async () => {
    inf.stop();
    primaries.dispose();
    withoutFinalizer.dispose();
    await env.close();
  });

  /** w1 in the cache as `cached`, then replaced in the API by a successor with our finalizer; the cache no longer follows. */
  const recreatedBehindTheCache = async (cached: (w: Widget) => boolean, successor: Partial<NonNullable<Widget['metadata']>> = {}) => {
    const first = await eventually('the cache to hold w1', () => {
      const w = primaries.get(w1);
      return w && cached(w) ? w : undefined;
    });
    inf.stop();
    await widgets()
      .jsonPatch(w1, [{ op: 'replace', path: '/metadata/finalizers', value: [] }])
      .catch(() => undefined);
    await widgets()
      .delete(w1)
      .catch(() => undefined);
    await eventually('the predecessor gone', async () => (await getWidget(env, 'w1')) === undefined);
    const second = await createWidget(env, widget('w1', { value: 'b' }, 'default', { finalizers: [FINALIZER], ...successor }));
    expect(second.metadata?.uid).to.not.equal(first.metadata?.uid);
    expect(primaries.get(w1)?.metadata?.uid, 'the cache lags').to.equal(first.metadata?.uid);
    return { first, second };
  };

  it('FZ3: a cleanup due for a cached object that was deleted and re-created under its name runs no cleanup and leaves the successor its finalizer', async () => {
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: [FINALIZER] }));
    await widgets().delete(w1);
    const { second } = await recreatedBehindTheCache((w) => w.metadata?.deletionTimestamp !== undefined);
    const cleaned: string[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile: () => UpdateControl.noUpdate(),
      cleanup(w) {
        cleaned.push(w.metadata!.uid!);
        return DeleteControl.defaultDelete();
      },
    };
    const run = reconcilerRun(reconciler, { resource: WIDGET, client: env.client, primaries });
    await run(w1, runContext());
    expect(cleaned, 'cleanup calls').to.deep.equal([]);
    const live = await getWidget(env, 'w1');
    expect(live?.metadata?.uid).to.equal(second.metadata?.uid);
    expect(live?.metadata?.finalizers).to.deep.equal([FINALIZER]);
  });

  it('FZ3: removing the finalizer of a predecessor is refused on its successor, even when the successor is being deleted too', async () => {
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: [FINALIZER] }));
    await widgets().delete(w1);
    const { first, second } = await recreatedBehindTheCache((w) => w.metadata?.deletionTimestamp !== undefined);
    await widgets().delete(w1);
    const writer = primaryWriter<Widget>({
      client: widgets(),
      primaries,
      fieldManager: 'test',
      strategy: 'merge',
      observedGeneration: false,
    });
    expect(await writer.removeFinalizer(first)).to.equal(undefined);
    const live = await getWidget(env, 'w1');
    expect(live?.metadata?.uid).to.equal(second.metadata?.uid);
    expect(live?.metadata?.finalizers, "the successor's finalizer").to.deep.equal([FINALIZER]);
  });

  it('UP1: a status computed from a cached object that was deleted and re-created under its name does not land on the successor (merge strategy)', async () => {
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: [FINALIZER] }));
    const { second } = await recreatedBehindTheCache((w) => w.metadata?.finalizers?.includes(FINALIZER) === true);
    const reconciler: Reconciler<Widget> = { reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }) };
    const run = reconcilerRun(reconciler, { resource: WIDGET, client: env.client, primaries: withoutFinalizer, patchStrategy: 'merge' });
    const failed = await Promise.resolve(run(w1, runContext())).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed, 'the run fails').to.be.instanceOf(Error);
    const live = await getWidget(env, 'w1');
    expect(live?.metadata?.uid).to.equal(second.metadata?.uid);
    expect(live?.status, "the successor's status").to.equal(undefined);
  });

  it('UP1: a resource write computed from a cached object that was deleted and re-created under its name does not land on the successor', async () => {
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: [FINALIZER] }));
    const { second } = await recreatedBehindTheCache((w) => w.metadata?.finalizers?.includes(FINALIZER) === true);
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchResource({ ...w, metadata: { ...w.metadata, labels: { stale: 'yes' } } }),
    };
    for (const patchStrategy of ['apply', 'merge'] as const) {
      const run = reconcilerRun(reconciler, { resource: WIDGET, client: env.client, primaries: withoutFinalizer, patchStrategy });
      const failed = await Promise.resolve(run(w1, runContext())).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed, `the run fails (${patchStrategy})`).to.be.instanceOf(Error);
    }
    const live = await getWidget(env, 'w1');
    expect(live?.metadata?.uid).to.equal(second.metadata?.uid);
    expect(live?.metadata?.labels?.['stale']).to.equal(undefined);
  });
});
