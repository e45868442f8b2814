import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { InformerStore } from '../../lib/cache/index.js';
import { NAMESPACE_INDEX, OWNER_UID_INDEX } from '../../lib/cache/store.js';

function cm(namespace: string, name: string, rv: string, extra: Partial<NonNullable<KubernetesObject['metadata']>> = {}): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name, resourceVersion: rv, uid: `uid-${namespace}-${name}`, ...extra },
  };
}

const names = (objs: KubernetesObject[]): string[] => objs.map((o) => o.metadata?.name ?? '').sort();

describe('cache/InformerStore', () => {
  it('get, list by namespace, and the built-in namespace and owner-uid indexes', () => {
    const store = new InformerStore<KubernetesObject>();
    store.upsert(cm('a', 'one', '1', { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'p', uid: 'owner-1' }] }));
    store.upsert(cm('a', 'two', '2', { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'p', uid: 'owner-1' }] }));
    store.upsert(cm('b', 'one', '3'));
    expect(store.get({ namespace: 'a', name: 'one' })?.metadata?.resourceVersion).to.equal('1');
    expect(store.get({ namespace: 'c', name: 'one' })).to.equal(undefined);
    expect(names(store.list('a'))).to.deep.equal(['one', 'two']);
    expect(store.list()).to.have.length(3);
    expect(names(store.byIndex(NAMESPACE_INDEX, 'b'))).to.deep.equal(['one']);
    expect(names(store.byIndex(OWNER_UID_INDEX, 'owner-1'))).to.deep.equal(['one', 'two']);
    expect(store.size).to.equal(3);
  });

  it('reindexes on update and unindexes on remove', () => {
    const store = new InformerStore<KubernetesObject>({ indexers: { app: (o) => [o.metadata?.labels?.['app'] ?? ''] } });
    store.upsert(cm('a', 'one', '1', { labels: { app: 'web' } }));
    expect(names(store.byIndex('app', 'web'))).to.deep.equal(['one']);
    const previous = store.upsert(cm('a', 'one', '2', { labels: { app: 'db' } }));
    expect(previous?.metadata?.resourceVersion).to.equal('1');
    expect(store.byIndex('app', 'web')).to.deep.equal([]);
    expect(names(store.byIndex('app', 'db'))).to.deep.equal(['one']);
    expect(store.remove('a/one')?.metadata?.resourceVersion).to.equal('2');
    expect(store.byIndex('app', 'db')).to.deep.equal([]);
    expect(store.has({ namespace: 'a', name: 'one' })).to.equal(false);
  });

  it('an update indexes the new version alone: same values kept, duplicates once, values dropped when its indexer fails on it', () => {
    const errors: Error[] = [];
    const store = new InformerStore<KubernetesObject>({
      indexers: {
        tags: (o) => {
          const tags = o.metadata?.labels?.['tags'];
          if (tags === 'broken') throw new Error('cannot index');
          return tags ? tags.split(',') : [];
        },
      },
      onIndexerError: (e) => errors.push(e),
    });
    store.upsert(cm('a', 'one', '1', { labels: { tags: 'x,y' } }));
    store.upsert(cm('a', 'one', '2', { labels: { tags: 'x,y' } }));
    expect(store.byIndex('tags', 'x').map((o) => o.metadata?.resourceVersion)).to.deep.equal(['2']);
    store.upsert(cm('a', 'one', '3', { labels: { tags: 'y,z,z' } }));
    expect(store.byIndex('tags', 'x')).to.deep.equal([]);
    expect(store.byIndex('tags', 'z').map((o) => o.metadata?.resourceVersion)).to.deep.equal(['3']);
    store.upsert(cm('a', 'one', '4', { labels: { tags: 'broken' } }));
    expect(errors.map((e) => e.message)).to.deep.equal(["indexer 'tags' failed on ConfigMap a/one: cannot index"]);
    expect(store.byIndex('tags', 'y')).to.deep.equal([]);
    expect(store.byIndex('tags', 'z')).to.deep.equal([]);
    expect(store.get({ namespace: 'a', name: 'one' })?.metadata?.resourceVersion).to.equal('4');
    store.upsert(cm('a', 'one', '5'));
    expect(store.byIndex(NAMESPACE_INDEX, 'a').map((o) => o.metadata?.resourceVersion)).to.deep.equal(['5']);
  });

  it("the namespace index, versionsIn and keysWhere read the namespace off the key: cluster-scoped objects sit under ''", () => {
    const node = (name: string, rv: string): KubernetesObject => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, resourceVersion: rv },
    });
    for (const bounded of [undefined, { maxEntries: 10 }]) {
      const store = new InformerStore<KubernetesObject>({ bounded });
      store.upsert(node('n1', '1'));
      store.upsert(cm('a', 'one', '2', { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'p', uid: 'owner-1' }] }));
      store.upsert(cm('a-b', 'one', '3'));
      store.upsert(cm('a', 'one', '4', { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'p', uid: 'owner-2' }] }));
      expect(names(store.byIndex(NAMESPACE_INDEX, '')), JSON.stringify(bounded)).to.deep.equal(['n1']);
      expect(names(store.list('a'))).to.deep.equal(['one']);
      expect([...store.versionsIn('a')]).to.deep.equal([['a/one', '4']]);
      expect([...store.versionsIn('')]).to.deep.equal([['n1', '1']]);
      expect(new Map(store.versionsIn(undefined))).to.deep.equal(
        new Map([
          ['n1', '1'],
          ['a/one', '4'],
          ['a-b/one', '3'],
        ]),
      );
      expect(store.keysWhere((id) => id.namespace === undefined)).to.deep.equal(['n1']);
      expect(store.keysWhere((id) => id.namespace === 'a-b' && id.name === 'one')).to.deep.equal(['a-b/one']);
      expect(store.byIndex(OWNER_UID_INDEX, 'owner-1')).to.deep.equal([]);
      expect(names(store.byIndex(OWNER_UID_INDEX, 'owner-2'))).to.deep.equal(['one']);
      expect(store.resourceVersionOf({ namespace: 'a', name: 'one' })).to.equal('4');
      expect(store.resourceVersionOf({ namespace: 'a', name: 'two' })).to.equal(undefined);
      store.remove('n1');
      store.remove('a/one');
      expect(store.byIndex(NAMESPACE_INDEX, '')).to.deep.equal([]);
      expect(store.byIndex(OWNER_UID_INDEX, 'owner-2')).to.deep.equal([]);
      expect(store.keys()).to.deep.equal(['a-b/one']);
      expect([store.size, store.held]).to.deep.equal([1, 1]);
    }
  });

  it('a user indexer added later indexes what is already cached; unknown index names are named in the error', () => {
    const store = new InformerStore<KubernetesObject>();
    store.upsert(cm('a', 'one', '1', { labels: { tier: 'x' } }));
    store.addIndexer('tier', (o) => (o.metadata?.labels?.['tier'] ? [o.metadata.labels['tier']] : []));
    expect(names(store.byIndex('tier', 'x'))).to.deep.equal(['one']);
    expect(() => store.byIndex('nope', 'x')).to.throw(/no index named 'nope'/);
    expect(() => store.addIndexer(NAMESPACE_INDEX, () => [])).to.throw(/built in/);
  });

  it('an indexer that throws or returns a non-array is reported with the index and object named', () => {
    const errors: Error[] = [];
    const store = new InformerStore<KubernetesObject>({
      indexers: { bad: () => 'x' as unknown as string[] },
      onIndexerError: (e) => errors.push(e),
    });
    store.upsert(cm('a', 'one', '1'));
    expect(errors[0]?.message).to.match(/indexer 'bad' failed on ConfigMap a\/one: must return an array of strings/);
    expect(store.get({ namespace: 'a', name: 'one' })).to.not.equal(undefined);
  });

  it('an indexer that throws leaves that object out of the index, reported once per object version', () => {
    const errors: Error[] = [];
    const store = new InformerStore<KubernetesObject>({
      indexers: {
        byName: (o) => {
          if (o.metadata?.name === 'bad') throw new Error('cannot index');
          return [o.metadata?.name ?? ''];
        },
      },
      onIndexerError: (e) => errors.push(e),
    });
    store.upsert(cm('a', 'bad', '1'));
    store.upsert(cm('a', 'good', '1'));
    store.upsert(cm('a', 'bad', '1')); // the same version again (a relist): not reported again
    store.upsert(cm('a', 'bad', '2'));
    expect(errors.map((e) => e.message)).to.deep.equal([
      "indexer 'byName' failed on ConfigMap a/bad: cannot index",
      "indexer 'byName' failed on ConfigMap a/bad: cannot index",
    ]);
    expect(store.byIndex('byName', 'good').map((o) => o.metadata?.name)).to.deep.equal(['good']);
    expect(store.byIndex('byName', 'bad')).to.deep.equal([]);
    expect(store.get({ namespace: 'a', name: 'bad' }), 'the object is still cached').to.not.equal(undefined);
  });

  it('ES7: a bounded store evicts the least recently used object but keeps it known; fetch reads it back', async () => {
    const reads: string[] = [];
    const store = new InformerStore<KubernetesObject>({
      bounded: { maxEntries: 2 },
      find: async (id) => {
        reads.push(id.name);
        return cm(id.namespace ?? '', id.name, '1');
      },
    });
    store.upsert(cm('a', 'one', '1'));
    store.upsert(cm('a', 'two', '1'));
    store.get({ namespace: 'a', name: 'one' }); // 'two' is now the least recently used
    store.upsert(cm('a', 'three', '1'));
    expect(store.get({ namespace: 'a', name: 'two' })).to.equal(undefined);
    expect(store.has({ namespace: 'a', name: 'two' })).to.equal(true);
    expect(store.resourceVersionOf({ namespace: 'a', name: 'two' })).to.equal('1');
    expect(names(store.list('a'))).to.deep.equal(['one', 'three']);
    const fetched = await store.fetch({ namespace: 'a', name: 'two' });
    expect(fetched?.metadata?.name).to.equal('two');
    expect(reads).to.deep.equal(['two']);
    expect(store.get({ namespace: 'a', name: 'two' })?.metadata?.name).to.equal('two');
    expect(await store.fetch({ namespace: 'a', name: 'unknown' })).to.equal(undefined);
    expect(reads, 'an unknown object is not read from the API').to.deep.equal(['two']);
    const stub = store.remove('a/one') ?? store.remove('a/three');
    expect(stub?.metadata?.name).to.be.a('string');
  });

  it('ES7: time-to-idle drops objects not read for the configured time (scheduler clock)', () => {
    const scheduler = new TestScheduler(() => undefined);
    const store = new InformerStore<KubernetesObject>({ bounded: { maxEntries: 100, timeToIdleMs: 1000 }, scheduler });
    store.upsert(cm('a', 'hot', '1'));
    store.upsert(cm('a', 'cold', '1'));
    scheduler.frame = 600;
    expect(store.get({ namespace: 'a', name: 'hot' })).to.not.equal(undefined);
    scheduler.frame = 1200;
    expect(store.get({ namespace: 'a', name: 'hot' }), 'read at 600: idle only 600 ms').to.not.equal(undefined);
    expect(store.get({ namespace: 'a', name: 'cold' }), 'never read: idle 1200 ms').to.equal(undefined);
    expect(store.has({ namespace: 'a', name: 'cold' })).to.equal(true);
    expect(names(store.byIndex(NAMESPACE_INDEX, 'a'))).to.deep.equal(['hot']);
  });

  it('a remove of an evicted object returns a stub with its identity', () => {
    const store = new InformerStore<KubernetesObject>({ bounded: { maxEntries: 1 } });
    store.upsert(cm('a', 'one', '5'));
    store.upsert(cm('a', 'two', '6'));
    const stub = store.remove('a/one');
    expect(stub).to.deep.include({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(stub?.metadata).to.deep.include({ name: 'one', namespace: 'a', resourceVersion: '5', uid: 'uid-a-one' });
  });

  it('rejects bad bounds with the option named', () => {
    expect(() => new InformerStore({ bounded: { maxEntries: 0 } })).to.throw(/maxEntries/);
    expect(() => new InformerStore({ bounded: { maxEntries: 3, timeToIdleMs: -5 } })).to.throw(/timeToIdleMs/);
  });
});
