import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { createKubeClient } from '../../lib/kube/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import {
  compactManagedFields,
  InformerPool,
  type InformerEvent,
  type InformerLike,
  type SharedInformerOptions,
} from '../../lib/cache/index.js';
import { configMapAt, FakeListWatch, virtualClock, type VirtualClock } from './fake-list-watch.js';

const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;
const SECRETS = { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' } as const;

function unusedClient() {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return createKubeClient(kc);
}

describe('cache/InformerPool: one informer per key, shared and reference-counted (virtual time)', () => {
  let clock: VirtualClock;
  let fake: FakeListWatch;
  let pool: InformerPool;
  const subscriptions: Subscription[] = [];

  beforeEach(() => {
    clock = virtualClock();
    fake = new FakeListWatch(clock);
    fake.objects = [configMapAt('a', 'one', '1'), configMapAt('b', 'two', '1')];
    pool = new InformerPool({ client: unusedClient(), listWatch: () => fake, scheduler: clock.scheduler, random: () => 0 });
  });
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
    pool.dispose();
  });

  function share(options: Partial<SharedInformerOptions<KubernetesObject>> = {}): InformerLike<KubernetesObject> {
    return pool.acquire({ resource: CONFIGMAPS, ...options });
  }

  function record(inf: InformerLike<KubernetesObject>): string[] {
    const seen: string[] = [];
    subscriptions.push(
      inf.events$.subscribe((e: InformerEvent<KubernetesObject>) =>
        seen.push(`${e.type} ${e.object.metadata?.namespace}/${e.object.metadata?.name}`),
      ),
    );
    return seen;
  }

  it('ES1: two users asking alike share one informer: one list, one watch, one cache; each gets every event', async () => {
    const first = share({ name: 'first' });
    const second = share({ name: 'second' });
    const firstSeen = record(first);
    const secondSeen = record(second);
    first.start();
    second.start();
    await clock.advance(0);
    expect(pool.informers().map((p) => p.users)).to.deep.equal([['first', 'second']]);
    expect(fake.listCalls).to.have.length(1);
    expect(fake.watchCalls).to.have.length(1);
    expect(first.hasSynced() && second.hasSynced()).to.equal(true);
    fake.lastWatch.event('MODIFIED', configMapAt('a', 'one', '2'));
    expect(firstSeen).to.deep.equal(['added a/one', 'added b/two', 'modified a/one']);
    expect(secondSeen).to.deep.equal(firstSeen);
    expect(first.store.get({ name: 'one', namespace: 'a' })).to.equal(second.store.get({ name: 'one', namespace: 'a' }));
  });

  it('ES1: the informer runs until its last user stops (reference-counted); a user that stops gets no more events', async () => {
    const first = share({ name: 'first' });
    const second = share({ name: 'second' });
    const firstSeen = record(first);
    first.start();
    second.start();
    await clock.advance(0);
    first.stop();
    expect(fake.lastWatch.closed, 'still used by second').to.equal(false);
    expect(pool.informers().map((p) => p.users)).to.deep.equal([['second']]);
    fake.lastWatch.event('MODIFIED', configMapAt('a', 'one', '2'));
    expect(firstSeen).to.deep.equal(['added a/one', 'added b/two']);
    expect(() => first.start()).to.throw(/informer first was stopped/);
    second.stop();
    expect(fake.lastWatch.closed, 'the last user stopped').to.equal(true);
    expect(pool.informers()).to.deep.equal([]);
    const third = share({ name: 'third' }).start();
    await clock.advance(0);
    expect(fake.listCalls, 'a later ask starts a new informer').to.have.length(2);
    third.stop();
  });

  it('ES1: a user that starts after the informer synced gets the cache as adds first, as a fresh informer would', async () => {
    const first = share({ name: 'first' }).start();
    await clock.advance(0);
    const late = share({ name: 'late' });
    const lateSeen = record(late);
    expect(late.hasSynced(), 'not started yet').to.equal(false);
    late.start();
    expect(late.hasSynced()).to.equal(true);
    expect(lateSeen).to.deep.equal(['added a/one', 'added b/two']);
    await late.whenSynced();
    expect(fake.listCalls).to.have.length(1);
    first.stop();
  });

  it('ES6, ES8: the key: namespaces, selectors, transform and tuning make distinct informers; names and indexers do not', () => {
    const identity = (o: KubernetesObject) => o;
    share({ name: 'a' });
    share({ name: 'b', transform: compactManagedFields }); // the default, named
    share({ name: 'c', indexers: { byName: (o) => [o.metadata?.name ?? ''] } });
    share({ name: 'ns', namespaces: ['b', 'a'] });
    share({ name: 'ns-again', namespaces: ['a', 'b', 'a'] });
    share({ name: 'other-ns', namespaces: ['a'] });
    share({ name: 'labels', labelSelector: { app: 'x' } });
    share({ name: 'labels-as-string', labelSelector: 'app=x' });
    share({ name: 'fields', fieldSelector: { 'metadata.name': 'one' } });
    share({ name: 'identity', transform: identity });
    share({ name: 'identity-again', transform: identity });
    share({ name: 'other-transform', transform: (o) => o });
    share({ name: 'tuned', timeoutSeconds: 60 });
    share({ name: 'backoff', backoff: { initialMs: 10, maxMs: 100 } });
    share({ name: 'backoff-reordered', backoff: { maxMs: 100, initialMs: 10 } });
    share({ name: 'bounded', bounded: { maxEntries: 10 } });
    share({ name: 'secrets', resource: SECRETS });
    expect(pool.informers().map((p) => p.users)).to.deep.equal([
      ['a', 'b', 'c'],
      ['ns', 'ns-again'],
      ['other-ns'],
      ['labels', 'labels-as-string'],
      ['fields'],
      ['identity', 'identity-again'],
      ['other-transform'],
      ['tuned'],
      ['backoff', 'backoff-reordered'],
      ['bounded'],
      ['secrets'],
    ]);
  });

  it('each user keeps its own indexes under its own names, and takes them along when it stops', async () => {
    const first = share({ name: 'first', indexers: { key: (o) => [`first:${o.metadata?.name}`] } });
    const second = share({ name: 'second', indexers: { key: (o) => [`second:${o.metadata?.name}`] } });
    first.start();
    second.start();
    await clock.advance(0);
    expect(first.store.byIndex('key', 'first:one').map((o) => o.metadata?.name)).to.deep.equal(['one']);
    expect(second.store.byIndex('key', 'second:one').map((o) => o.metadata?.name)).to.deep.equal(['one']);
    expect(second.store.byIndex('key', 'first:one')).to.deep.equal([]);
    expect(first.store.hasIndexer('key') && first.store.hasIndexer('namespace')).to.equal(true);
    expect(() => first.store.byIndex('other', 'x')).to.throw(/no index named 'other'/);
    expect(() => first.store.addIndexer('namespace', () => [])).to.throw(/built in/);
    const shared = pool.informers()[0]!.informer.store;
    expect(shared.hasIndexer('key') && shared.hasIndexer('key#2')).to.equal(true);
    second.stop();
    expect(shared.hasIndexer('key#2'), "second's index left with it").to.equal(false);
    expect(first.store.byIndex('key', 'first:two').map((o) => o.metadata?.name)).to.deep.equal(['two']);
  });

  it('ES6: a user alone on its informer changes its namespaces in place (removed ones deleted at once, added ones listed)', async () => {
    const alone = share({ name: 'alone', namespaces: ['a'] });
    const seen = record(alone);
    alone.start();
    await clock.advance(0);
    alone.setNamespaces(['b']);
    await clock.advance(0);
    expect(seen).to.deep.equal(['added a/one', 'deleted a/one', 'added b/two']);
    expect(pool.informers().length).to.equal(1);
    expect(fake.listCalls.map((l) => l.scope.namespace)).to.deep.equal(['a', 'b']);
    // Its key moved with it: a new ask for ['b'] shares it, one for ['a'] does not.
    share({ name: 'b-too', namespaces: ['b'] });
    share({ name: 'a-again', namespaces: ['a'] });
    expect(pool.informers().map((p) => p.users)).to.deep.equal([['alone', 'b-too'], ['a-again']]);
  });

  it('ES6: a user of a shared informer moves to the informer of its new namespaces once that synced, and gets the difference; the other user sees nothing', async () => {
    fake.objects.push(configMapAt('c', 'three', '1'));
    const mover = share({ name: 'mover', namespaces: ['a', 'b'] });
    const stayer = share({ name: 'stayer', namespaces: ['a', 'b'] });
    const moverSeen = record(mover);
    const stayerSeen = record(stayer);
    mover.start();
    stayer.start();
    await clock.advance(0);
    moverSeen.length = 0;
    stayerSeen.length = 0;
    fake.lists.push('hang'); // the new informer's list of 'b' does not answer at first
    mover.setNamespaces(['b', 'c']);
    expect(mover.namespaces).to.deep.equal(['b', 'c']);
    expect(mover.hasSynced(), 'until the new informer synced').to.equal(false);
    await clock.advance(0);
    expect(moverSeen, 'nothing until it synced').to.deep.equal([]);
    await clock.advance(60_000 + 800); // the hung list is abandoned at listTimeoutMs and retried
    expect(mover.hasSynced()).to.equal(true);
    expect(moverSeen).to.deep.equal(['deleted a/one', 'added c/three']);
    expect(stayerSeen).to.deep.equal([]);
    expect(pool.informers().map((p) => p.users)).to.deep.equal([['stayer'], ['mover']]);
    expect(
      mover.store
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['three', 'two']);
    expect(
      stayer.store
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['one', 'two']);
  });

  it('ES6: namespaces are checked as an informer checks them, naming the user', () => {
    const inf = share({ name: 'mine' });
    expect(() => inf.setNamespaces(['Bad_Name'])).to.throw("informer mine: 'Bad_Name' is not a valid namespace name");
    expect(() =>
      share({
        name: 'cluster',
        resource: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
        namespaces: ['a'],
      }),
    ).to.throw('informer cluster: Namespace is cluster-scoped');
    expect(() => share({ name: 'tuning', timeoutSeconds: -1 })).to.throw('informer tuning: timeoutSeconds must be a positive number');
    expect(pool.informers().map((p) => p.users)).to.deep.equal([['mine']]);
  });

  it("dispose() stops every informer and completes every user's streams", async () => {
    const inf = share({ name: 'first' }).start();
    let completed = false;
    subscriptions.push(inf.events$.subscribe({ complete: () => (completed = true) }));
    await clock.advance(0);
    pool.dispose();
    expect(fake.lastWatch.closed).to.equal(true);
    expect(completed).to.equal(true);
    expect(() => share()).to.throw(/after dispose/);
  });
});
