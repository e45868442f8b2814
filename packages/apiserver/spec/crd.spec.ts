import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { eventually, failure, isGone, raw, RecordingWatch, startWithClients, webPageCrd, type Clients } from './helpers.js';

const as = (strategy: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', strategy);

interface WebPage {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string; generation?: number; labels?: Record<string, string>; uid?: string };
  spec?: { title?: string; html?: string };
  status?: { ready?: boolean };
}

describe('apiserver: CustomResourceDefinitions and custom resources', () => {
  let c: Clients;
  const g = { group: 'sample.rxkube.dev', version: 'v1', namespace: 'default', plural: 'webpages' };

  before(async () => {
    c = await startWithClients();
    await c.ext.createCustomResourceDefinition({ body: webPageCrd() });
  });
  after(async () => {
    await c.server.close();
  });

  const create = (name: string, spec: WebPage['spec'] = { title: name }) =>
    c.custom.createNamespacedCustomObject({
      ...g,
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name }, spec },
    }) as Promise<WebPage>;
  const get = (name: string) => c.custom.getNamespacedCustomObject({ ...g, name }) as Promise<WebPage>;

  it('establishes a created CRD: NamesAccepted and Established, accepted names, stored versions', async () => {
    const crd = await eventually(async () => {
      const x = await c.ext.readCustomResourceDefinition({ name: 'webpages.sample.rxkube.dev' });
      return x.status?.conditions?.some((cond) => cond.type === 'Established' && cond.status === 'True') ? x : undefined;
    }, 'the CRD to be established');
    const conditions = Object.fromEntries((crd.status?.conditions ?? []).map((x) => [x.type, x.status]));
    expect(conditions).to.deep.equal({ NamesAccepted: 'True', Established: 'True' });
    expect(crd.status?.acceptedNames).to.deep.include({ plural: 'webpages', kind: 'WebPage', listKind: 'WebPageList' });
    expect(crd.status?.storedVersions).to.deep.equal(['v1']);
  });

  it('serves the new resource in discovery, with short names, categories and the status subresource', async () => {
    const res = await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v1');
    const resources = (res.json as { resources: { name: string; shortNames?: string[]; categories?: string[]; namespaced: boolean }[] })
      .resources;
    const main = resources.find((r) => r.name === 'webpages');
    expect(main).to.deep.include({ namespaced: true, shortNames: ['wp'], categories: ['all'] });
    expect(resources.map((r) => r.name)).to.include('webpages/status');
    const groups = (await raw(c.server, 'GET', '/apis')).json as { groups: { name: string; preferredVersion: { version: string } }[] };
    expect(groups.groups.find((x) => x.name === 'sample.rxkube.dev')?.preferredVersion.version).to.equal('v1');
  });

  it('creates, reads, lists and deletes custom resources', async () => {
    const created = await create('home');
    expect(created.metadata.generation).to.equal(1);
    expect((await get('home')).spec).to.deep.equal({ title: 'home' });
    const list = (await c.custom.listNamespacedCustomObject({ ...g })) as { kind: string; items: WebPage[] };
    expect(list.kind).to.equal('WebPageList');
    expect(list.items.map((i) => i.metadata.name)).to.include('home');
    await c.custom.deleteNamespacedCustomObject({ ...g, name: 'home' });
    expect(await isGone(() => get('home'))).to.equal(true);
  });

  it('requires a resourceVersion to replace a custom resource (422), and rejects a stale one (409)', async () => {
    const page = await create('strict');
    const { resourceVersion: _rv, ...meta } = page.metadata;
    const missing = await failure(c.custom.replaceNamespacedCustomObject({ ...g, name: 'strict', body: { ...page, metadata: meta } }));
    expect(missing.code).to.equal(422);
    expect(missing.status.reason).to.equal('Invalid');
    await c.custom.replaceNamespacedCustomObject({ ...g, name: 'strict', body: { ...page, spec: { title: 'v2' } } });
    const stale = await failure(c.custom.replaceNamespacedCustomObject({ ...g, name: 'strict', body: { ...page, spec: { title: 'v3' } } }));
    expect(stale.code).to.equal(409);
  });

  it('answers 415 for a strategic merge patch of a custom resource; merge patch works', async () => {
    await create('patchme');
    const f = await failure(
      c.custom.patchNamespacedCustomObject(
        { ...g, name: 'patchme', body: { spec: { title: 'x' } } },
        as(k8s.PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(f.code).to.equal(415);
    expect(f.status.reason).to.equal('UnsupportedMediaType');
    const merged = (await c.custom.patchNamespacedCustomObject(
      { ...g, name: 'patchme', body: { spec: { html: '<p/>' } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(merged.spec).to.deep.equal({ title: 'patchme', html: '<p/>' });
  });

  it('bumps a custom resource generation on any change outside metadata and status, never for status', async () => {
    const page = await create('gen');
    const labelled = (await c.custom.patchNamespacedCustomObject(
      { ...g, name: 'gen', body: { metadata: { labels: { a: 'b' } } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(labelled.metadata.generation).to.equal(1);
    const withStatus = (await c.custom.patchNamespacedCustomObjectStatus(
      { ...g, name: 'gen', body: { status: { ready: true } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(withStatus.metadata.generation).to.equal(1);
    const changed = (await c.custom.patchNamespacedCustomObject(
      { ...g, name: 'gen', body: { spec: { title: 'new' } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(changed.metadata.generation).to.equal(2);
    const other = (await c.custom.patchNamespacedCustomObject(
      { ...g, name: 'gen', body: { extra: { any: 1 } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(other.metadata.generation).to.equal(3);
    expect(page.metadata.uid).to.equal(other.metadata.uid);
  });

  it('splits status: the main resource ignores status, /status ignores everything else (labels too)', async () => {
    await create('split');
    const main = (await c.custom.patchNamespacedCustomObject(
      { ...g, name: 'split', body: { status: { ready: true } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(main.status).to.equal(undefined);
    const status = (await c.custom.patchNamespacedCustomObjectStatus(
      { ...g, name: 'split', body: { metadata: { labels: { ignored: 'yes' } }, spec: { title: 'ignored' }, status: { ready: true } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as WebPage;
    expect(status.status).to.deep.equal({ ready: true });
    expect(status.spec).to.deep.equal({ title: 'split' });
    expect(status.metadata.labels).to.equal(undefined);
    const current = await get('split');
    const replaced = (await c.custom.replaceNamespacedCustomObject({
      ...g,
      name: 'split',
      body: { ...current, status: { ready: false } },
    })) as WebPage;
    expect(replaced.status).to.deep.equal({ ready: true });
  });

  it('drops status on create when the status subresource is enabled', async () => {
    const created = (await c.custom.createNamespacedCustomObject({
      ...g,
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'nostatus' }, spec: {}, status: { ready: true } },
    })) as WebPage;
    expect(created.status).to.equal(undefined);
  });

  it('serves every served version, presenting the object at the version asked for', async () => {
    await create('versions');
    const beta = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1beta1', name: 'versions' })) as WebPage;
    expect(beta.apiVersion).to.equal('sample.rxkube.dev/v1beta1');
    expect(beta.spec).to.deep.equal({ title: 'versions' });
  });

  it('prints additionalPrinterColumns in the Table form', async () => {
    await create('table', { title: 'Hello' });
    const res = await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v1/namespaces/default/webpages/table', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    const table = res.json as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(table.kind).to.equal('Table');
    expect(table.columnDefinitions.map((x) => x.name)).to.deep.equal(['Name', 'Title']);
    expect(table.rows[0]?.cells).to.deep.equal(['table', 'Hello']);
  });

  it('supports cluster-scoped CRDs', async () => {
    await c.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'clusterthings.sample.rxkube.dev' },
        spec: {
          group: 'sample.rxkube.dev',
          scope: 'Cluster',
          names: { plural: 'clusterthings', kind: 'ClusterThing' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
      },
    });
    const thing = (await c.custom.createClusterCustomObject({
      group: 'sample.rxkube.dev',
      version: 'v1',
      plural: 'clusterthings',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'ClusterThing', metadata: { name: 'one' } },
    })) as WebPage & { metadata: { namespace?: string } };
    expect(thing.metadata.namespace).to.equal(undefined);
  });

  it('rejects an invalid CRD with 422 naming the fields', async () => {
    const f = await failure(
      c.ext.createCustomResourceDefinition({
        body: {
          metadata: { name: 'wrong.name' },
          spec: { group: 'nodots', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [] },
        },
      }),
    );
    expect(f.code).to.equal(422);
    const fields = (f.status.details as { causes: { field: string }[] }).causes.map((x) => x.field);
    expect(fields).to.include.members(['spec.group', 'metadata.name', 'spec.versions']);
  });

  describe('structural schema', () => {
    const sg = { group: 'schema.rxkube.dev', version: 'v1', namespace: 'default', plural: 'widgets' };
    const path = '/apis/schema.rxkube.dev/v1/namespaces/default/widgets';
    before(async () => {
      await c.ext.createCustomResourceDefinition({
        body: {
          metadata: { name: 'widgets.schema.rxkube.dev' },
          spec: {
            group: 'schema.rxkube.dev',
            scope: 'Namespaced',
            names: { plural: 'widgets', kind: 'Widget' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                subresources: { status: {} },
                selectableFields: [{ jsonPath: '.spec.color' }],
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: {
                      spec: {
                        type: 'object',
                        required: ['name'],
                        properties: {
                          name: { type: 'string', maxLength: 10 },
                          replicas: { type: 'integer', minimum: 0, _default: 1 },
                          color: { type: 'string', _enum: ['red', 'blue'] },
                          extra: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
                        },
                      },
                      status: { type: 'object', properties: { ready: { type: 'boolean' } } },
                    },
                  },
                },
              },
            ],
          },
        },
      });
    });
    const widget = (spec: Record<string, unknown>, name = 'w') =>
      JSON.stringify({ apiVersion: 'schema.rxkube.dev/v1', kind: 'Widget', metadata: { name }, spec });

    it('applies defaults and keeps what x-kubernetes-preserve-unknown-fields allows', async () => {
      const w = (await c.custom.createNamespacedCustomObject({
        ...sg,
        body: {
          apiVersion: 'schema.rxkube.dev/v1',
          kind: 'Widget',
          metadata: { name: 'defaulted' },
          spec: { name: 'a', extra: { anything: [1] } },
        },
      })) as { spec: Record<string, unknown> };
      expect(w.spec).to.deep.equal({ name: 'a', replicas: 1, extra: { anything: [1] } });
    });

    it('prunes undeclared fields with a Warning header (default Warn), refuses them with fieldValidation=Strict (400)', async () => {
      const warned = await raw(c.server, 'POST', path, widget({ name: 'b', typo: true }, 'pruned'));
      expect(warned.status).to.equal(201);
      expect(warned.headers.warning).to.equal('299 - "unknown field \\"spec.typo\\""');
      expect((warned.json as { spec: unknown }).spec).to.deep.equal({ name: 'b', replicas: 1 });
      const strict = await raw(c.server, 'POST', `${path}?fieldValidation=Strict`, widget({ name: 'b', typo: true }, 'strict'));
      expect(strict.status).to.equal(400);
      expect((strict.json as { message: string }).message).to.equal('strict decoding error: unknown field "spec.typo"');
    });

    it('selects by the CRD selectableFields (field selectors)', async () => {
      for (const [name, color] of [
        ['red-one', 'red'],
        ['blue-one', 'blue'],
      ]) {
        await c.custom.createNamespacedCustomObject({
          ...sg,
          body: { apiVersion: 'schema.rxkube.dev/v1', kind: 'Widget', metadata: { name }, spec: { name, color } },
        });
      }
      const red = (await c.custom.listNamespacedCustomObject({ ...sg, fieldSelector: 'spec.color=red' })) as {
        items: { metadata: { name: string } }[];
      };
      expect(red.items.map((i) => i.metadata.name)).to.deep.equal(['red-one']);
      const f = await failure(c.custom.listNamespacedCustomObject({ ...sg, fieldSelector: 'spec.name=x' }));
      expect(f.code).to.equal(400);
    });

    it('answers 422 for wrong types, missing required fields, values outside enum, bounds and lengths', async () => {
      const res = await raw(c.server, 'POST', path, widget({ replicas: 'three', color: 'green' }, 'bad'));
      expect(res.status).to.equal(422);
      const causes = (res.json as { details: { causes: { field: string; reason: string }[] } }).details.causes;
      expect(causes.map((x) => `${x.field} ${x.reason}`)).to.have.members([
        'spec.replicas FieldValueTypeInvalid',
        'spec.color FieldValueNotSupported',
        'spec.name FieldValueRequired',
      ]);
      const bounds = await raw(c.server, 'POST', path, widget({ name: 'much-too-long-name', replicas: -1 }, 'bounds'));
      expect(bounds.status).to.equal(422);
      expect((bounds.json as { message: string }).message).to.contain('spec.replicas in body should be greater than or equal to 0');
    });
  });

  it('deleting a CRD deletes its objects, then stops serving the resource', async () => {
    await c.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gadgets.tmp.rxkube.dev' },
        spec: {
          group: 'tmp.rxkube.dev',
          scope: 'Namespaced',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
      },
    });
    const tg = { group: 'tmp.rxkube.dev', version: 'v1', namespace: 'default', plural: 'gadgets' };
    for (const name of ['a', 'b']) {
      await c.custom.createNamespacedCustomObject({ ...tg, body: { apiVersion: 'tmp.rxkube.dev/v1', kind: 'Gadget', metadata: { name } } });
    }
    const watch = await RecordingWatch.start(c.kc, '/apis/tmp.rxkube.dev/v1/namespaces/default/gadgets', {
      resourceVersion: String(c.server.stats().resourceVersion),
    });
    await c.ext.deleteCustomResourceDefinition({ name: 'gadgets.tmp.rxkube.dev' });
    // Watchers see the objects go, then their stream ends with the resource.
    expect(await watch.ended()).to.equal(null);
    expect(watch.summary()).to.deep.equal(['DELETED a', 'DELETED b']);
    await eventually(() => isGone(() => c.ext.readCustomResourceDefinition({ name: 'gadgets.tmp.rxkube.dev' })), 'the CRD to go');
    const res = await raw(c.server, 'GET', '/apis/tmp.rxkube.dev/v1/namespaces/default/gadgets');
    expect(res.status).to.equal(404);
    // Recreating it serves an empty collection: the objects went with the CRD.
    await c.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gadgets.tmp.rxkube.dev' },
        spec: {
          group: 'tmp.rxkube.dev',
          scope: 'Namespaced',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
      },
    });
    const list = (await c.custom.listNamespacedCustomObject({ ...tg })) as { items: unknown[] };
    expect(list.items).to.deep.equal([]);
  });
});
