import { expect } from 'chai';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { ConfigurationError } from '../../lib/core/index.js';
import {
  builtinResources,
  createKubeClient,
  customResourceDefinition,
  descriptorOf,
  installCustomResourceDefinition,
} from '../../lib/kube/index.js';
import { schemaToJson } from '../../lib/kube/crd.js';

describe('kube: custom resource definitions', () => {
  it('builds a CRD with defaults: v1, namespaced, status subresource, any spec and status', () => {
    const crd = customResourceDefinition({ group: 'example.com', kind: 'Gadget', plural: 'gadgets', shortNames: ['gd'] });
    expect(crd.metadata?.name).to.equal('gadgets.example.com');
    expect(crd.spec.scope).to.equal('Namespaced');
    expect(crd.spec.names).to.deep.equal({
      plural: 'gadgets',
      singular: 'gadget',
      kind: 'Gadget',
      listKind: 'GadgetList',
      shortNames: ['gd'],
    });
    expect(crd.spec.versions[0]?.subresources).to.deep.equal({ status: {} });
    expect(descriptorOf(crd)).to.deep.equal({ apiVersion: 'example.com/v1', kind: 'Gadget', plural: 'gadgets', namespaced: true });
    const cluster = customResourceDefinition({
      group: 'example.com',
      kind: 'Zone',
      plural: 'zones',
      scope: 'Cluster',
      version: 'v2',
      statusSubresource: false,
    });
    expect(descriptorOf(cluster)).to.deep.equal({ apiVersion: 'example.com/v2', kind: 'Zone', plural: 'zones', namespaced: false });
    expect(cluster.spec.versions[0]?.subresources).to.equal(undefined);
  });

  it('schemaToJson renames client-node model keywords but never property names', () => {
    const typed = {
      type: 'object',
      x_kubernetes_preserve_unknown_fields: true,
      properties: {
        schema: { type: 'string', _enum: ['a', 'b'], _default: 'a' },
        ref: { type: 'array', items: { type: 'object', x_kubernetes_map_type: 'atomic' } },
      },
    };
    expect(schemaToJson(typed)).to.deep.equal({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        schema: { type: 'string', enum: ['a', 'b'], default: 'a' },
        ref: { type: 'array', items: { type: 'object', 'x-kubernetes-map-type': 'atomic' } },
      },
    });
  });

  it('rejects a bad plural or a group without a dot with a ConfigurationError naming it', () => {
    expect(() => customResourceDefinition({ group: 'example.com', kind: 'Gadget', plural: 'Gadgets' })).to.throw(
      ConfigurationError,
      /^resource\.plural/,
    );
    expect(() => customResourceDefinition({ group: 'example', kind: 'Gadget', plural: 'gadgets' })).to.throw(
      ConfigurationError,
      /^group: 'example'/,
    );
  });

  describe('installCustomResourceDefinition, against the embedded API server', () => {
    let server: ApiServer;
    before(async () => {
      server = await startApiServer();
    });
    after(() => server.close());

    it('creates the CRD, waits until it is served, and accepts one that exists already', async () => {
      const client = createKubeClient(server.kubeConfig());
      const crd = customResourceDefinition({ group: 'example.com', kind: 'Gadget', plural: 'gadgets' });
      await installCustomResourceDefinition(client, crd);
      await installCustomResourceDefinition(client, crd);
      const stored = await client.resource(builtinResources.customResourceDefinition).get({ name: 'gadgets.example.com' });
      expect(stored.metadata?.name).to.equal('gadgets.example.com');
      const gadgets = client.resource<{ metadata?: { name?: string }; spec?: unknown }>(descriptorOf(crd));
      const created = await gadgets.create({
        metadata: { name: 'g1', namespace: 'default' },
        spec: { size: 3, nested: { keep: true } },
      } as never);
      // The default schema keeps unknown fields: the server must have read x-kubernetes-preserve-unknown-fields.
      expect(created.spec).to.deep.equal({ size: 3, nested: { keep: true } });
    });
  });
});
