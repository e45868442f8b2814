import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '@rxkube/apiserver';
import {
  classifyError,
  createKubeClient,
  errorMessage,
  loadKubeConfig,
  statusCodeOf,
  type KubeClient,
  type ResourceClient,
} from '../../lib/kube/index.js';
import { reasonOf } from '../../lib/kube/errors.js';

interface ConfigMap extends KubernetesObject {
  data?: Record<string, string>;
}

interface WebPage extends KubernetesObject {
  spec?: { html?: string; replicas?: number };
  status?: { ready?: boolean; message?: string };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (err: unknown) => err,
  );
}

const webPageCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'webpages.sample.rxkube.dev' },
  spec: {
    group: 'sample.rxkube.dev',
    scope: 'Namespaced',
    names: { plural: 'webpages', singular: 'webpage', kind: 'WebPage', listKind: 'WebPageList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { html: { type: 'string' }, replicas: { type: 'integer' } } },
              status: { type: 'object', properties: { ready: { type: 'boolean' }, message: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
};

describe('kube/client against the embedded API server', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startApiServer>>;
  let kube: KubeClient;
  let configMaps: ResourceClient<ConfigMap>;

  before(async () => {
    server = await startApiServer();
    kube = createKubeClient(server.kubeConfig());
    configMaps = kube.resource<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' });
    const namespaces = kube.resource({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false });
    for (const name of ['paging', 'web']) await namespaces.create({ metadata: { name } });
  });
  after(async () => {
    await server?.close();
  });

  it('creates, gets, replaces and deletes a ConfigMap', async () => {
    const created = await configMaps.create({ metadata: { name: 'crud', namespace: 'default' }, data: { a: '1' } });
    expect(created).to.include({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(created.metadata?.uid).to.be.a('string');
    expect(created.metadata?.creationTimestamp).to.be.a('string');

    const read = await configMaps.get({ name: 'crud', namespace: 'default' });
    expect(read.data).to.deep.equal({ a: '1' });

    const replaced = await configMaps.replace({ ...read, data: { a: '2' } });
    expect(replaced.data).to.deep.equal({ a: '2' });
    expect(replaced.metadata?.resourceVersion).to.not.equal(read.metadata?.resourceVersion);

    await configMaps.delete({ name: 'crud', namespace: 'default' });
    expect(await configMaps.find({ name: 'crud', namespace: 'default' })).to.equal(undefined);
  });

  it('classifies 404 Not Found, 409 Conflict / AlreadyExists and 422 Invalid', async () => {
    const missing = await rejection(configMaps.get({ name: 'nope', namespace: 'default' }));
    expect(classifyError(missing)).to.equal('notFound');
    expect(statusCodeOf(missing)).to.equal(404);
    expect(errorMessage(missing)).to.match(
      /GET \/api\/v1\/namespaces\/default\/configmaps\/nope: 404 NotFound: configmaps "nope" not found/,
    );

    const first = await configMaps.create({ metadata: { name: 'dup', namespace: 'default' } });
    const exists = await rejection(configMaps.create({ metadata: { name: 'dup', namespace: 'default' } }));
    expect(classifyError(exists)).to.equal('conflict');
    expect(reasonOf(exists)).to.equal('AlreadyExists');

    await configMaps.replace({ ...first, data: { x: 'newer' } });
    const stale = await rejection(configMaps.replace({ ...first, data: { x: 'stale' } }));
    expect(classifyError(stale)).to.equal('conflict');
    expect(reasonOf(stale)).to.equal('Conflict');

    const invalid = await rejection(configMaps.create({ metadata: { name: 'Not_A_Valid_Name', namespace: 'default' } }));
    expect(classifyError(invalid)).to.equal('invalid');
    expect(statusCodeOf(invalid)).to.equal(422);
  });

  it('ES8: lists with label and field selectors, and pages with limit/continue', async () => {
    for (let i = 0; i < 5; i++) {
      await configMaps.create({
        metadata: { name: `page-${i}`, namespace: 'paging', labels: { app: 'paging', parity: i % 2 ? 'odd' : 'even' } },
      });
    }
    await configMaps.create({ metadata: { name: 'other', namespace: 'paging', labels: { app: 'other' } } });

    const odd = await configMaps.list({ namespace: 'paging', labelSelector: { app: 'paging', parity: 'odd' } });
    expect(odd.items.map((c) => c.metadata?.name)).to.deep.equal(['page-1', 'page-3']);
    expect(odd.items[0]).to.include({ apiVersion: 'v1', kind: 'ConfigMap' });

    const expr = await configMaps.list({
      namespace: 'paging',
      labelSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['paging'] }] },
    });
    expect(expr.items.map((c) => c.metadata?.name)).to.deep.equal(['other']);

    const byName = await configMaps.list({ namespace: 'paging', fieldSelector: { 'metadata.name': 'page-2' } });
    expect(byName.items.map((c) => c.metadata?.name)).to.deep.equal(['page-2']);

    const firstPage = await configMaps.list({ namespace: 'paging', labelSelector: 'app=paging', limit: 2 });
    expect(firstPage.items).to.have.length(2);
    expect(firstPage.metadata?.continue).to.be.a('string').and.not.equal('');

    const all = await configMaps.listAll({ namespace: 'paging', labelSelector: 'app=paging', limit: 2 });
    expect(all.items.map((c) => c.metadata?.name)).to.deep.equal(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    expect(Number(all.resourceVersion)).to.be.greaterThan(0);

    const everywhere = await configMaps.list({ labelSelector: 'app=paging' });
    expect(everywhere.items).to.have.length(5);
  });

  it('UP1: server-side apply creates, reports field-manager conflicts as 409, and force takes over', async () => {
    const ref = { name: 'applied', namespace: 'default' };
    const created = await configMaps.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: ref, data: { owner: 'controller' } },
      { fieldManager: 'rxkube-controller' },
    );
    expect(created.data).to.deep.equal({ owner: 'controller' });
    expect(created.metadata?.managedFields?.map((f) => f.manager)).to.include('rxkube-controller');

    const clash = await rejection(configMaps.apply({ metadata: ref, data: { owner: 'someone' } }, { fieldManager: 'other' }));
    expect(classifyError(clash)).to.equal('conflict');

    const forced = await configMaps.apply({ metadata: ref, data: { owner: 'someone' } }, { fieldManager: 'other', force: true });
    expect(forced.data).to.deep.equal({ owner: 'someone' });

    // managedFields from a read object are dropped from the intent, as the server requires
    const again = await configMaps.apply({ ...forced, data: { owner: 'someone', extra: 'x' } }, { fieldManager: 'other' });
    expect(again.data).to.deep.equal({ owner: 'someone', extra: 'x' });
  });

  it('UP1: merge patch and JSON patch', async () => {
    const ref = { name: 'patched', namespace: 'default' };
    await configMaps.create({ metadata: ref, data: { a: '1', b: '2' } });
    const merged = await configMaps.mergePatch(ref, { data: { a: null, c: '3' } });
    expect(merged.data).to.deep.equal({ b: '2', c: '3' });
    const patched = await configMaps.jsonPatch(ref, [
      { op: 'test', path: '/data/b', value: '2' },
      { op: 'replace', path: '/data/b', value: 'two' },
    ]);
    expect(patched.data).to.deep.equal({ b: 'two', c: '3' });
    const failed = await rejection(configMaps.jsonPatch(ref, [{ op: 'test', path: '/data/b', value: 'wrong' }]));
    expect(classifyError(failed)).to.be.oneOf(['invalid', 'conflict']);
  });

  describe('a custom resource with a status subresource', () => {
    let pages: ResourceClient<WebPage>;
    const ref = { name: 'home', namespace: 'web' };

    before(async () => {
      const crds = kube.resource({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        plural: 'customresourcedefinitions',
        namespaced: false,
      });
      await crds.create(webPageCrd);
      const deadline = Date.now() + 5_000;
      for (;;) {
        try {
          const descriptor = await kube.discover('sample.rxkube.dev/v1', 'WebPage');
          pages = kube.resource<WebPage>(descriptor);
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    });

    it('resolves the descriptor from discovery', () => {
      expect(pages.descriptor).to.deep.equal({
        apiVersion: 'sample.rxkube.dev/v1',
        kind: 'WebPage',
        plural: 'webpages',
        namespaced: true,
        group: 'sample.rxkube.dev',
        version: 'v1',
      });
    });

    it('discovery names what it serves when the kind is unknown, and a missing apiVersion', async () => {
      const unknownKind = await rejection(kube.discover('sample.rxkube.dev/v1', 'Nope'));
      expect((unknownKind as Error).message).to.match(
        /kind 'Nope' is not served by apiVersion 'sample.rxkube.dev\/v1' \(it serves: WebPage\)/,
      );
      const unknownGroup = await rejection(kube.discover('nothing.example.com/v1', 'Nope'));
      expect((unknownGroup as Error).message).to.match(/apiVersion 'nothing.example.com\/v1' is not served/);
    });

    it('writes status only through the /status variants', async () => {
      const created = await pages.create({ metadata: ref, spec: { html: '<h1/>' } });
      expect(created.metadata?.generation).to.equal(1);

      const viaMain = await pages.mergePatch(ref, { status: { ready: true } });
      expect(viaMain.status).to.equal(undefined);

      const merged = await pages.mergePatchStatus(ref, { status: { ready: false, message: 'starting' } });
      expect(merged.status).to.deep.equal({ ready: false, message: 'starting' });
      expect(merged.metadata?.generation).to.equal(1);

      const applied = await pages.applyStatus(
        { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: ref, status: { ready: true } },
        { fieldManager: 'rxkube-controller', force: true },
      );
      expect(applied.status?.ready).to.equal(true);

      const replaced = await pages.replaceStatus({ ...applied, status: { ready: true, message: 'done' } });
      expect(replaced.status).to.deep.equal({ ready: true, message: 'done' });
      expect(replaced.metadata?.generation).to.equal(1);

      const specChange = await pages.apply(
        { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: ref, spec: { html: '<h2/>' } },
        { fieldManager: 'user', force: true },
      );
      expect(specChange.metadata?.generation).to.equal(2);
      expect(specChange.status?.message).to.equal('done');
    });

    it('deleting an object held by a finalizer returns it with a deletionTimestamp; a failed precondition is a conflict', async () => {
      const held = { name: 'held', namespace: 'web' };
      const created = await pages.create({ metadata: { ...held, finalizers: ['webpages.sample.rxkube.dev/finalizer'] } });
      const wrongUid = await rejection(pages.delete(held, { preconditions: { uid: 'not-the-uid' } }));
      expect(classifyError(wrongUid)).to.equal('conflict');

      const deleting = await pages.delete(held, { preconditions: { uid: created.metadata?.uid as string } });
      expect(deleting?.metadata?.deletionTimestamp).to.be.a('string');
      await pages.jsonPatch(held, [{ op: 'remove', path: '/metadata/finalizers' }]);
      expect(await pages.find(held)).to.equal(undefined);
    });

    it('refuses an object of another kind and a namespaced object without a namespace', async () => {
      const wrongKind = await rejection(pages.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'web' } }));
      expect((wrongKind as Error).message).to.match(/object apiVersion 'v1' does not match the resource's 'sample.rxkube.dev\/v1'/);
      const noNamespace = await rejection(pages.get({ name: 'home' }));
      expect((noNamespace as Error).message).to.match(/WebPage 'home' is namespaced/);
    });
  });

  it('talks to the server through a kubeconfig file loaded by loadKubeConfig', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxkube-kube-'));
    try {
      const file = join(dir, 'config');
      await server.writeKubeconfig(file);
      const fromFile = createKubeClient(loadKubeConfig({ kubeconfigPath: file, env: {} }));
      const namespaces = fromFile.resource({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false });
      expect((await namespaces.get({ name: 'default' })).metadata?.name).to.equal('default');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('handles cluster-scoped resources', async () => {
    const namespaces = kube.resource({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false });
    const ns = await namespaces.create({ metadata: { name: 'cluster-scoped-test' } });
    expect(ns.metadata?.namespace).to.equal(undefined);
    const got = await namespaces.get({ name: 'cluster-scoped-test' });
    expect(got.metadata?.uid).to.equal(ns.metadata?.uid);
  });
});
