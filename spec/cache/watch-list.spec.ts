import { expect } from 'chai';
import type { InformerError } from '../../lib/cache/index.js';
import { configMap, names, record, testInformer, useCluster, waitFor } from './helpers.js';

describe('cache: streamed lists (watch-list, sendInitialEvents) on the embedded API server', function () {
  this.timeout(20_000);
  const cluster = useCluster({ bookmarkIntervalMs: 100 });

  it('ES9: the initial list comes as a watch-list on one connection: no LIST request, synced at the initial-events-end bookmark, listed events first', async () => {
    const ns = await cluster.namespace();
    for (const name of ['a', 'b', 'c']) await cluster.configMaps.create(configMap(ns, name));
    const requests: string[] = [];
    const stop = cluster.server.requests.onRequest((r) => {
      if (r.namespace === ns && r.resource === 'configmaps' && (r.verb === 'list' || r.verb === 'watch')) requests.push(r.verb);
    });
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    expect(seen.events.map((e) => [e.object.metadata?.name, e.listed === true])).to.deep.equal([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    await cluster.configMaps.create(configMap(ns, 'after'));
    await seen.until((e) => e.length === 4);
    expect(seen.events[3]?.listed).to.equal(undefined);
    expect(inf.status()[0]).to.deep.include({ state: 'watching', synced: true, lists: 1 });
    stop();
    expect(requests, 'one watch, no list').to.deep.equal(['watch']);
  });

  it('ES9, ES1: after a 410 the relist is streamed too (no LIST request), and emits the difference, deletes included, marked listed', async () => {
    const ns = await cluster.namespace();
    for (const name of ['keep', 'change', 'gone']) await cluster.configMaps.create(configMap(ns, name, { v: '1' }));
    const verbs: string[] = [];
    const stop = cluster.server.requests.onRequest((r) => {
      if (r.namespace === ns && r.resource === 'configmaps' && (r.verb === 'list' || r.verb === 'watch')) verbs.push(r.verb);
    });
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    cluster.server.faults.delayRequests({ verb: 'watch', namespace: ns, delayMs: 300, count: 1 });
    cluster.server.faults.dropWatches({ resource: 'configmaps', namespace: ns });
    await cluster.configMaps.create(configMap(ns, 'new'));
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'change' }, { data: { v: '2' } });
    await cluster.configMaps.delete({ namespace: ns, name: 'gone' });
    cluster.server.faults.compact(); // the resumed watch's resourceVersion is now too old: 410
    await waitFor(
      () => inf.status()[0]?.lists === 2,
      10_000,
      () => JSON.stringify(inf.status()),
    );
    const relist = seen.events.slice(3);
    expect(
      relist.every((e) => e.listed === true),
      'all marked listed',
    ).to.equal(true);
    expect(names(relist).sort()).to.deep.equal(['added new', 'deleted gone', 'modified change']);
    expect(
      inf.store
        .list(ns)
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['change', 'keep', 'new']);
    stop();
    expect(verbs, 'watch-lists and a resumed watch, never a LIST').to.not.include('list');
  });

  it('ES9: a server that refuses the watch-list (422, as a server before 1.27 answers) gets paged lists instead, without a failure', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a'));
    cluster.server.faults.failRequests({ verb: 'watch', resource: 'configmaps', namespace: ns, status: 422, count: 1 });
    const verbs: string[] = [];
    const stop = cluster.server.requests.onRequest((r) => {
      if (r.namespace === ns && r.resource === 'configmaps' && (r.verb === 'list' || r.verb === 'watch')) verbs.push(r.verb);
    });
    const inf = testInformer(cluster, { namespaces: [ns] });
    const errors = record<InformerError>(cluster, inf.errors$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    await cluster.configMaps.create(configMap(ns, 'b'));
    await waitFor(() => inf.store.list(ns).length === 2);
    stop();
    expect(verbs.slice(0, 3)).to.deep.equal(['watch', 'list', 'watch']);
    expect(errors.events).to.deep.equal([]);
  });

  it('ES9, ES2: a watch-list refused for lack of permission fails the start, naming the error', async () => {
    const ns = await cluster.namespace();
    cluster.server.faults.failRequests({ verb: 'watch', resource: 'configmaps', namespace: ns, status: 403 });
    const inf = testInformer(cluster, { namespaces: [ns] });
    inf.start();
    let error: Error | undefined;
    await inf.whenSynced().catch((e: Error) => (error = e));
    expect(error?.message).to.match(/failed before its cache synced: .*403/);
  });
});
