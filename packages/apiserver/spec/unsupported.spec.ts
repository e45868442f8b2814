/**
 * What the server does not do, pinned so that docs/apiserver.md's comparison table stays true
 * when it changes: its "no" cells name these tests.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, raw, startWithClients, webPageCrd, type Clients } from './helpers.js';

describe('apiserver: what it does not do (the "no" rows of the comparison table)', () => {
  let c: Clients;
  let webhook: Server;
  let webhookCalls = 0;

  before(async () => {
    c = await startWithClients();
    webhook = createServer((_req, res) => {
      webhookCalls++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await c?.server.close();
    await new Promise((resolve) => webhook?.close(resolve));
  });

  it('serves a CRD whose conversion strategy is Webhook as None: versions differ in apiVersion only, the webhook is never called', async () => {
    const url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/convert`;
    await c.ext.createCustomResourceDefinition({
      body: webPageCrd({ conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url } } } }),
    });
    const g = { group: 'sample.rxkube.dev', namespace: 'default', plural: 'webpages' };
    await eventually(async () => (await raw(c.server, 'GET', '/apis/sample.rxkube.dev/v1beta1')).status === 200, 'the CRD to be served');
    await c.custom.createNamespacedCustomObject({
      ...g,
      version: 'v1beta1',
      body: { apiVersion: 'sample.rxkube.dev/v1beta1', kind: 'WebPage', metadata: { name: 'home' }, spec: { title: 'home' } },
    });
    const read = (await c.custom.getNamespacedCustomObject({ ...g, version: 'v1', name: 'home' })) as { apiVersion: string; spec: unknown };
    expect(read).to.deep.include({ apiVersion: 'sample.rxkube.dev/v1', spec: { title: 'home' } });
    expect(webhookCalls).to.equal(0);
  });
});
