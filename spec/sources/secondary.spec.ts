import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ResourceEvent } from '../../lib/core/index.js';
import { Mappers, primaryAnnotations, secondarySource, type MapperError } from '../../lib/sources/index.js';
import { configMap, record, SECRETS, testInformer, useCluster } from '../cache/helpers.js';

const SECRET_KIND = { apiVersion: 'v1', kind: 'Secret' } as const;

const ownerRef = (owner: KubernetesObject, controller = true): V1OwnerReference => ({
  apiVersion: 'v1',
  kind: 'Secret',
  name: owner.metadata?.name ?? '',
  uid: owner.metadata?.uid ?? '',
  controller,
});

const triggers = (events: ResourceEvent[]): string[] =>
  events.map((e) => `${e.id.namespace}/${e.id.name} ${e.action} ${e.source} ${e.primary}`);

describe('sources/SecondarySource (embedded API server)', function () {
  this.timeout(15_000);
  const cluster = useCluster();

  async function primaries(ns: string, ...names: string[]): Promise<KubernetesObject[]> {
    const out: KubernetesObject[] = [];
    for (const name of names) out.push(await cluster.secrets.create({ metadata: { name, namespace: ns } }));
    return out;
  }

  it('ES3: by default owner references map a secondary to its primary; getSecondaryResources uses the owner-uid index', async () => {
    const ns = await cluster.namespace();
    const [p1, p2] = await primaries(ns, 'p1', 'p2');
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({ informer: inf, primary: SECRET_KIND });
    const seen = record(cluster, source.events$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'cm1', {}, { ownerReferences: [ownerRef(p1!)] }));
    await cluster.configMaps.create(configMap(ns, 'cm2', {}, { ownerReferences: [ownerRef(p1!, false)] }));
    await cluster.configMaps.create(configMap(ns, 'orphan'));
    await seen.until((e) => e.length === 2);
    expect(triggers(seen.events)).to.deep.equal([`${ns}/p1 trigger configmaps false`, `${ns}/p1 trigger configmaps false`]);
    expect(
      source
        .getSecondaryResources(p1!)
        .map((s) => s.metadata?.name)
        .sort(),
    ).to.deep.equal(['cm1', 'cm2']);
    expect(source.getSecondaryResources(p2!)).to.deep.equal([]);
    expect(() => source.getSecondaryResource(p1!)).to.throw(/has 2 secondaries \(.*cm1.*cm2.*\); use getSecondaryResources/);
    expect(source.getSecondaryResource(p2!)).to.equal(undefined);
  });

  it('ES3: a modified secondary maps old and new: a changed owner triggers both primaries', async () => {
    const ns = await cluster.namespace();
    const [p1, p2] = await primaries(ns, 'p1', 'p2');
    await cluster.configMaps.create(configMap(ns, 'cm', {}, { ownerReferences: [ownerRef(p1!)] }));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({ informer: inf, primary: SECRET_KIND });
    const seen = record(cluster, source.events$);
    inf.start();
    await inf.whenSynced();
    await seen.until((e) => e.length === 1); // the initial list
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'cm' }, { metadata: { ownerReferences: [ownerRef(p2!)] } });
    await seen.until((e) => e.length === 3);
    expect(
      seen.events
        .slice(1)
        .map((e) => e.id.name)
        .sort(),
    ).to.deep.equal(['p1', 'p2']);
    expect(source.getSecondaryResource(p2!)?.metadata?.name).to.equal('cm');
    expect(source.getSecondaryResource(p1!)).to.equal(undefined);
  });

  it('ES3: Mappers.fromAnnotation maps across namespaces; getSecondaryResources uses an index of the mapper', async () => {
    const ns = await cluster.namespace();
    const home = await cluster.namespace();
    const [primary] = await primaries(home, 'web');
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({ informer: inf, toPrimaries: Mappers.fromDefaultAnnotations(), name: 'annotated' });
    const seen = record(cluster, source.events$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'cm', {}, { annotations: primaryAnnotations({ namespace: home, name: 'web' }) }));
    await cluster.configMaps.create(configMap(ns, 'plain'));
    await seen.until((e) => e.length === 1);
    expect(triggers(seen.events)).to.deep.equal([`${home}/web trigger annotated false`]);
    expect(source.getSecondaryResources(primary!).map((s) => s.metadata?.name)).to.deep.equal(['cm']);
  });

  it('ES3: a custom mapper may ignore events (empty set); a throwing mapper is reported and the stream goes on', async () => {
    const ns = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({
      informer: inf,
      name: 'custom',
      toPrimaries: (s) => {
        const target = s.metadata?.labels?.['target'];
        if (target === 'boom') throw new Error('cannot map');
        return target ? [{ namespace: ns, name: target }] : [];
      },
    });
    const seen = record(cluster, source.events$);
    const errors = record<MapperError>(cluster, source.errors$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'ignored'));
    await cluster.configMaps.create(configMap(ns, 'bad', {}, { labels: { target: 'boom' } }));
    await cluster.configMaps.create(configMap(ns, 'good', {}, { labels: { target: 'p' } }));
    await seen.until((e) => e.length === 1);
    expect(triggers(seen.events)).to.deep.equal([`${ns}/p trigger custom false`]);
    expect(errors.events[0]?.error.message).to.match(/secondary source custom: toPrimaries failed on ConfigMap [^ ]*\/bad .*cannot map/);
  });

  it('ES3: many-to-many: primaries name their secondaries; secondary events reach every primary naming them', async () => {
    const ns = await cluster.namespace();
    const uses = (p: KubernetesObject) =>
      (p.metadata?.annotations?.['uses'] ?? '')
        .split(',')
        .filter(Boolean)
        .map((name) => ({ namespace: p.metadata?.namespace ?? '', name }));
    await cluster.secrets.create({ metadata: { name: 'p1', namespace: ns, annotations: { uses: 'shared,only1' } } });
    await cluster.secrets.create({ metadata: { name: 'p2', namespace: ns, annotations: { uses: 'shared' } } });
    const primaryInformer = testInformer(cluster, { namespaces: [ns], resource: SECRETS });
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({ informer: inf, toSecondaries: uses, primaryInformer, name: 'refs' });
    const seen = record(cluster, source.events$);
    primaryInformer.start();
    inf.start();
    await Promise.all([primaryInformer.whenSynced(), inf.whenSynced()]);
    await cluster.configMaps.create(configMap(ns, 'shared'));
    await cluster.configMaps.create(configMap(ns, 'only1'));
    await cluster.configMaps.create(configMap(ns, 'unused'));
    await seen.until((e) => e.length === 3);
    expect(seen.events.map((e) => `${e.id.name}<-${e.object?.metadata?.name}`).sort()).to.deep.equal([
      'p1<-only1',
      'p1<-shared',
      'p2<-shared',
    ]);
    const p1 = primaryInformer.store.get({ namespace: ns, name: 'p1' })!;
    expect(
      source
        .getSecondaryResources(p1)
        .map((s) => s.metadata?.name)
        .sort(),
    ).to.deep.equal(['only1', 'shared']);
  });

  it('ES4: a secondary a dependent wrote (recorded on the source cache) triggers no run', async () => {
    const ns = await cluster.namespace();
    const [p1] = await primaries(ns, 'p1');
    await cluster.configMaps.create(configMap(ns, 'cm', {}, { ownerReferences: [ownerRef(p1!)] }));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const source = secondarySource({ informer: inf, primary: SECRET_KIND });
    const seen = record(cluster, source.events$);
    const raw = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await seen.until((e) => e.length === 1); // the initial list
    const id = { namespace: ns, name: 'cm' };
    const written = await source.cache.trackWrite(id, () => cluster.configMaps.mergePatch(id, { data: { by: 'dependent' } }));
    expect(source.getSecondaryResource(p1!)?.metadata?.resourceVersion).to.equal(written.metadata?.resourceVersion);
    await raw.until((e) => e.length === 2);
    await cluster.configMaps.mergePatch(id, { data: { by: 'someone else' } });
    await seen.until((e) => e.length === 2);
    expect((seen.events[1]?.object as { data?: Record<string, string> }).data).to.deep.equal({ by: 'someone else' });
  });

  it('needs a mapper or the primary kind, and says so', () => {
    const inf = testInformer(cluster);
    expect(() => secondarySource({ informer: inf })).to.throw(/give toPrimaries, or primary/);
  });
});
