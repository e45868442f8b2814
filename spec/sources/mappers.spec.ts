import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { lastValueFrom, of, toArray } from 'rxjs';
import { InformerStore, type InformerEvent } from '../../lib/cache/index.js';
import { Mappers, primaryAnnotations, toPrimaryTriggers } from '../../lib/sources/index.js';
import { mapBoth, primaryToSecondaryIndexer } from '../../lib/sources/mappers.js';

const owner = (kind: string, name: string, apiVersion = 'sample.rxkube.dev/v1', controller?: boolean) => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  ...(controller === undefined ? {} : { controller }),
});

function secondary(meta: NonNullable<KubernetesObject['metadata']>): KubernetesObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'cm', ...meta } };
}

describe('sources/Mappers', () => {
  it('ES3: fromOwnerReferences maps every owner of the primary kind (any version of its group) to its namespace', () => {
    const mapper = Mappers.fromOwnerReferences({ apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage' });
    const s = secondary({
      ownerReferences: [
        owner('WebPage', 'a'),
        owner('WebPage', 'b', 'sample.rxkube.dev/v2'),
        owner('WebPage', 'c', 'other.example.com/v1'),
        owner('Deployment', 'd', 'apps/v1'),
      ],
    });
    expect([...mapper(s)]).to.deep.equal([
      { name: 'a', namespace: 'ns' },
      { name: 'b', namespace: 'ns' },
    ]);
    expect([...mapper(secondary({}))]).to.deep.equal([]);
  });

  it('ES3: fromOwnerReferences with controllerOnly maps only the controller owner; a cluster-scoped primary has no namespace', () => {
    const s = secondary({ ownerReferences: [owner('WebPage', 'a', undefined, false), owner('WebPage', 'b', undefined, true)] });
    const controllerOnly = Mappers.fromOwnerReferences({ apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage' }, { controllerOnly: true });
    expect([...controllerOnly(s)]).to.deep.equal([{ name: 'b', namespace: 'ns' }]);
    const clusterScoped = Mappers.fromOwnerReferences({ apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', namespaced: false });
    expect([...clusterScoped(s)]).to.deep.equal([{ name: 'a' }, { name: 'b' }]);
  });

  it('ES3: fromAnnotation reads name and namespace, falling back to the secondary namespace; no name: no primary', () => {
    const mapper = Mappers.fromAnnotation('x/name', 'x/namespace');
    expect([...mapper(secondary({ annotations: { 'x/name': 'p', 'x/namespace': 'other' } }))]).to.deep.equal([
      { name: 'p', namespace: 'other' },
    ]);
    expect([...mapper(secondary({ annotations: { 'x/name': 'p' } }))]).to.deep.equal([{ name: 'p', namespace: 'ns' }]);
    expect([...mapper(secondary({ annotations: { unrelated: 'p' } }))]).to.deep.equal([]);
    const defaults = Mappers.fromDefaultAnnotations();
    expect([...defaults(secondary({ annotations: primaryAnnotations({ name: 'q', namespace: 'z' }) }))]).to.deep.equal([
      { name: 'q', namespace: 'z' },
    ]);
    expect(() => Mappers.fromAnnotation('')).to.throw(/nameKey/);
  });

  it('ES3: mapBoth maps the old and the new object of a modify, without duplicates', () => {
    const mapper = Mappers.fromOwnerReferences({ apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage' });
    const before = secondary({ ownerReferences: [owner('WebPage', 'a')] });
    const after = secondary({ ownerReferences: [owner('WebPage', 'b'), owner('WebPage', 'a')] });
    expect(mapBoth(mapper, after, before)).to.deep.equal([
      { name: 'b', namespace: 'ns' },
      { name: 'a', namespace: 'ns' },
    ]);
  });

  it('ES3: a custom mapper may return several primaries or none; an id without a name is an error', async () => {
    const custom = (s: KubernetesObject) =>
      s.metadata?.labels?.['fanout'] === 'yes' ? [{ name: 'p1', namespace: 'ns' }, { name: 'p2' }] : [];
    const events: InformerEvent<KubernetesObject>[] = [
      { type: 'added', object: secondary({ labels: { fanout: 'yes' } }) },
      { type: 'added', object: secondary({ name: 'ignored' }) },
      { type: 'deleted', object: secondary({ labels: { fanout: 'yes' } }) },
    ];
    const out = await lastValueFrom(of(...events).pipe(toPrimaryTriggers('cms', custom), toArray()));
    expect(out.map((e) => [e.id.name, e.action, e.primary, e.source])).to.deep.equal([
      ['p1', 'trigger', false, 'cms'],
      ['p2', 'trigger', false, 'cms'],
      ['p1', 'trigger', false, 'cms'],
      ['p2', 'trigger', false, 'cms'],
    ]);
    expect(() => mapBoth(() => [{ name: '' }], secondary({}))).to.throw(/invalid ResourceID/);
  });

  it('ES3: many-to-many through an index on the primary store (fromPrimaryIndex)', () => {
    type Primary = KubernetesObject & { spec: { configMaps: string[] } };
    const primaries = new InformerStore<Primary>();
    const toSecondaries = (p: Primary) => p.spec.configMaps.map((name) => ({ name, namespace: p.metadata?.namespace ?? '' }));
    primaries.addIndexer('refs', primaryToSecondaryIndexer(toSecondaries));
    const p = (name: string, configMaps: string[]): Primary => ({
      metadata: { name, namespace: 'ns', resourceVersion: '1' },
      spec: { configMaps },
    });
    primaries.upsert(p('p1', ['shared', 'only1']));
    primaries.upsert(p('p2', ['shared']));
    const mapper = Mappers.fromPrimaryIndex(primaries, 'refs');
    const names = (cm: string) => [...mapper(secondary({ name: cm }))].map((id) => id.name).sort();
    expect(names('shared')).to.deep.equal(['p1', 'p2']);
    expect(names('only1')).to.deep.equal(['p1']);
    expect(names('none')).to.deep.equal([]);
    primaries.upsert({ ...p('p2', []), metadata: { name: 'p2', namespace: 'ns', resourceVersion: '2' } });
    expect(names('shared'), 'follows primary changes').to.deep.equal(['p1']);
  });
});
