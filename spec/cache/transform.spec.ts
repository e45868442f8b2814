import { expect } from 'chai';
import { configMap, testInformer, useCluster, waitFor } from './helpers.js';

describe('cache/Informer transform (cached objects)', function () {
  this.timeout(15_000);
  const cluster = useCluster();

  it('by default drops the Update and status managedFields entries every write leaves, keeps server-side-apply ones', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'created', { v: '1' }));
    await cluster.configMaps.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: 'applied' }, data: { v: '1' } },
      { fieldManager: 'me', force: true },
    );
    const inf = testInformer(cluster, { namespaces: [ns] });
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'applied' }, { data: { w: '2' } });
    await waitFor(
      () => (inf.store.get({ namespace: ns, name: 'applied' }) as { data?: Record<string, string> } | undefined)?.data?.['w'] === '2',
    );

    expect(
      (await cluster.configMaps.get({ namespace: ns, name: 'created' })).metadata?.managedFields,
      'the server keeps them',
    ).to.have.length(1);
    expect(inf.store.get({ namespace: ns, name: 'created' })?.metadata).to.not.have.property('managedFields');
    const applied = inf.store.get({ namespace: ns, name: 'applied' })?.metadata?.managedFields ?? [];
    expect(applied.map((e) => `${e.manager} ${e.operation}`)).to.deep.equal(['me Apply']);
  });

  it('a transform of the informer options replaces the default (identity keeps every entry)', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'created', { v: '1' }));
    const inf = testInformer(cluster, { namespaces: [ns], transform: (object) => object });
    inf.start();
    await inf.whenSynced();
    expect(inf.store.get({ namespace: ns, name: 'created' })?.metadata?.managedFields).to.have.length(1);
  });
});
