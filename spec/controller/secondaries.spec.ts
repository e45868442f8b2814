import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { Mappers } from '../../lib/sources/index.js';
import {
  CONFIGMAPS,
  createWidget,
  eventually,
  getWidget,
  patchWidget,
  recordOutcomes,
  RunTracker,
  SECRETS,
  capturingLogger,
  startEnv,
  widget,
  widgetConfig,
  type ConfigMap,
  type Env,
  type Widget,
} from './fixtures.js';

const ownerRef = (w: Widget) => ({
  apiVersion: w.apiVersion!,
  kind: w.kind!,
  name: w.metadata!.name!,
  uid: w.metadata!.uid!,
  controller: true,
});
const namesOf = (objects: KubernetesObject[]) => objects.map((o) => o.metadata?.name ?? '').sort();

describe('controller secondaries against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('ES4, UP3: a ConfigMap applied through ctx.secondaryClient runs nothing, the next run reads it with its watch stalled, a foreign change runs', async () => {
    const runs = new RunTracker();
    const seen: { name: string; data: string | undefined; source: string }[] = [];
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        runs.begin(w)();
        const current = ctx.getSecondaryResource<ConfigMap>('configmaps');
        seen.push({
          name: w.metadata!.name!,
          data: current?.data?.['value'],
          source: ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type,
        });
        await ctx.secondaryClient<ConfigMap>('configmaps').apply(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${w.metadata!.name}-cm`, namespace: w.metadata!.namespace, ownerReferences: [ownerRef(w)] },
            data: { value: w.spec?.value ?? '' },
          },
          { force: true },
        );
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ secondaries: [{ resource: CONFIGMAPS }] }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await env.watchesOpen(2);

    // UP3: with the ConfigMap watch stalled, only the write's answer tells the next run what is there.
    const stall = env.server.faults.stallWatches({ resource: 'configmaps' });
    expect(stall.hits).to.equal(1);
    await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.length === 1, 'the first run');
    expect((await env.configMaps.get({ namespace: 'default', name: 'w1-cm' })).data).to.deep.equal({ value: 'a' });
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await outcomes.until('w1', (o) => o.length === 2, 'the run after the spec change');
    expect(seen.map((s) => s.data)).to.deep.equal([undefined, 'a']);

    // ES4: the held events of those two writes are ours: no run. w2's ConfigMap events come after them.
    stall.remove();
    await createWidget(env, widget('w2'));
    await outcomes.until('w2', (o) => o.length === 1, 'w2 reconciled');
    await env.configMaps.mergePatch({ namespace: 'default', name: 'w2-cm' }, { data: { value: 'foreign' } });
    await outcomes.until('w2', (o) => o.length === 2, 'w2 run by the foreign change');
    expect(runs.count('w1'), 'our own ConfigMap writes ran w1').to.equal(2);
    expect(seen.filter((s) => s.name === 'w2')).to.deep.equal([
      { name: 'w2', data: undefined, source: 'widgets.sample.rxkube.dev' },
      { name: 'w2', data: 'foreign', source: 'configmaps' },
    ]);
    // The second run put its value back; that write of ours ran nothing either.
    await eventually(
      'w2-cm repaired',
      async () => (await env.configMaps.get({ namespace: 'default', name: 'w2-cm' })).data?.['value'] === 'a',
    );

    // A foreign change to w1's ConfigMap runs w1, and only w1.
    await env.configMaps.mergePatch({ namespace: 'default', name: 'w1-cm' }, { data: { value: 'foreign' } });
    await outcomes.until('w1', (o) => o.length === 3, 'w1 run by the foreign change');
    expect(seen.at(-1)).to.deep.equal({ name: 'w1', data: 'foreign', source: 'configmaps' });
    expect(runs.count('w2')).to.equal(2);
  });

  it('ES3: secondary events reach the right primary by owner reference, by annotation and by a custom mapper (read through a detached getSecondaryResources)', async () => {
    const runs = new RunTracker();
    const seen: Record<string, { source: string; owned: string[]; annotated: string[]; custom: string[] }[]> = {};
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        runs.begin(w)();
        // A context's methods work detached from it.
        // eslint-disable-next-line @typescript-eslint/unbound-method
        const { getSecondaryResources } = ctx;
        (seen[w.metadata!.name!] ??= []).push({
          source: ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type,
          owned: namesOf(getSecondaryResources('owned')),
          annotated: namesOf(ctx.getSecondaryResources('annotated')),
          custom: namesOf(ctx.getSecondaryResources('custom')),
        });
        return UpdateControl.noUpdate();
      },
    };
    const targets = (cm: ConfigMap) =>
      (cm.data?.['targets'] ?? '')
        .split(',')
        .filter(Boolean)
        .map((name) => ({ name, namespace: cm.metadata!.namespace! }));
    const op = env.operator();
    const ctrl = op.register(
      reconciler,
      widgetConfig({
        secondaries: [
          { name: 'owned', resource: CONFIGMAPS, labelSelector: { mapping: 'owner' } },
          { name: 'annotated', resource: SECRETS, toPrimaries: Mappers.fromAnnotation('sample.rxkube.dev/widget') },
          { name: 'custom', resource: CONFIGMAPS, labelSelector: { mapping: 'custom' }, toPrimaries: (s) => targets(s as ConfigMap) },
        ],
      }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    for (const name of ['w1', 'w2', 'w3']) await createWidget(env, widget(name));
    for (const name of ['w1', 'w2', 'w3']) await outcomes.until(name, (o) => o.length === 1, 'the first run');
    const w2 = (await getWidget(env, 'w2'))!;

    await env.configMaps.create({
      metadata: { name: 'owned-by-w2', namespace: 'default', labels: { mapping: 'owner' }, ownerReferences: [ownerRef(w2)] },
    });
    await outcomes.until('w2', (o) => o.length === 2, 'w2 run by its owned ConfigMap');
    expect(seen['w2']?.[1]).to.deep.include({ source: 'owned', owned: ['owned-by-w2'] });

    await env.secrets.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'for-w3', namespace: 'default', annotations: { 'sample.rxkube.dev/widget': 'w3' } },
    });
    await outcomes.until('w3', (o) => o.length === 2, 'w3 run by its annotated Secret');
    expect(seen['w3']?.[1]).to.deep.include({ source: 'annotated', annotated: ['for-w3'] });

    await env.configMaps.create({
      metadata: { name: 'for-w1-w3', namespace: 'default', labels: { mapping: 'custom' } },
      data: { targets: 'w1,w3' },
    });
    await outcomes.until('w1', (o) => o.length === 2, 'w1 run by the custom mapper');
    await outcomes.until('w3', (o) => o.length === 3, 'w3 run by the custom mapper');
    expect(seen['w1']?.[1]).to.deep.include({ source: 'custom', custom: ['for-w1-w3'], owned: [], annotated: [] });
    expect(seen['w3']?.[2]).to.deep.include({ source: 'custom', custom: ['for-w1-w3'], annotated: ['for-w3'] });

    // Retargeting the custom ConfigMap runs the old and the new primaries (old and new object are mapped).
    await env.configMaps.mergePatch({ namespace: 'default', name: 'for-w1-w3' }, { data: { targets: 'w2' } });
    for (const [name, n] of [
      ['w1', 3],
      ['w2', 3],
      ['w3', 4],
    ] as const)
      await outcomes.until(name, (o) => o.length === n, 'the retargeting run');
    expect(seen['w2']?.[2]?.custom).to.deep.equal(['for-w1-w3']);
    expect(seen['w1']?.[2]?.custom).to.deep.equal([]);
    expect([runs.count('w1'), runs.count('w2'), runs.count('w3')]).to.deep.equal([3, 3, 4]);
  });

  it('ES3: many-to-many through toSecondaries: a shared ConfigMap runs every widget that names it, and only those', async () => {
    const seen: Record<string, string[][]> = {};
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        (seen[w.metadata!.name!] ??= []).push(namesOf(ctx.getSecondaryResources('shared')));
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(
      reconciler,
      widgetConfig({
        secondaries: [
          {
            name: 'shared',
            resource: CONFIGMAPS,
            toSecondaries: (w) => (w.spec?.uses ?? []).map((name) => ({ name, namespace: w.metadata!.namespace! })),
          },
        ],
      }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    for (const name of ['s1', 's2']) await env.configMaps.create({ metadata: { name, namespace: 'default' }, data: { v: '0' } });
    await createWidget(env, widget('wa', { uses: ['s1'] }));
    await createWidget(env, widget('wb', { uses: ['s1', 's2'] }));
    await createWidget(env, widget('wc', { uses: ['s2'] }));
    for (const name of ['wa', 'wb', 'wc']) await outcomes.until(name, (o) => o.length === 1, 'the first run');
    expect([seen['wa']?.[0], seen['wb']?.[0], seen['wc']?.[0]]).to.deep.equal([['s1'], ['s1', 's2'], ['s2']]);

    const counts = () => ['wa', 'wb', 'wc'].map((n) => outcomes.of(n).length);
    await env.configMaps.mergePatch({ namespace: 'default', name: 's1' }, { data: { v: '1' } });
    await outcomes.until('wa', (o) => o.length === 2, 'wa run by s1');
    await outcomes.until('wb', (o) => o.length === 2, 'wb run by s1');
    await env.configMaps.mergePatch({ namespace: 'default', name: 's2' }, { data: { v: '1' } });
    await outcomes.until('wc', (o) => o.length === 2, 'wc run by s2');
    await outcomes.until('wb', (o) => o.length === 3, 'wb run by s2');
    expect(counts(), 'one run per widget that names the changed ConfigMap').to.deep.equal([2, 3, 2]);

    // wa switches to s2: the index follows, s1 now runs only wb.
    await patchWidget(env, 'wa', { spec: { uses: ['s2'] } });
    await outcomes.until('wa', (o) => o.length === 3, 'wa run by its spec change');
    expect(seen['wa']?.[2]).to.deep.equal(['s2']);
    await env.configMaps.mergePatch({ namespace: 'default', name: 's1' }, { data: { v: '2' } });
    await outcomes.until('wb', (o) => o.length === 4, 'wb run by s1');
    expect(counts()).to.deep.equal([3, 4, 2]);
  });

  it('ES7: with a bounded primary cache an evicted primary still runs: it is read from the API', async () => {
    const seen: string[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        seen.push(`${w.metadata!.name}:${w.spec?.value}:${ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type}`);
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(
      reconciler,
      widgetConfig({ secondaries: [{ resource: CONFIGMAPS }], informer: { bounded: { maxEntries: 1, timeToIdleMs: 60_000 } } }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    const w1 = await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.length === 1, 'w1 reconciled');
    await createWidget(env, widget('w2')); // the cache holds one object: w1 is evicted
    await outcomes.until('w2', (o) => o.length === 1, 'w2 reconciled');
    await env.configMaps.create({ metadata: { name: 'w1-cm', namespace: 'default', ownerReferences: [ownerRef(w1)] } });
    const [, second] = await outcomes.until('w1', (o) => o.length === 2, 'w1 run by its ConfigMap');
    expect(second?.result).to.equal('success');
    expect(seen).to.deep.equal(['w1:a:widgets.sample.rxkube.dev', 'w2:a:widgets.sample.rxkube.dev', 'w1:a:configmaps']);
  });
});

describe('controller secondaries: a mapper that throws', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('ES3: a toPrimaries mapper that throws on one object drops that object, logs once per version, and neither fails start() nor restarts the watch', async () => {
    const { logger, lines } = capturingLogger('info');
    await env.configMaps.create({
      metadata: { name: 'malformed', namespace: 'default', labels: { flagged: 'yes' } },
      data: { target: '' },
    });
    await env.configMaps.create({ metadata: { name: 'good', namespace: 'default', labels: { flagged: 'yes' } }, data: { target: 'w1' } });
    const seen: string[][] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(_w, ctx) {
        seen.push(namesOf(ctx.getSecondaryResources('flagged')));
        return UpdateControl.noUpdate();
      },
    };
    const toPrimaries = (cm: KubernetesObject) => {
      const target = (cm as ConfigMap).data?.['target'];
      if (!target) throw new Error('no target');
      return [{ name: target, namespace: cm.metadata!.namespace! }];
    };
    const op = env.operator({ logger });
    const ctrl = op.register(
      reconciler,
      widgetConfig({ secondaries: [{ name: 'flagged', resource: CONFIGMAPS, labelSelector: { flagged: 'yes' }, toPrimaries }] }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await env.watchesOpen(2);
    await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.length === 1, 'the first run');
    expect(seen[0], 'the good ConfigMap is indexed, the malformed one left out').to.deep.equal(['good']);

    // At run time: a new version of the malformed object is dropped and logged again; the watch stays.
    await env.configMaps.mergePatch({ namespace: 'default', name: 'malformed' }, { metadata: { annotations: { touched: 'yes' } } });
    await env.configMaps.mergePatch({ namespace: 'default', name: 'good' }, { metadata: { annotations: { touched: 'yes' } } });
    await outcomes.until('w1', (o) => o.length === 2, 'w1 run by the good ConfigMap');
    const failures = lines().filter((l) => /mapper|mapping/.test(String(l['msg'])) && l['level'] === 50);
    const names = failures.map((l) => (l['object'] as { name?: string } | undefined)?.name);
    expect(
      names.every((n) => n === 'malformed'),
      JSON.stringify(failures),
    ).to.equal(true);
    const versions = new Set(failures.map((l) => (l['object'] as { resourceVersion?: string }).resourceVersion));
    expect(versions.size, 'one line per version of the malformed object').to.equal(2);
    expect(failures.length, 'logged once per version').to.equal(2);
    expect(failures[0]).to.deep.include({ source: 'flagged' });
    expect(String((failures[0]?.['err'] as { message?: string }).message)).to.contain('no target');
    expect(
      lines().filter((l) => /watch failed|list failed/.test(String(l['msg']))),
      'no watch restarted',
    ).to.deep.equal([]);
    expect(env.server.stats().watches).to.equal(2);
  });
});
