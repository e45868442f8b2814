import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { classifyError } from '../../lib/kube/index.js';
import { consistently } from '../../lib/testing/index.js';
import { type InformerError, type InformerOptions } from '../../lib/cache/index.js';
import { SHORT_CONNECTION_MS } from '../../lib/cache/reconnect.js';
import { WatchSilentError } from '../../lib/cache/reflector.js';
import { configMap, names, record, testInformer, useCluster, waitFor } from './helpers.js';

describe('cache/Informer (embedded API server)', function () {
  this.timeout(15_000);
  const cluster = useCluster({ bookmarkIntervalMs: 100 });

  /** An informer of a fresh namespace, recorded and watching. */
  async function watching(options: Partial<InformerOptions<KubernetesObject>> = {}) {
    const ns = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns], ...options });
    const seen = record(cluster, inf.events$);
    const errors = record<InformerError>(cluster, inf.errors$);
    const health = record<boolean>(cluster, inf.healthy$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    return { ns, inf, seen, errors, health };
  }

  it('ES1: lists, then watches adds, updates and deletes into the store and the event stream', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'before', { v: '1' }));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    expect(names(seen.events)).to.deep.equal(['added before']);

    await cluster.configMaps.create(configMap(ns, 'a', { v: '1' }));
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'a' }, { data: { v: '2' } });
    await cluster.configMaps.delete({ namespace: ns, name: 'before' });
    await seen.until((e) => e.length === 4);
    expect(names(seen.events)).to.deep.equal(['added before', 'added a', 'modified a', 'deleted before']);
    const modified = seen.events[2];
    expect((modified?.oldObject as { data?: Record<string, string> })?.data).to.deep.equal({ v: '1' });
    expect((inf.store.get({ namespace: ns, name: 'a' }) as { data?: Record<string, string> }).data).to.deep.equal({ v: '2' });
    expect(inf.store.get({ namespace: ns, name: 'before' })).to.equal(undefined);
    expect(inf.store.list(ns).map((o) => o.metadata?.name)).to.deep.equal(['a']);
    expect(inf.isHealthy()).to.equal(true);
  });

  it('EP13: events of the first list are marked listed, events of the watch are not', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'before'));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'after'));
    await seen.until((e) => e.length === 2);
    expect(seen.events.map((e) => [e.object.metadata?.name, e.listed === true])).to.deep.equal([
      ['before', true],
      ['after', false],
    ]);
    inf.stop();
  });

  it('ES1: a dropped watch resumes from the last resourceVersion: no change lost, no duplicate add', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a'));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    // The next watch request answers only after 300 ms: the changes below happen while no watch is open.
    cluster.server.faults.delayRequests({ verb: 'watch', namespace: ns, delayMs: 300, count: 1 });
    expect(cluster.server.faults.dropWatches({ resource: 'configmaps', namespace: ns })).to.equal(1);
    await cluster.configMaps.create(configMap(ns, 'b'));
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'a' }, { data: { v: '2' } });
    await seen.until((e) => e.length >= 3);
    await consistently(
      () => `no duplicate (seen ${names(seen.events).join(', ')})`,
      () => seen.events.length === 3,
      100,
    );
    expect(names(seen.events)).to.deep.equal(['added a', 'added b', 'modified a']);
    expect(inf.status()[0]?.lists, 'resumed, not relisted').to.equal(1);
    expect(inf.status()[0]?.resourceVersion).to.equal(seen.events[2]?.object.metadata?.resourceVersion);
  });

  it('ES1 (issue 9): a watch connection reset after it had been open reconnects at once: no failure, no backoff, health untouched', async () => {
    const { ns, inf, seen, errors, health } = await watching({ backoff: { initialMs: 20_000, maxMs: 20_000 } });
    await new Promise((resolve) => setTimeout(resolve, SHORT_CONNECTION_MS + 100)); // past the short-connection guard
    expect(cluster.server.faults.dropWatches({ resource: 'configmaps', namespace: ns }, { abrupt: true })).to.equal(1);
    await cluster.configMaps.create(configMap(ns, 'after-reset'));
    await seen.until((e) => e.length === 1, 3_000);
    expect(inf.status()[0]?.drops).to.equal(1);
    expect(errors.events.map((e) => String(e.error))).to.deep.equal([]);
    expect(health.events).to.deep.equal([true]);
  });

  it('ES1: a 410 after compaction relists and emits the difference, deletes included', async () => {
    const ns = await cluster.namespace();
    for (const name of ['keep', 'change', 'remove']) await cluster.configMaps.create(configMap(ns, name));
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    cluster.server.faults.delayRequests({ verb: 'watch', namespace: ns, delayMs: 300, count: 1 });
    cluster.server.faults.dropWatches({ resource: 'configmaps', namespace: ns });
    await cluster.configMaps.create(configMap(ns, 'new'));
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'change' }, { data: { v: '2' } });
    await cluster.configMaps.delete({ namespace: ns, name: 'remove' });
    cluster.server.faults.compact(); // the resumed watch's resourceVersion is now too old: 410
    await seen.until((e) => e.length >= 6);
    expect(names(seen.events.slice(0, 3)).sort()).to.deep.equal(['added change', 'added keep', 'added remove']);
    expect(names(seen.events.slice(3)).sort()).to.deep.equal(['added new', 'deleted remove', 'modified change']);
    expect(
      inf.store
        .list(ns)
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['change', 'keep', 'new']);
    expect(inf.status()[0]?.lists, 'listed again after the 410').to.equal(2);
    await waitFor(() => inf.status()[0]?.state === 'watching');
    await cluster.configMaps.create(configMap(ns, 'after'));
    await seen.until((e) => e.some((x) => x.object.metadata?.name === 'after'));
  });

  it('ES1 (issue 9): a 410 on a page of a relist (history compacted while paging) lists afresh at once: no failure, no unhealthy moment, no backoff', async function () {
    this.timeout(30_000);
    const ns = await cluster.namespace();
    // More than one page of 500, so the list pages with a continue token.
    const many = Array.from({ length: 501 }, (_, i) => `cm-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < many.length; i += 50) {
      await Promise.all(many.slice(i, i + 50).map((name) => cluster.configMaps.create(configMap(ns, name))));
    }
    // A backoff long enough that a relist waiting on it would not finish within this test.
    const inf = testInformer(cluster, { namespaces: [ns], backoff: { initialMs: 20_000, maxMs: 20_000 }, watchList: false });
    const errors = record<InformerError>(cluster, inf.errors$);
    const health = record<boolean>(cluster, inf.healthy$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    expect(inf.store.list(ns)).to.have.length(501);

    // Make the watch resume from a compacted resourceVersion (410: relist), and hold the relist's second page.
    const secondPage = cluster.server.faults.delayRequests({ verb: 'list', namespace: ns, delayMs: 400, skip: 1, count: 1 });
    cluster.server.faults.delayRequests({ verb: 'watch', namespace: ns, delayMs: 300, count: 1 });
    cluster.server.faults.dropWatches({ resource: 'configmaps', namespace: ns });
    await cluster.configMaps.create(configMap(ns, 'during-drop'));
    cluster.server.faults.compact();
    await waitFor(
      () => secondPage.hits === 1,
      5_000,
      () => 'the relist to ask for its second page',
    );
    // While the second page waits, history moves on and is compacted: its continue token is now below the compaction.
    await cluster.configMaps.create(configMap(ns, 'during-relist'));
    cluster.server.faults.compact();

    await waitFor(
      () => inf.status()[0]?.lists === 2 && inf.store.get({ namespace: ns, name: 'during-relist' }) !== undefined,
      5_000,
      () => JSON.stringify({ status: inf.status(), errors: errors.events.map((e) => String(e.error)) }),
    );
    expect(inf.store.list(ns)).to.have.length(503);
    expect(
      errors.events.map((e) => String(e.error)),
      'no failure reported (nothing logged)',
    ).to.deep.equal([]);
    expect(health.events, 'never unhealthy (readiness untouched)').to.deep.equal([true]);
  });

  it('ES1: 500s on list back off (growing delays) and recover; health is false meanwhile', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a'));
    cluster.server.faults.failRequests({ verb: 'list', resource: 'configmaps', namespace: ns, status: 500, count: 3 });
    const inf = testInformer(cluster, { namespaces: [ns], watchList: false });
    const errors = record<InformerError>(cluster, inf.errors$);
    const health = record<boolean>(cluster, inf.healthy$);
    inf.start();
    await inf.whenSynced({ failOnError: false });
    expect(errors.events.map((e) => [e.phase, e.attempt, e.delayMs])).to.deep.equal([
      ['list', 0, 20],
      ['list', 1, 40],
      ['list', 2, 80],
    ]);
    expect(String(errors.events[0]?.error)).to.match(/500/);
    await waitFor(() => inf.isHealthy());
    expect(health.events).to.deep.equal([true, false, true]);
    expect(inf.store.get({ namespace: ns, name: 'a' })).to.not.equal(undefined);
  });

  it('ES1: a silent watch is treated as dead, aborted and resumed; health reports it', async () => {
    const ns = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns], timeoutSeconds: 1, deadMarginMs: 300, watchList: false });
    const seen = record(cluster, inf.events$);
    const errors = record<InformerError>(cluster, inf.errors$);
    const health = record<boolean>(cluster, inf.healthy$);
    // The first watch request gets no answer at all for 5 s (not even headers).
    cluster.server.faults.delayRequests({ verb: 'watch', namespace: ns, delayMs: 5_000, count: 1 });
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.create(configMap(ns, 'a'));
    await errors.until((e) => e.length >= 1, 4_000);
    expect(errors.events[0]?.error).to.be.instanceOf(WatchSilentError);
    expect(errors.events[0]?.phase).to.equal('watch');
    await seen.until((e) => e.length >= 1, 3_000);
    expect(names(seen.events)).to.deep.equal(['added a']);
    await waitFor(() => inf.isHealthy());
    expect(health.events).to.deep.equal([true, false, true]);
  });

  it('ES1 (issue 9): a watch held silent past its timeoutSeconds is abandoned at the dead-watch margin and resumed at once, no change lost, health untouched', async () => {
    const { ns, inf, seen, errors, health } = await watching({ timeoutSeconds: 1, deadMarginMs: 1_500 });
    const silence = cluster.server.faults.silenceWatches({ resource: 'configmaps', namespace: ns, forMs: 20_000 });
    expect(silence.hits).to.equal(1);
    const silencedAt = Date.now();
    await cluster.configMaps.create(configMap(ns, 'during-silence'));
    await seen.until((e) => e.length === 1, 10_000);
    const elapsed = Date.now() - silencedAt;
    // Dead after timeoutSeconds (1 s) plus the margin (1.5 s) of silence, not at the silence's end (20 s).
    expect(elapsed).to.be.within(1_500, 9_000);
    expect(names(seen.events)).to.deep.equal(['added during-silence']);
    expect(inf.status()[0]?.drops, 'counted as a dropped connection').to.equal(1);
    expect(
      errors.events.map((e) => String(e.error)),
      'not a failure',
    ).to.deep.equal([]);
    expect(health.events).to.deep.equal([true]);
    silence.remove();
  });

  it('ES1 (issue 9): a list that gets no answer within the dead-watch margin is abandoned and retried (not left to listTimeoutMs)', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a'));
    cluster.server.faults.delayRequests({ verb: 'list', namespace: ns, delayMs: 10_000, count: 1 });
    const inf = testInformer(cluster, { namespaces: [ns], deadMarginMs: 1_000, listTimeoutMs: 20_000, watchList: false });
    const errors = record<InformerError>(cluster, inf.errors$);
    const startedAt = Date.now();
    inf.start();
    await inf.whenSynced({ failOnError: false, timeoutMs: 8_000 });
    expect(Date.now() - startedAt, 'well before the 10 s the first answer takes').to.be.below(6_000);
    expect(errors.events.map((e) => e.phase)[0]).to.equal('list');
    expect(String(errors.events[0]?.error)).to.match(/no answer within 1000 ms/);
    expect(classifyError(errors.events[0]?.error), 'logged as transient (warn)').to.equal('transient');
    expect(inf.store.get({ namespace: ns, name: 'a' })).to.not.equal(undefined);
  });

  it('ES1: a stalled watch that the server closes is resumed without losing what the stall held back', async () => {
    const ns = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns], timeoutSeconds: 1 });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status()[0]?.state === 'watching');
    const stall = cluster.server.faults.stallWatches({ resource: 'configmaps', namespace: ns });
    expect(stall.hits).to.equal(1);
    await cluster.configMaps.create(configMap(ns, 'held'));
    await seen.until((e) => e.length === 1, 4_000);
    expect(names(seen.events)).to.deep.equal(['added held']);
    stall.remove();
  });

  it('ES1: bookmarks advance the resourceVersion without events', async () => {
    const ns = await cluster.namespace();
    const other = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    const listed = Number(inf.status()[0]?.resourceVersion);
    const elsewhere = await cluster.configMaps.create(configMap(other, 'elsewhere'));
    const target = Number(elsewhere.metadata?.resourceVersion);
    expect(target).to.be.greaterThan(listed);
    await waitFor(
      () => Number(inf.status()[0]?.resourceVersion) >= target,
      3_000,
      () => JSON.stringify(inf.status()),
    );
    expect(seen.events).to.deep.equal([]);
  });

  it('ES1: stop() closes every watch on the server', async () => {
    const ns1 = await cluster.namespace();
    const ns2 = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns1, ns2] });
    const before = cluster.server.stats().watches;
    inf.start();
    await inf.whenSynced();
    await waitFor(() => inf.status().every((s) => s.state === 'watching'));
    await waitFor(() => cluster.server.stats().watches === before + 2);
    inf.stop();
    await waitFor(() => cluster.server.stats().watches === before);
    expect(() => inf.start()).to.throw(/stopped/);
  });

  it('ES2: synced$ turns true after the first list; whenSynced rejects on a startup failure or a timeout', async () => {
    const ns = await cluster.namespace();
    const inf = testInformer(cluster, { namespaces: [ns] });
    const synced = record<boolean>(cluster, inf.synced$);
    expect(inf.hasSynced()).to.equal(false);
    inf.start();
    await inf.whenSynced();
    expect(synced.events).to.deep.equal([false, true]);

    const failing = await cluster.namespace();
    cluster.server.faults.failRequests({ verb: 'list', resource: 'configmaps', namespace: failing, status: 403 });
    const broken = testInformer(cluster, { namespaces: [failing], watchList: false });
    broken.start();
    let error: Error | undefined;
    await broken.whenSynced().catch((e: Error) => (error = e));
    expect(error?.message).to.match(/informer configmaps in namespace .* failed before its cache synced: .*403/);
    let timedOut: Error | undefined;
    await broken.whenSynced({ failOnError: false, timeoutMs: 100 }).catch((e: Error) => (timedOut = e));
    expect(timedOut?.message).to.match(/did not sync within 100 ms/);
    expect(broken.isHealthy()).to.equal(false);
  });

  it('ES6: namespaces change at run time: removed ones are emitted as deleted, added ones listed as added', async () => {
    const ns1 = await cluster.namespace();
    const ns2 = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns1, 'one'));
    await cluster.configMaps.create(configMap(ns2, 'two'));
    const inf = testInformer(cluster, { namespaces: [ns1] });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    expect(names(seen.events)).to.deep.equal(['added one']);

    inf.setNamespaces([ns2]);
    expect(names(seen.events)).to.deep.equal(['added one', 'deleted one']);
    expect(inf.hasSynced()).to.equal(false);
    await inf.whenSynced();
    expect(names(seen.events)).to.deep.equal(['added one', 'deleted one', 'added two']);
    expect(inf.namespaces).to.deep.equal([ns2]);
    expect(inf.status().map((s) => s.namespace)).to.deep.equal([ns2]);

    await cluster.configMaps.create(configMap(ns1, 'ignored'));
    await cluster.configMaps.create(configMap(ns2, 'seen'));
    await seen.until((e) => e.length === 4);
    expect(names(seen.events).slice(3)).to.deep.equal(['added seen']);

    inf.setNamespaces('all');
    await inf.whenSynced();
    const mine = (e: { object: KubernetesObject }) => [ns1, ns2].includes(e.object.metadata?.namespace ?? '');
    await seen.until((e) => e.filter(mine).length === 6);
    expect(names(seen.events.filter(mine)).slice(4).sort()).to.deep.equal(['added ignored', 'added one']);
    expect(() => inf.setNamespaces([])).to.throw(/namespaces must be 'all' or a non-empty list/);
  });

  it('ES7: a bounded store evicts, emits deletes for evicted objects, and reads evicted ones through the API', async () => {
    const ns = await cluster.namespace();
    for (const name of ['a', 'b', 'c']) await cluster.configMaps.create(configMap(ns, name, { name }));
    const inf = testInformer(cluster, { namespaces: [ns], bounded: { maxEntries: 2 } });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    expect(inf.store.size).to.equal(3);
    expect(inf.store.get({ namespace: ns, name: 'a' }), 'evicted').to.equal(undefined);
    expect(inf.store.has({ namespace: ns, name: 'a' })).to.equal(true);
    const fetched = await inf.store.fetch({ namespace: ns, name: 'a' });
    expect((fetched as { data?: Record<string, string> }).data).to.deep.equal({ name: 'a' });
    expect(inf.store.get({ namespace: ns, name: 'a' }), 'cached again after the read').to.not.equal(undefined);

    // 'b' is now the least recently used and evicted; its delete is still emitted.
    await cluster.configMaps.delete({ namespace: ns, name: 'b' });
    await seen.until((e) => e.some((x) => x.type === 'deleted'));
    expect(inf.store.has({ namespace: ns, name: 'b' })).to.equal(false);
  });

  it('ES8: label selectors: an object that stops matching is deleted from the cache, one that starts matching is added', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'web', {}, { labels: { app: 'web' } }));
    await cluster.configMaps.create(configMap(ns, 'db', {}, { labels: { app: 'db' } }));
    const inf = testInformer(cluster, { namespaces: [ns], labelSelector: { app: 'web' } });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    expect(names(seen.events)).to.deep.equal(['added web']);
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'web' }, { metadata: { labels: { app: 'other' } } });
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'db' }, { metadata: { labels: { app: 'web' } } });
    await seen.until((e) => e.length === 3);
    expect(names(seen.events)).to.deep.equal(['added web', 'deleted web', 'added db']);
    expect(inf.store.list().map((o) => o.metadata?.name)).to.deep.equal(['db']);
  });

  it('ES8: field selectors restrict list and watch', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'wanted'));
    await cluster.configMaps.create(configMap(ns, 'unwanted'));
    const inf = testInformer(cluster, { namespaces: [ns], fieldSelector: { 'metadata.name': 'wanted' } });
    const seen = record(cluster, inf.events$);
    inf.start();
    await inf.whenSynced();
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'unwanted' }, { data: { v: '1' } });
    await cluster.configMaps.mergePatch({ namespace: ns, name: 'wanted' }, { data: { v: '1' } });
    await seen.until((e) => e.length === 2);
    expect(names(seen.events)).to.deep.equal(['added wanted', 'modified wanted']);
  });

  it('cacheAndEvents$ gives a late subscriber the cache as adds, then live changes', async () => {
    const ns = await cluster.namespace();
    await cluster.configMaps.create(configMap(ns, 'a'));
    const inf = testInformer(cluster, { namespaces: [ns] });
    inf.start();
    await inf.whenSynced();
    const late = record(cluster, inf.cacheAndEvents$);
    expect(names(late.events)).to.deep.equal(['added a']);
    await cluster.configMaps.create(configMap(ns, 'b'));
    await late.until((e) => e.length === 2);
    expect(names(late.events)).to.deep.equal(['added a', 'added b']);
  });

  it('rejects bad options with the option named', () => {
    expect(() => testInformer(cluster, { timeoutSeconds: 0 })).to.throw(/timeoutSeconds must be a positive number/);
    expect(() => testInformer(cluster, { namespaces: ['Not_Valid'] })).to.throw(/'Not_Valid' is not a valid namespace name/);
    expect(() =>
      testInformer(cluster, {
        resource: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
        namespaces: ['x'],
      }),
    ).to.throw(/Namespace is cluster-scoped; namespaces must be 'all'/);
    expect(() => testInformer(cluster, { kubeConfig: undefined })).to.throw(/pass kubeConfig/);
  });
});
