import { expect } from 'chai';
import { raw, startWithClients, type Clients } from './helpers.js';

// The Accept headers client-go's metadata client sends (k8s.io/client-go/metadata): LIST asks for a
// PartialObjectMetadataList, GET and WATCH for PartialObjectMetadata; protobuf first, JSON after.
const LIST_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const OBJECT_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const CMS = '/api/v1/namespaces/default/configmaps';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

interface Line {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
    data?: unknown;
    spec?: unknown;
  };
}

const lines = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);

describe("apiserver: metadata-only reads (PartialObjectMetadata), as client-go's metadata informer asks", () => {
  let c: Clients;
  before(async () => {
    c = await startWithClients({ bookmarkIntervalMs: 50 });
    await c.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    for (const name of ['a', 'b', 'c']) {
      await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name, labels: { app: 'x' }, annotations: { note: name } }, data: { big: 'x'.repeat(1000) } },
      });
    }
    // The CRD's REST paths are served once it is Established.
    for (let i = 0; i < 100; i++) {
      const r = await raw(
        c.server,
        'POST',
        WIDGETS,
        JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', labels: { app: 'x' } }, spec: { size: 3 } }),
      );
      if (r.status === 201) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  after(() => c.server.close());

  it('lists built-ins as a PartialObjectMetadataList: each item its metadata, the list its resourceVersion and continue token', async () => {
    const r = await raw(c.server, 'GET', `${CMS}?limit=2`, undefined, { accept: LIST_ACCEPT });
    expect(r.status).to.equal(200);
    const list = r.json as { kind: string; apiVersion: string; metadata: Record<string, unknown>; items: Line['object'][] };
    expect(list.kind).to.equal('PartialObjectMetadataList');
    expect(list.apiVersion).to.equal('meta.k8s.io/v1');
    expect(list.metadata.resourceVersion).to.be.a('string');
    expect(list.metadata.continue).to.be.a('string');
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(['a', 'b']);
    for (const item of list.items) {
      expect(item).to.have.all.keys('kind', 'apiVersion', 'metadata');
      expect(item).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(item.metadata?.annotations).to.have.property('note');
    }
    const rest = await raw(c.server, 'GET', `${CMS}?limit=2&continue=${encodeURIComponent(String(list.metadata.continue))}`, undefined, {
      accept: LIST_ACCEPT,
    });
    expect((rest.json as { items: Line['object'][] }).items.map((i) => i.metadata?.name)).to.deep.equal(['c']);
  });

  it('lists and reads custom resources as metadata too', async () => {
    const list = (await raw(c.server, 'GET', WIDGETS, undefined, { accept: LIST_ACCEPT })).json as {
      kind: string;
      items: Line['object'][];
    };
    expect(list.kind).to.equal('PartialObjectMetadataList');
    expect(list.items).to.have.length(1);
    expect(list.items[0]).to.not.have.property('spec');
    const one = await raw(c.server, 'GET', `${WIDGETS}/w1`, undefined, { accept: OBJECT_ACCEPT });
    expect(one.json).to.deep.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect((one.json as Line['object']).metadata?.name).to.equal('w1');
  });

  it("reads one object as PartialObjectMetadata; a shape that does not fit the request is 406 with apimachinery's message", async () => {
    const one = await raw(c.server, 'GET', `${CMS}/a`, undefined, { accept: OBJECT_ACCEPT });
    expect(one.status).to.equal(200);
    expect(one.json).to.have.all.keys('kind', 'apiVersion', 'metadata');
    const listShapeForObject = await raw(c.server, 'GET', `${CMS}/a`, undefined, {
      accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    });
    expect(listShapeForObject.status).to.equal(406);
    expect(listShapeForObject.json).to.deep.include({ reason: 'NotAcceptable', code: 406 });
    expect((listShapeForObject.json as { message: string }).message).to.equal(
      'you requested PartialObjectMetadataList, but the requested object is not a list (*v1.ConfigMap)',
    );
    const objectShapeForList = await raw(c.server, 'GET', CMS, undefined, {
      accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    });
    expect(objectShapeForList.status).to.equal(406);
    expect((objectShapeForList.json as { message: string }).message).to.equal(
      'you requested PartialObjectMetadata, but the requested object is a list (*v1.ConfigMapList)',
    );
    const unknownShape = await raw(c.server, 'GET', CMS, undefined, { accept: 'application/json;as=Frobnicated;g=meta.k8s.io;v=v1' });
    expect(unknownShape.status).to.equal(406);
  });

  it('honours v1beta1 when asked, as older clients ask', async () => {
    const r = await raw(c.server, 'GET', CMS, undefined, {
      accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1',
    });
    const list = r.json as { apiVersion: string; items: Line['object'][] };
    expect(list.apiVersion).to.equal('meta.k8s.io/v1beta1');
    expect(list.items[0]?.apiVersion).to.equal('meta.k8s.io/v1beta1');
  });

  it('streams a watch-list of metadata: initial events, then the bookmark with k8s.io/initial-events-end, all as PartialObjectMetadata', async () => {
    const query = 'watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1';
    const r = await raw(c.server, 'GET', `${CMS}?${query}`, undefined, { accept: OBJECT_ACCEPT });
    expect(r.status).to.equal(200);
    const events = lines(r.text);
    const added = events.filter((e) => e.type === 'ADDED');
    expect(added.map((e) => e.object.metadata?.name)).to.deep.equal(['a', 'b', 'c']);
    for (const e of events) {
      expect(e.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(e.object).to.not.have.property('data');
    }
    const end = events.find((e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true');
    expect(end, 'the initial-events-end bookmark').to.not.equal(undefined);
    expect(events.indexOf(end!)).to.equal(3);
  });

  it('watches changes of custom resources as metadata', async () => {
    const list = (await raw(c.server, 'GET', WIDGETS, undefined, { accept: LIST_ACCEPT })).json as {
      metadata: { resourceVersion: string };
    };
    const watching = raw(
      c.server,
      'GET',
      `${WIDGETS}?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`,
      undefined,
      { accept: OBJECT_ACCEPT },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await raw(
      c.server,
      'POST',
      WIDGETS,
      JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { size: 1 } }),
    );
    const events = lines((await watching).text);
    expect(events.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED PartialObjectMetadata w2']);
    expect(events[0]?.object).to.not.have.property('spec');
  });

  it('a watch asking for the list shape gets whole objects, as the real server falls back per event', async () => {
    const r = await raw(c.server, 'GET', `${CMS}?watch=true&timeoutSeconds=1`, undefined, {
      accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    });
    const events = lines(r.text);
    expect(events.length).to.equal(3);
    expect(events[0]?.object.kind).to.equal('ConfigMap');
    expect(events[0]?.object.data).to.not.equal(undefined);
  });

  it('kubectl get still prints its table, negotiated by the same rule', async () => {
    const r = await raw(c.server, 'GET', CMS, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
    });
    expect((r.json as { kind: string }).kind).to.equal('Table');
  });
});
