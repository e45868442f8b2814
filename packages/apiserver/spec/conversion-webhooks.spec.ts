/**
 * CRD conversion webhooks on the embedded server: a v1/v2 CRD whose conversion strategy is
 * Webhook, stored in v1, served in both through a real HTTPS ConversionReview webhook written
 * here (v1 spec.title is v2 spec.heading).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { generateServingTls } from '../src/http/tls.js';
import { eventually, failure, kubectlAvailable, kubectlSession, raw, RecordingWatch, startWithClients, type Clients } from './helpers.js';

type Obj = Record<string, any>;

function convert(o: Obj, to: string): Obj {
  const spec = { ...(o.spec ?? {}) };
  if (to.endsWith('/v2') && 'title' in spec) {
    spec.heading = spec.title;
    delete spec.title;
  }
  if (to.endsWith('/v1') && 'heading' in spec) {
    spec.title = spec.heading;
    delete spec.heading;
  }
  return { ...o, apiVersion: to, spec };
}

describe('CRD conversion webhooks', function () {
  this.timeout(30_000);
  let c: Clients;
  let hook: Server;
  let mode: 'ok' | 'refuse' | 'refuse-with-object' = 'ok';
  const reviews: Obj[] = [];
  const g = { group: 'sample.rxkube.dev', namespace: 'default', plural: 'webpages' };

  before(async () => {
    const tls = await generateServingTls({ dns: ['convert.system.svc'], ips: ['127.0.0.1'] });
    hook = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (x: Buffer) => chunks.push(x));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString()) as Obj;
        reviews.push(review);
        const { uid, desiredAPIVersion, objects } = review.request as { uid: string; desiredAPIVersion: string; objects: Obj[] };
        const response =
          mode === 'refuse'
            ? { uid, result: { status: 'Failure', message: 'cannot convert today' } }
            : mode === 'refuse-with-object'
              ? { uid, result: { status: 'Failure', message: { reason: 'not text' } } }
              : { uid, result: { status: 'Success' }, convertedObjects: objects.map((o) => convert(o, desiredAPIVersion)) };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const port = (hook.address() as AddressInfo).port;
    c = await startWithClients({ webhookServices: { 'system/convert:443': `127.0.0.1:${port}` } });
    const schema = { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } as k8s.V1CustomResourceValidation;
    await c.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'webpages.sample.rxkube.dev' },
        spec: {
          group: 'sample.rxkube.dev',
          scope: 'Namespaced',
          names: { plural: 'webpages', singular: 'webpage', kind: 'WebPage' },
          versions: [
            { name: 'v1', served: true, storage: true, schema },
            { name: 'v2', served: true, storage: false, schema },
          ],
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              clientConfig: {
                service: { namespace: 'system', name: 'convert', path: '/convert' },
                caBundle: Buffer.from(tls.ca).toString('base64'),
              },
            },
          },
        },
      },
    });
    await eventually(async () => (await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v2')).status === 200, 'the CRD to be served');
  });

  after(async () => {
    await c.server.close();
    await new Promise<void>((resolve) => {
      hook.close(() => resolve());
      hook.closeAllConnections();
    });
  });

  afterEach(() => {
    mode = 'ok';
  });

  it('a v1/v2 CRD with a conversion webhook serves both versions: written in v2, stored in v1, read and listed in both, round-trips', async () => {
    await c.custom.createNamespacedCustomObject({
      ...g,
      version: 'v2',
      body: { apiVersion: 'sample.rxkube.dev/v2', kind: 'WebPage', metadata: { name: 'home' }, spec: { heading: 'Home' } },
    });
    const v1 = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'home' })) as Obj;
    expect(v1).to.deep.include({ apiVersion: 'sample.rxkube.dev/v1', spec: { title: 'Home' } });
    const v2 = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v2', name: 'home' })) as Obj;
    expect(v2).to.deep.include({ apiVersion: 'sample.rxkube.dev/v2', spec: { heading: 'Home' } });
    expect(v2.metadata).to.deep.equal(v1.metadata);
    const review = reviews.find((r) => r.request.desiredAPIVersion === 'sample.rxkube.dev/v1')?.request as Obj;
    expect(review.objects[0]).to.deep.include({ apiVersion: 'sample.rxkube.dev/v2', spec: { heading: 'Home' } });
    await c.custom.createNamespacedCustomObject({
      ...g,
      version: 'v1',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'about' }, spec: { title: 'About' } },
    });
    reviews.splice(0);
    const list2 = (await c.custom.listNamespacedCustomObject({ ...g, version: 'v2' })) as { apiVersion: string; items: Obj[] };
    expect(list2.apiVersion).to.equal('sample.rxkube.dev/v2');
    expect(list2.items.map((i) => [i.apiVersion, i.spec.heading])).to.deep.equal([
      ['sample.rxkube.dev/v2', 'About'],
      ['sample.rxkube.dev/v2', 'Home'],
    ]);
    expect(reviews, 'one review for the whole list').to.have.length(1);
    const list1 = (await c.custom.listNamespacedCustomObject({ ...g, version: 'v1' })) as { items: Obj[] };
    expect(list1.items.map((i) => i.spec.title)).to.deep.equal(['About', 'Home']);
    // Round trip: v2 read, written back unchanged, is the same v1 object.
    await c.custom.replaceNamespacedCustomObject({ ...g, version: 'v2', name: 'home', body: v2 });
    const again = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'home' })) as Obj;
    expect(again.spec).to.deep.equal(v1.spec);
    expect(again.metadata.resourceVersion).to.equal(v1.metadata.resourceVersion);
  });

  it('patches and watches through the webhook in the version asked for', async () => {
    const watch = await RecordingWatch.start(c.kc, '/apis/sample.rxkube.dev/v2/namespaces/default/webpages', {});
    try {
      await c.custom.createNamespacedCustomObject({
        ...g,
        version: 'v1',
        body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'watched' }, spec: { title: 'Watched' } },
      });
      await c.custom.patchNamespacedCustomObject(
        { ...g, version: 'v2', name: 'watched', body: { spec: { heading: 'Patched' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const v1 = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'watched' })) as Obj;
      expect(v1.spec).to.deep.equal({ title: 'Patched' });
      const events = await watch.waitFor(
        (es) => es.some((e) => e.type === 'MODIFIED' && e.object.metadata?.name === 'watched'),
        'the patch to be watched',
      );
      const mine = events.filter((e) => e.object.metadata?.name === 'watched');
      expect(mine.map((e) => [e.type, e.object.apiVersion, (e.object.spec as Obj).heading])).to.deep.equal([
        ['ADDED', 'sample.rxkube.dev/v2', 'Watched'],
        ['MODIFIED', 'sample.rxkube.dev/v2', 'Patched'],
      ]);
    } finally {
      watch.stop();
    }
  });

  it('a webhook that refuses gives the real error on read (500, "conversion webhook for ... returned failure")', async () => {
    await c.custom.createNamespacedCustomObject({
      ...g,
      version: 'v1',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'refused' }, spec: { title: 'R' } },
    });
    mode = 'refuse';
    const { code, status } = await failure(c.custom.getNamespacedCustomObject({ ...g, version: 'v2', name: 'refused' }));
    expect(code).to.equal(500);
    expect(status.message).to.equal(
      'Internal error occurred: conversion webhook for sample.rxkube.dev/v1, Kind=WebPage returned failure: cannot convert today',
    );
    // The storage version needs no conversion.
    expect(((await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'refused' })) as Obj).spec).to.deep.equal({
      title: 'R',
    });
  });

  it('a refusal whose message is not text is quoted as JSON, not as "[object Object]"', async () => {
    await c.custom.createNamespacedCustomObject({
      ...g,
      version: 'v1',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'refused-object' }, spec: { title: 'R' } },
    });
    mode = 'refuse-with-object';
    const { code, status } = await failure(c.custom.getNamespacedCustomObject({ ...g, version: 'v2', name: 'refused-object' }));
    expect(code).to.equal(500);
    expect(status.message).to.equal(
      'Internal error occurred: conversion webhook for sample.rxkube.dev/v1, Kind=WebPage returned failure: {"reason":"not text"}',
    );
  });

  it('a CRD with a Webhook strategy is validated: https only, conversionReviewVersions required; an unreachable webhook is the real 500', async () => {
    const crd = (name: string, webhook: k8s.V1WebhookConversion): k8s.V1CustomResourceDefinition => ({
      metadata: { name: `${name}s.broken.rxkube.dev` },
      spec: {
        group: 'broken.rxkube.dev',
        scope: 'Namespaced',
        names: { plural: `${name}s`, kind: name[0].toUpperCase() + name.slice(1) },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          },
          {
            name: 'v2',
            served: true,
            storage: false,
            schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          },
        ],
        conversion: { strategy: 'Webhook', webhook },
      },
    });
    const { code, status } = await failure(
      c.ext.createCustomResourceDefinition({
        body: crd('plain', { conversionReviewVersions: [], clientConfig: { url: 'http://127.0.0.1/convert' } }),
      }),
    );
    expect(code).to.equal(422);
    expect(String(status.message)).to.include('spec.conversion.webhook.conversionReviewVersions: Required value');
    expect(String(status.message)).to.include(
      `spec.conversion.webhook.clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme`,
    );
    await c.ext.createCustomResourceDefinition({
      body: crd('dead', { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:1/convert' } }),
    });
    await eventually(async () => (await raw(c.server, 'GET', '/apis/broken.rxkube.dev/v2')).status === 200, 'the CRD to be served');
    const b = { group: 'broken.rxkube.dev', namespace: 'default', plural: 'deads' };
    await c.custom.createNamespacedCustomObject({
      ...b,
      version: 'v1',
      body: { apiVersion: 'broken.rxkube.dev/v1', kind: 'Dead', metadata: { name: 'x' } },
    });
    const read = await failure(c.custom.getNamespacedCustomObject({ ...b, version: 'v2', name: 'x' }));
    expect(read.code).to.equal(500);
    expect(read.status.message).to.equal(
      'Internal error occurred: conversion webhook for broken.rxkube.dev/v1, Kind=Dead failed: Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused',
    );
  });

  it('kubectl reads both versions', async function () {
    if (!(await kubectlAvailable())) this.skip();
    const session = await kubectlSession(c.server);
    try {
      await c.custom.createNamespacedCustomObject({
        ...g,
        version: 'v1',
        body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'cli' }, spec: { title: 'CLI' } },
      });
      expect(await session.kubectl('get', 'webpages.v2.sample.rxkube.dev', 'cli', '-o', 'jsonpath={.apiVersion} {.spec.heading}')).to.equal(
        'sample.rxkube.dev/v2 CLI',
      );
      expect(await session.kubectl('get', 'webpages.v1.sample.rxkube.dev', 'cli', '-o', 'jsonpath={.apiVersion} {.spec.title}')).to.equal(
        'sample.rxkube.dev/v1 CLI',
      );
    } finally {
      await session.close();
    }
  });
});
