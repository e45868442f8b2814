import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { eventually, kubectlAvailable, kubectlSession, startWithClients, type Clients, type KubectlSession } from './helpers.js';

const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

interface Swagger {
  swagger: string;
  info: { title: string; version: string };
  paths: Record<
    string,
    Record<
      string,
      {
        consumes?: string[];
        parameters?: { name: string; in: string }[];
        'x-kubernetes-group-version-kind'?: unknown;
        'x-kubernetes-action'?: string;
      }
    >
  >;
  definitions: Record<
    string,
    { properties?: Record<string, Record<string, unknown>>; required?: string[]; 'x-kubernetes-group-version-kind'?: unknown }
  >;
}

const gadgetCrd: k8s.V1CustomResourceDefinition = {
  metadata: { name: 'gadgets.toys.example.com' },
  spec: {
    group: 'toys.example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
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
              spec: {
                type: 'object',
                description: 'What the gadget should be.',
                required: ['size'],
                properties: {
                  size: { type: 'integer', maximum: 10, description: 'How big.' },
                  color: { type: 'string', _enum: ['red', 'blue'] },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe('apiserver: /openapi/v2', function () {
  this.timeout(60_000);
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c?.server.close();
  });

  const get = async (
    accept?: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; type: string | null; etag: string | null; body: Buffer }> => {
    const res = await fetch(`${c.server.url}/openapi/v2`, { headers: { ...(accept === undefined ? {} : { accept }), ...headers } });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      etag: res.headers.get('etag'),
      body: Buffer.from(await res.arrayBuffer()),
    };
  };
  const swagger = async (): Promise<Swagger> => JSON.parse((await get('application/json')).body.toString('utf8')) as Swagger;

  it('is a Swagger 2.0 document with the built-in kinds under their Kubernetes names, every $ref resolving', async () => {
    const res = await get('application/json');
    expect(res.status).to.equal(200);
    expect(res.type).to.equal('application/json');
    const doc = JSON.parse(res.body.toString('utf8')) as Swagger;
    expect(doc.swagger).to.equal('2.0');
    expect(doc.info.version).to.match(/^v1\.32\./);
    const deployment = doc.definitions['io.k8s.api.apps.v1.Deployment'];
    expect(deployment?.['x-kubernetes-group-version-kind']).to.deep.equal([{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    expect(deployment?.properties?.spec).to.deep.include({ $ref: '#/definitions/io.k8s.api.apps.v1.DeploymentSpec' });
    expect(doc.definitions['io.k8s.api.apps.v1.DeploymentSpec']?.required).to.deep.equal(['selector', 'template']);
    expect(doc.definitions['io.k8s.api.batch.v1.CronJob']?.['x-kubernetes-group-version-kind']).to.deep.equal([
      { group: 'batch', version: 'v1', kind: 'CronJob' },
    ]);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).to.be.greaterThan(100);
    expect(refs.filter((r) => !r.startsWith('#/definitions/') || !doc.definitions[r.slice('#/definitions/'.length)])).to.deep.equal([]);
  });

  it('has the paths of each served resource, the PATCH declaring its patch types, fieldValidation and its kind', async () => {
    const doc = await swagger();
    const item = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
    expect(item?.patch?.['x-kubernetes-group-version-kind']).to.deep.equal({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(item?.patch?.consumes).to.include('application/merge-patch+json');
    expect(item?.patch?.parameters?.map((p) => p.name)).to.include.members(['body', 'fieldValidation', 'fieldManager', 'dryRun', 'force']);
    expect(Object.keys(item ?? {})).to.include.members(['get', 'put', 'delete', 'patch']);
    expect(doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments']?.get?.['x-kubernetes-action']).to.equal('list');
    expect(doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status']).to.have.property('patch');
    expect(doc.paths['/api/v1/namespaces/{name}']).to.have.property('get');
    expect(doc.paths['/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}']).to.have.property('patch');
  });

  it('answers the protobuf client-go asks for, 406 for what it does not serve, 304 for an unchanged ETag', async () => {
    const pb = await get(PROTOBUF);
    expect(pb.status).to.equal(200);
    expect(pb.type).to.equal('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // Field 1 (swagger), length 3, "2.0".
    expect([...pb.body.subarray(0, 5)]).to.deep.equal([0x0a, 0x03, 0x32, 0x2e, 0x30]);
    expect(pb.body.includes(Buffer.from('io.k8s.api.apps.v1.DeploymentSpec'))).to.equal(true);
    expect((await get('text/html')).status).to.equal(406);
    const yaml = await get('application/yaml');
    expect(yaml.status).to.equal(406);
    expect(JSON.parse(yaml.body.toString('utf8'))).to.include({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
    expect((await get(`application/json;q=0.5, ${PROTOBUF}`)).type).to.match(/protobuf$/);
    expect((await get()).type).to.equal('application/json');
    const again = await get('application/json', { 'if-none-match': String((await get('application/json')).etag) });
    expect(again.status).to.equal(304);
  });

  it("a CRD's kind appears as the real server names it, without value validations, and goes with the CRD", async () => {
    const before = (await get('application/json')).etag;
    expect((await get('application/json')).etag).to.equal(before);
    await c.ext.createCustomResourceDefinition({ body: gadgetCrd });
    const doc = await eventually(async () => {
      const d = await swagger();
      return d.definitions['com.example.toys.v1.Gadget'] ? d : undefined;
    }, 'the Gadget definition');
    const gadget = doc.definitions['com.example.toys.v1.Gadget'];
    expect(gadget?.['x-kubernetes-group-version-kind']).to.deep.equal([{ group: 'toys.example.com', version: 'v1', kind: 'Gadget' }]);
    expect(gadget?.properties?.metadata).to.deep.include({ $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' });
    expect(gadget?.properties?.spec).to.deep.equal({
      type: 'object',
      description: 'What the gadget should be.',
      properties: { size: { type: 'integer', description: 'How big.' }, color: { type: 'string' } },
    });
    const item = doc.paths['/apis/toys.example.com/v1/namespaces/{namespace}/gadgets/{name}'];
    expect(item?.patch?.consumes).to.not.include('application/strategic-merge-patch+json');
    expect(doc.paths['/apis/toys.example.com/v1/namespaces/{namespace}/gadgets/{name}/status']).to.have.property('patch');
    expect((await get('application/json')).etag).to.not.equal(before);

    await c.ext.deleteCustomResourceDefinition({ name: 'gadgets.toys.example.com' });
    await eventually(async () => !(await swagger()).definitions['com.example.toys.v1.Gadget'], 'the Gadget definition gone');
    expect(Object.keys((await swagger()).paths).filter((p) => p.includes('toys.example.com'))).to.deep.equal([]);
  });

  describe('kubectl v1.32', function () {
    let session: KubectlSession;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
      session = await kubectlSession(c.server);
    });
    after(async () => {
      await session?.close();
    });
    const kubectl = (...args: string[]): Promise<string> => session.kubectl(...args);

    it('explain deployment.spec --output=plaintext-openapiv2 reads the protobuf document', async () => {
      const out = await kubectl('explain', 'deployment.spec', '--output=plaintext-openapiv2');
      expect(out).to.match(/^KIND:\s+Deployment$/m);
      expect(out).to.match(/^VERSION:\s+apps\/v1$/m);
      expect(out).to.match(/^\s+replicas\s+<integer>$/m);
      expect(out).to.match(/^\s+template\s+<Object> -required-$/m);
    });

    it("explain of a CRD's field, and apply of a custom resource still sends a merge patch (the CRD's PATCH has no strategic merge)", async () => {
      await c.ext.createCustomResourceDefinition({ body: { ...gadgetCrd, metadata: { name: 'gadgets.toys.example.com' } } });
      await eventually(async () => (await kubectl('api-resources', '--api-group=toys.example.com')).includes('gadgets'), 'gadgets served');
      const out = await eventually(async () => {
        const text = await kubectl('explain', 'gadget.spec', '--output=plaintext-openapiv2').catch(() => '');
        return text.includes('KIND:') ? text : undefined;
      }, 'explain gadget.spec');
      expect(out).to.match(/^\s+size\s+<integer>$/m);
      expect(out).to.contain('How big.');
      const file = join(session.dir, 'gadget.yaml');
      await writeFile(file, 'apiVersion: toys.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 1}\n');
      await kubectl('apply', '-f', file);
      await writeFile(file, 'apiVersion: toys.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 2, color: red}\n');
      const { stderr } = await session.kubectlOutput('apply', '-f', file, '-v=8');
      expect(stderr).to.match(/GET .*\/openapi\/v2/);
      expect(stderr).to.match(/Content-Type: application\/merge-patch\+json/);
      expect(await kubectl('get', 'gadget', 'g', '-o', 'jsonpath={.spec.size}/{.spec.color}')).to.equal('2/red');
    });

    it('explain of a CRD kind (OpenAPI v3) lists apiVersion, kind and metadata, and explains metadata, as the real server publishes them', async () => {
      await c.ext
        .createCustomResourceDefinition({ body: { ...gadgetCrd, metadata: { name: 'gadgets.toys.example.com' } } })
        .catch((err: { code?: number }) => {
          if (err.code !== 409) throw err;
        });
      const root = await eventually(async () => {
        const text = await kubectl('explain', 'gadget').catch(() => '');
        return text.includes('FIELDS:') ? text : undefined;
      }, 'explain gadget');
      expect(root).to.match(/^\s+apiVersion\s+<string>$/m);
      expect(root).to.match(/^\s+kind\s+<string>$/m);
      expect(root).to.match(/^\s+metadata\s+<ObjectMeta>$/m);
      expect(root).to.match(/^\s+spec\s+<Object>$/m);
      const meta = await kubectl('explain', 'gadget.metadata.labels');
      expect(meta).to.match(/^FIELD: labels <map\[string\]string>$/m);
    });
  });
});
