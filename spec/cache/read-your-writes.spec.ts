import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { readYourWrites, type InformerEvent } from '../../lib/cache/index.js';
import { compareResourceVersions } from '../../lib/cache/resource-version.js';
import { configMap, names, record, testInformer, useCluster, waitFor } from './helpers.js';

const rv = (o: KubernetesObject | undefined): string | undefined => o?.metadata?.resourceVersion;

describe('cache/ReadYourWritesCache (embedded API server)', function () {
  this.timeout(15_000);
  const cluster = useCluster();

  async function setup() {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a', { v: '0' }));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const cache = readYourWrites(inf);
    const raw = record(cluster, inf.events$);
    const passed = record(cluster, cache.events$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    const id = { namespace: ns, name: 'a' };
    return { ns, inf, cache, raw, passed, id };
  }

  it('UP3: after recordWrite, get returns the written version before the watch delivers it', async () => {
    const { inf, cache, raw, id } = await setup();
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps' });
    const written = await cluster.configMaps.mergePatch(id, { data: { v: '1' } });
    cache.recordWrite(written);
    expect(Number(rv(inf.store.get(id)))).to.be.lessThan(Number(rv(written)));
    expect(rv(cache.get(id))).to.equal(rv(written));
    expect(rv(await cache.fetch(id))).to.equal(rv(written));
    expect(cache.list().map(rv)).to.deep.equal([rv(written)]);
    expect(cache.byIndex('namespace', id.namespace).map(rv)).to.deep.equal([rv(written)]);
    stall.remove();
    await raw.until((e) => e.length === 2);
    expect(rv(inf.store.get(id))).to.equal(rv(written));
    expect(cache.size, 'dropped once the informer caught up').to.equal(0);
    expect(rv(cache.get(id))).to.equal(rv(written));
  });

  it('ES4: the event of our own write updates the store but is not passed on; a foreign write is', async () => {
    const { inf, cache, raw, passed, id } = await setup();
    // Held back so that the answer is recorded before the event arrives (else see trackWrite).
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps' });
    const written = await cluster.configMaps.mergePatch(id, { data: { v: '1' } });
    cache.recordWrite(written);
    stall.remove();
    await raw.until((e) => e.length === 2);
    expect(rv(inf.store.get(id))).to.equal(rv(written));
    const foreign = await cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } });
    await passed.until((e) => e.length === 2);
    expect(passed.events.map((e: InformerEvent<KubernetesObject>) => `${e.type} ${rv(e.object)}`)).to.deep.equal([
      `added ${rv(raw.events[0]?.object)}`,
      `modified ${rv(foreign)}`,
    ]);
  });

  it('ES4: own and foreign writes delivered together: only the foreign one passes, get returns the newest', async () => {
    const { cache, raw, passed, id } = await setup();
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps' });
    const own1 = await cluster.configMaps.mergePatch(id, { data: { v: '1' } });
    cache.recordWrite(own1);
    const own2 = await cluster.configMaps.mergePatch(id, { metadata: { labels: { step: '2' } } });
    cache.recordWrite(own2);
    const foreign = await cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } });
    expect(rv(cache.get(id)), 'still our newest write: the foreign one is not seen yet').to.equal(rv(own2));
    stall.remove();
    await raw.until((e) => e.length === 4);
    await passed.until((e) => e.length === 2);
    expect(passed.events.slice(1).map((e) => rv(e.object))).to.deep.equal([rv(foreign)]);
    expect(rv(cache.get(id))).to.equal(rv(foreign));
    expect(cache.size).to.equal(0);
  });

  it('ES4: trackWrite holds an event that arrives before the answer, and drops it as our own', async () => {
    const { inf, cache, raw, passed, id } = await setup();
    const written = await cache.trackWrite(id, async () => {
      const answer = await cluster.configMaps.mergePatch(id, { data: { v: '1' } });
      await raw.until((e) => e.length === 2); // the informer has delivered our event before we return
      return answer;
    });
    expect(rv(inf.store.get(id))).to.equal(rv(written));
    await cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } });
    await passed.until((e) => e.length === 2);
    expect(names(passed.events)).to.deep.equal(['added a', 'modified a']);
    expect((passed.events[1]?.object as { data?: Record<string, string> }).data).to.deep.equal({ v: 'foreign' });
  });

  it('ES4: a failed write releases the events held meanwhile', async () => {
    const { cache, passed, id } = await setup();
    let failure: Error | undefined;
    await cache
      .trackWrite(id, async () => {
        await cluster.configMaps.mergePatch(id, { data: { v: 'foreign-during-write' } });
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('our write failed');
      })
      .catch((e: Error) => (failure = e));
    expect(failure?.message).to.equal('our write failed');
    await passed.until((e) => e.length === 2);
    expect(names(passed.events)).to.deep.equal(['added a', 'modified a']);
  });

  it('ES4: an object we created is readable at once and its ADDED event is ours', async () => {
    const { ns, cache, raw, passed } = await setup();
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps' });
    const created = await cluster.configMaps.create(configMap(ns, 'mine'));
    cache.recordWrite(created);
    expect(rv(cache.get({ namespace: ns, name: 'mine' }))).to.equal(rv(created));
    expect(
      cache
        .list(ns)
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['a', 'mine']);
    stall.remove();
    await raw.until((e) => e.length === 2);
    expect(names(passed.events)).to.deep.equal(['added a']);
  });

  it('ES4, UP3: issue 9 — an unchanged write answered with a foreign change passes it on at once, and its late event runs nothing more', async () => {
    const { ns, cache, raw, passed, id } = await setup();
    await cluster.configMaps.mergePatch(id, { metadata: { labels: { l: '1' } } });
    await passed.until((e) => e.length === 2);
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps' });
    const foreign = await cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } }); // its event is in transit
    const base = cache.get(id);
    const answer = await cache.trackWrite(id, () => cluster.configMaps.mergePatch(id, { metadata: { labels: { l: '1' } } }), {
      base,
      unchanged: true,
    });
    expect(rv(answer), 'the write changed nothing on the server').to.equal(rv(foreign));
    await passed.until((e) => e.length === 3);
    expect(passed.events[2]).to.deep.include({ type: 'modified', object: answer, oldObject: base });
    expect(rv(cache.get(id)), 'read back at once (UP3)').to.equal(rv(foreign));
    stall.remove();
    await cluster.configMaps.create(configMap(ns, 'later'));
    await raw.until((e) => e.length === 4);
    expect(names(passed.events), 'the foreign event itself is not passed a second time').to.deep.equal([
      'added a',
      'modified a',
      'modified a',
      'added later',
    ]);
  });

  it('ES4: issue 9 — a foreign change delivered during an unchanged write passes with its own event, not dropped as ours', async () => {
    const { cache, raw, passed, id } = await setup();
    const base = cache.get(id);
    const answer = await cache.trackWrite(
      id,
      async () => {
        await cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } });
        await raw.until((e) => e.length === 2); // delivered and held while our write runs
        return cluster.configMaps.mergePatch(id, { data: { v: 'foreign' } }); // ours changes nothing on top of it
      },
      { base, unchanged: true },
    );
    await passed.until((e) => e.length === 2);
    expect(passed.events.map((e) => `${e.type} ${rv(e.object)}`)).to.deep.equal([`added ${rv(base)}`, `modified ${rv(answer)}`]);
  });

  it('ES4: the answer to a no-op write is not recorded (no event will come), so later events pass', async () => {
    const { inf, cache, passed, id } = await setup();
    const same = await cluster.configMaps.mergePatch(id, { data: { v: '0' } });
    expect(rv(same)).to.equal(rv(inf.store.get(id)));
    cache.recordWrite(same);
    expect(cache.size).to.equal(0);
    await cluster.configMaps.mergePatch(id, { data: { v: '1' } });
    await passed.until((e) => e.length === 2);
    expect(() => cache.recordWrite({ metadata: { name: 'x' } })).to.throw(/no metadata.resourceVersion/);
  });
});

describe('cache/compareResourceVersions', () => {
  it('orders decimal versions numerically (any length) and others only by equality', () => {
    expect(compareResourceVersions('9', '10')).to.be.lessThan(0);
    expect(compareResourceVersions('100', '99')).to.be.greaterThan(0);
    expect(compareResourceVersions('0012', '12')).to.equal(0);
    expect(compareResourceVersions('123456789012345678901234567890', '123456789012345678901234567891')).to.be.lessThan(0);
    expect(compareResourceVersions('abc', 'abc')).to.equal(0);
    expect(compareResourceVersions('abc', 'abd')).to.equal(undefined);
    expect(compareResourceVersions('12', 'x12')).to.equal(undefined);
  });
});
