import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { eventually, raw, RecordingWatch, startWithClients, type Clients } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('apiserver: watch', () => {
  let c: Clients;
  beforeEach(async () => {
    c = await startWithClients({ bookmarkIntervalMs: 50 });
  });
  afterEach(async () => {
    await c.server.close();
  });

  const createCm = (name: string, labels?: Record<string, string>, data?: Record<string, string>) =>
    c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels }, data } });

  it('sends the current state as ADDED, then ADDED/MODIFIED/DELETED changes in resourceVersion order', async () => {
    await createCm('before');
    const w = await RecordingWatch.start(c.kc, CMS);
    await w.waitFor((e) => e.length === 1, 'the initial ADDED');
    const created = await createCm('during', undefined, { v: '1' });
    await c.core.replaceNamespacedConfigMap({ name: 'during', namespace: 'default', body: { ...created, data: { v: '2' } } });
    await c.core.deleteNamespacedConfigMap({ name: 'during', namespace: 'default' });
    const events = await w.waitFor((e) => e.length === 4, 'four events');
    expect(w.summary()).to.deep.equal(['ADDED before', 'ADDED during', 'MODIFIED during', 'DELETED during']);
    const rvs = events.slice(1).map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs).to.deep.equal([...rvs].sort((a, b) => a - b));
    // DELETED carries the last state, at the deletion's resourceVersion.
    const deleted = events[3]?.object as { data?: Record<string, string>; metadata?: { resourceVersion?: string } };
    expect(deleted.data).to.deep.equal({ v: '2' });
    expect(Number(deleted.metadata?.resourceVersion)).to.be.greaterThan(rvs[1]);
    w.stop();
  });

  it('from a given resourceVersion sends only the changes after it', async () => {
    const first = await createCm('one');
    await createCm('two');
    await c.core.deleteNamespacedConfigMap({ name: 'one', namespace: 'default' });
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: first.metadata?.resourceVersion });
    await w.waitFor((e) => e.length === 2, 'the replayed history');
    expect(w.summary()).to.deep.equal(['ADDED two', 'DELETED one']);
    w.stop();
  });

  it('answers 410 Expired as an ERROR event when the history was compacted', async () => {
    const first = await createCm('old');
    await createCm('newer');
    c.server.faults.compact();
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: first.metadata?.resourceVersion });
    await w.waitFor((e) => e.length === 1, 'the ERROR event');
    const err = w.events[0];
    expect(err?.type).to.equal('ERROR');
    expect(err?.object).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(String(err?.object.message)).to.match(/too old resource version/);
    expect(await w.ended()).to.equal(null);
  });

  it('sends BOOKMARK events with the current resourceVersion when allowed', async () => {
    const cm = await createCm('bm');
    const w = await RecordingWatch.start(c.kc, CMS, { allowWatchBookmarks: true, resourceVersion: cm.metadata?.resourceVersion });
    const events = await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'), 'a bookmark');
    const bm = events.find((x) => x.type === 'BOOKMARK');
    expect(bm?.object).to.deep.include({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(bm?.object.metadata?.resourceVersion).to.equal(String(c.server.stats().resourceVersion));
    w.stop();
  });

  it('sends no BOOKMARK events unless asked', async () => {
    const cm = await createCm('nobm');
    const plain = await RecordingWatch.start(c.kc, CMS, { resourceVersion: cm.metadata?.resourceVersion });
    const withBookmarks = await RecordingWatch.start(c.kc, CMS, {
      resourceVersion: cm.metadata?.resourceVersion,
      allowWatchBookmarks: true,
    });
    await withBookmarks.waitFor((e) => e.filter((x) => x.type === 'BOOKMARK').length >= 2, 'two bookmarks on the other watch');
    await createCm('marker');
    await plain.waitFor((e) => e.length === 1, 'the marker');
    expect(plain.summary()).to.deep.equal(['ADDED marker']);
    plain.stop();
    withBookmarks.stop();
  });

  it('ends the stream after timeoutSeconds', async () => {
    const started = Date.now();
    const w = await RecordingWatch.start(c.kc, CMS, { timeoutSeconds: 1 });
    expect(await w.ended(4000)).to.equal(null);
    expect(Date.now() - started).to.be.within(900, 3000);
  });

  it('turns selector transitions into ADDED and DELETED for a label-selected watch', async () => {
    const cm = await createCm('sel', { tier: 'front' });
    const w = await RecordingWatch.start(c.kc, CMS, { labelSelector: 'tier=back', resourceVersion: cm.metadata?.resourceVersion });
    const moved = await c.core.replaceNamespacedConfigMap({
      name: 'sel',
      namespace: 'default',
      body: { ...cm, metadata: { ...cm.metadata, labels: { tier: 'back' } } },
    });
    const left = await c.core.replaceNamespacedConfigMap({
      name: 'sel',
      namespace: 'default',
      body: { ...moved, metadata: { ...moved.metadata, labels: { tier: 'front' } } },
    });
    const events = await w.waitFor((e) => e.length === 2, 'enter and leave');
    expect(w.summary()).to.deep.equal(['ADDED sel', 'DELETED sel']);
    // The DELETED shows the last state that matched, at the resourceVersion of the change.
    expect((events[1]?.object.metadata as { labels?: Record<string, string> }).labels).to.deep.equal({ tier: 'back' });
    expect(events[1]?.object.metadata?.resourceVersion).to.equal(left.metadata?.resourceVersion);
    w.stop();
  });

  it('sends no event and keeps the resourceVersion for a no-op write', async () => {
    const cm = await createCm('noop', undefined, { a: '1' });
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: cm.metadata?.resourceVersion });
    const same = await c.core.replaceNamespacedConfigMap({ name: 'noop', namespace: 'default', body: cm });
    expect(same.metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
    await createCm('after-noop');
    await w.waitFor((e) => e.length >= 1, 'the marker');
    expect(w.summary()).to.deep.equal(['ADDED after-noop']);
    w.stop();
  });

  it('serves the legacy /watch/ paths, for a collection and for one name', async () => {
    await createCm('legacy-a');
    await createCm('legacy-b');
    const all = await RecordingWatch.start(c.kc, '/api/v1/watch/namespaces/default/configmaps');
    const one = await RecordingWatch.start(c.kc, '/api/v1/watch/namespaces/default/configmaps/legacy-b');
    await all.waitFor((e) => e.length === 2, 'two ADDED');
    await one.waitFor((e) => e.length === 1, 'one ADDED');
    expect(one.summary()).to.deep.equal(['ADDED legacy-b']);
    all.stop();
    one.stop();
  });

  it('watches all namespaces at /api/v1/configmaps', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'w2' } } });
    const w = await RecordingWatch.start(c.kc, '/api/v1/configmaps', { resourceVersion: String(c.server.stats().resourceVersion) });
    await c.core.createNamespacedConfigMap({ namespace: 'w2', body: { metadata: { name: 'x' } } });
    await createCm('y');
    await w.waitFor((e) => e.length === 2, 'events from two namespaces');
    expect(w.events.map((e) => e.object.metadata?.namespace)).to.deep.equal(['w2', 'default']);
    w.stop();
  });

  it('sends initial events then a bookmark marking their end (sendInitialEvents)', async () => {
    await createCm('init');
    const w = await RecordingWatch.start(c.kc, CMS, {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
    });
    const events = await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'), 'the end bookmark');
    expect(events[0]?.type).to.equal('ADDED');
    const bm = events.find((x) => x.type === 'BOOKMARK');
    expect((bm?.object.metadata as { annotations?: Record<string, string> }).annotations).to.deep.equal({
      'k8s.io/initial-events-end': 'true',
    });
    w.stop();
  });

  it('waits, for a streaming list at a resourceVersion not reached yet, until it is reached: the write that reached it is in the initial events and the closing bookmark is not older (NotOlderThan; was: the bookmark at once, older than asked)', async () => {
    await createCm('early');
    const asked = c.server.stats().resourceVersion + 1;
    const pending = RecordingWatch.start(c.kc, CMS, {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: String(asked),
    });
    await eventually(() => (c.server.requests.count({ verb: 'watch' }) === 1 ? true : undefined), 'the watch request to arrive');
    const late = await createCm('late');
    const w = await pending;
    const events = await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'), 'the end bookmark');
    const end = events.findIndex((x) => x.type === 'BOOKMARK');
    expect(w.summary().slice(0, end)).to.deep.equal(['ADDED early', 'ADDED late']);
    const bookmark = events[end]?.object.metadata as { resourceVersion?: string; annotations?: Record<string, string> };
    expect(bookmark.annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    expect(Number(bookmark.resourceVersion)).to.be.at.least(asked).and.to.equal(Number(late.metadata?.resourceVersion));
    w.stop();
  });

  it('sends no initial state for sendInitialEvents=false without a resourceVersion: only what changes from now (was: every object as ADDED)', async () => {
    await createCm('before-false');
    const w = await RecordingWatch.start(c.kc, CMS, {
      sendInitialEvents: false,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
    });
    await createCm('after-false');
    await w.waitFor((e) => e.some((x) => x.type === 'ADDED'), 'the ADDED of the new object');
    expect(w.summary().filter((x) => !x.startsWith('BOOKMARK'))).to.deep.equal(['ADDED after-false']);
    w.stop();
  });

  it('refuses watch options the real server refuses, in one 422 on ListOptions naming each cause (resourceVersionMatch without sendInitialEvents, Exact, continue; sendInitialEvents without NotOlderThan or bookmarks)', async () => {
    const causesOf = async (query: string): Promise<{ status: number; causes: string[] }> => {
      const res = await raw(c.server, 'GET', `${CMS}?watch=true&${query}`);
      const body = res.json as { details?: { causes?: { field: string; message: string }[] } };
      return { status: res.status, causes: (body.details?.causes ?? []).map((x) => `${x.field}: ${x.message}`) };
    };
    expect(await causesOf('resourceVersion=1&resourceVersionMatch=NotOlderThan')).to.deep.equal({
      status: 422,
      causes: ['resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
    });
    const exact = await causesOf('sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&resourceVersion=1');
    expect(exact.status).to.equal(422);
    expect(exact.causes).to.have.length(2);
    expect(exact.causes[0]).to.equal(
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
    expect(exact.causes[1]).to.match(/^resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"/);
    expect(await causesOf('sendInitialEvents=true')).to.deep.equal({
      status: 422,
      causes: [
        'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        'allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
      ],
    });
    const withContinue = await causesOf('sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&continue=x');
    expect(withContinue.causes).to.deep.equal([
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    ]);
  });

  it('writes one JSON event per line, flushed as it happens (chunked)', async () => {
    const res = await new Promise<{ headers: Record<string, unknown>; first: string }>((resolve, reject) => {
      const url = new URL(`${CMS}?watch=true`, c.server.url);
      import('node:http').then(({ get }) => {
        const req = get(url, (r) => {
          r.setEncoding('utf8');
          r.once('data', (chunk: string) => {
            resolve({ headers: r.headers, first: chunk });
            req.destroy();
          });
        });
        req.on('error', reject);
        setTimeout(() => void createCm('chunk'), 20);
      }, reject);
    });
    expect(res.headers['transfer-encoding']).to.equal('chunked');
    expect(res.first.endsWith('\n')).to.equal(true);
    expect(JSON.parse(res.first)).to.deep.include({ type: 'ADDED' });
  });

  describe('informer (client-node ListWatch)', () => {
    const noDelay = { delayFn: () => Promise.resolve() };

    it('recovers from a dropped watch: resumes from its resourceVersion and misses nothing', async () => {
      await createCm('inf-a');
      const informer = new k8s.ListWatch<k8s.V1ConfigMap>(
        CMS,
        new k8s.Watch(c.kc),
        () => c.core.listNamespacedConfigMap({ namespace: 'default' }),
        false,
        undefined,
        undefined,
        noDelay,
      );
      const seen: string[] = [];
      informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
      informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
      await informer.start();
      await eventually(() => informer.list().length === 1, 'the initial list');
      await eventually(() => c.server.stats().watches === 1, 'the watch to open');
      expect(c.server.faults.dropWatches({ resource: 'configmaps' })).to.equal(1);
      await createCm('inf-b');
      await c.core.deleteNamespacedConfigMap({ name: 'inf-a', namespace: 'default' });
      await eventually(
        () =>
          informer
            .list()
            .map((o) => o.metadata?.name)
            .join() === 'inf-b',
        'the informer to catch up',
      );
      expect(seen).to.deep.equal(['add inf-a', 'add inf-b', 'delete inf-a']);
      await informer.stop();
    });

    it('recovers from a 410: relists after the history it needs was compacted', async () => {
      await createCm('c410-a');
      const informer = new k8s.ListWatch<k8s.V1ConfigMap>(
        CMS,
        new k8s.Watch(c.kc),
        () => c.core.listNamespacedConfigMap({ namespace: 'default' }),
        false,
        undefined,
        undefined,
        noDelay,
      );
      let lists = 0;
      informer.on('connect', () => lists++);
      await informer.start();
      await eventually(() => c.server.stats().watches === 1, 'the watch to open');
      c.server.faults.stallWatches({ resource: 'configmaps' });
      await createCm('c410-b');
      c.server.faults.compact();
      c.server.faults.dropWatches({ resource: 'configmaps' });
      await eventually(
        () =>
          informer
            .list()
            .map((o) => o.metadata?.name)
            .sort()
            .join() === 'c410-a,c410-b',
        'the informer to relist',
      );
      expect(lists).to.be.at.least(3);
      await informer.stop();
    });
  });

  it('answers 400 for a non-numeric resourceVersion', async () => {
    const res = await raw(c.server, 'GET', `${CMS}?watch=true&resourceVersion=abc`);
    expect(res.status).to.equal(400);
  });
});
