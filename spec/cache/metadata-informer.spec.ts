import { expect } from 'chai';
import type { PartialObjectMetadata } from '../../lib/kube/index.js';
import { configMap, names, record, testInformer, useCluster, waitFor } from './helpers.js';

describe('cache: a metadata-only informer (PartialObjectMetadata) on the embedded API server', function () {
  this.timeout(15_000);
  const cluster = useCluster({ bookmarkIntervalMs: 100 });

  it('ES10: lists and watches metadata only: names, labels, annotations and owners, never the data', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'before', { secret: 'x'.repeat(1000) }, { labels: { app: 'a' } }));
    const inf = testInformer<PartialObjectMetadata>(cluster, { namespaces: [ns], metadataOnly: true });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'after', { secret: 'y' }));
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'after' }, { metadata: { labels: { app: 'b' } } });
    await cluster.configMaps.delete({ namespace: ns, name: 'before' });
    await seen.until((e) => e.length === 4);
    expect(names(seen.events)).to.deep.equal(['added before', 'added after', 'modified after', 'deleted before']);
    for (const { object } of seen.events) {
      expect(object.kind).to.equal('PartialObjectMetadata');
      expect(object).to.not.have.property('data');
    }
    const cached = inf.store.get({ namespace: ns, name: 'after' });
    expect(cached?.metadata?.labels).to.deep.equal({ app: 'b' });
    expect(cached).to.not.have.property('data');
    expect(JSON.stringify(inf.store.list())).to.not.include('yyy').and.not.include('secret');
  });

  it('ES10: reads an object as metadata too (find), and undefined for one that does not exist', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'one', { secret: 'z' }));
    const inf = testInformer<PartialObjectMetadata>(cluster, { namespaces: [ns], metadataOnly: true, bounded: { maxEntries: 1 } });
    inf.start();
    await inf.whenSynced();
    const found = await inf.store.fetch({ namespace: ns, name: 'one' });
    expect(found?.kind).to.equal('PartialObjectMetadata');
    expect(found).to.not.have.property('data');
    expect(await inf.store.fetch({ namespace: ns, name: 'missing' })).to.equal(undefined);
  });

  it('ES10: keeps a metadata informer and a full one of the same type apart', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'both', { v: '1' }));
    const full = testInformer(cluster, { namespaces: [ns] });
    const meta = testInformer<PartialObjectMetadata>(cluster, { namespaces: [ns], metadataOnly: true });
    full.start();
    meta.start();
    await Promise.all([full.whenSynced(), meta.whenSynced()]);
    await waitFor(() => full.store.list().length === 1 && meta.store.list().length === 1);
    expect((full.store.list()[0] as { data?: unknown }).data).to.deep.equal({ v: '1' });
    expect(meta.store.list()[0]).to.not.have.property('data');
  });
});
