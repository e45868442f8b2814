import { expect } from 'chai';
import type { ResourceEvent } from '../../lib/core/index.js';
import { Primaries } from '../../lib/controller/index.js';
import { informer, type Informer } from '../../lib/cache/index.js';
import {
  consistently,
  createWidget,
  eventually,
  FINALIZER,
  patchWidget,
  patchWidgetStatus,
  startEnv,
  widget,
  WIDGET,
  type Env,
  type Widget,
} from './fixtures.js';

describe('controller/Primaries: the informer, read-your-writes and the finalizer rule in one object', () => {
  let env: Env;
  let inf: Informer<Widget>;
  let primaries: Primaries<Widget>;
  let seen: ResourceEvent<Widget>[];

  beforeEach(async () => {
    env = await startEnv();
    inf = informer<Widget>({ resource: WIDGET, kubeConfig: env.kubeConfig });
    primaries = new Primaries(inf, { name: 'widgets', finalizerName: FINALIZER });
    seen = [];
    primaries.events$.subscribe((event) => seen.push(event));
    inf.start();
    await inf.whenSynced();
  });
  afterEach(async () => {
    inf.stop();
    primaries.dispose();
    await env.close();
  });

  const actions = () => seen.map((e) => `${e.source} ${e.action} ${e.object?.metadata?.resourceVersion ?? ''}`.trim());

  it('EP6, FZ1: an update that only drops the finalizer passes, a status-only update of an object that has it does not', async () => {
    await createWidget(env, widget('w1', { value: 'a' }, 'default', { finalizers: [FINALIZER] }));
    await eventually('the add', () => seen.length === 1);
    await patchWidgetStatus(env, 'w1', { status: { observed: 'a' } });
    await consistently('the status update is dropped', () => seen.length === 1, 200);
    const dropped = await patchWidget(env, 'w1', { metadata: { finalizers: [] } });
    await eventually('the update lacking the finalizer', () => seen.length === 2);
    expect(actions()).to.deep.equal([
      `widgets added ${seen[0]!.object!.metadata!.resourceVersion}`,
      `widgets modified ${dropped.metadata!.resourceVersion}`,
    ]);
  });

  it('EP3, ES4, UP3: a write recorded through them starts nothing, is read back at once, and keeps the primary there', async () => {
    const created = await createWidget(env, widget('w1'));
    await eventually('the add', () => seen.length === 1);
    const ref = { name: 'w1', namespace: 'default' };
    const written = await primaries.cache.trackWrite(
      ref,
      () => env.client.resource<Widget>(WIDGET).mergePatch(ref, { metadata: { labels: { a: '1' } } }),
      { base: created },
    );
    expect(primaries.get(ref)?.metadata?.resourceVersion).to.equal(written.metadata?.resourceVersion);
    expect(primaries.has(ref)).to.equal(true);
    expect(primaries.has({ name: 'nope', namespace: 'default' })).to.equal(false);
    await consistently('our own write starts nothing', () => seen.length === 1, 200);
  });
});
