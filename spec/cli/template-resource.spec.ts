/**
 * The resource of the project `rxkube init` writes is defined once with `defineResource`: its
 * src/<kind>.ts, loaded as written, gives a CRD the embedded API server takes and enforces, and the
 * project depends on the TypeBox rxkube itself uses.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { expect } from 'chai';
import { templateFiles } from '../../lib/cli/template.js';
import { createKubeClient, installCustomResourceDefinition, type ResourceDescriptor } from '../../lib/kube/index.js';

const root = new URL('../../', import.meta.url).pathname;

interface ResourceModule {
  readonly webshopCrd: V1CustomResourceDefinition;
  readonly WEB_SHOP: ResourceDescriptor;
  webshop(name: string, spec: { name: string; salutation?: string }, namespace?: string): KubernetesObject;
}

describe('rxkube init: the resource defined once', () => {
  const files = templateFiles({
    name: 'shop-operator',
    group: 'shop.example.org',
    kind: 'WebShop',
    plural: 'webshops',
    rxkube: '^0.1.0',
    apiserver: '^0.1.0',
  });
  // Under the repository, so that 'rxkube/kube' and 'typebox' resolve as in a project (.tmp/ is not committed).
  const dir = join(root, '.tmp', `template-resource-${process.pid}`);
  let server: ApiServer;
  let module: ResourceModule;

  before(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'webshop.ts'), files['src/webshop.ts'] ?? '');
    module = (await import(pathToFileURL(join(dir, 'webshop.ts')).href)) as ResourceModule;
    server = await startApiServer();
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('depends on the typebox range rxkube depends on', () => {
    const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const project = JSON.parse(files['package.json'] ?? '{}') as { dependencies: Record<string, string> };
    expect(project.dependencies['typebox']).to.equal(own.dependencies['typebox']);
  });

  it('src/webshop.ts defines the resource with defineResource: its CRD, descriptor and sample builder', () => {
    expect(files['src/webshop.ts']).to.include('defineResource({').and.include("from 'typebox'");
    expect(module.WEB_SHOP).to.deep.equal({ apiVersion: 'shop.example.org/v1', kind: 'WebShop', plural: 'webshops', namespaced: true });
    expect(module.webshopCrd.metadata?.name).to.equal('webshops.shop.example.org');
    expect(module.webshopCrd.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources])).to.deep.equal([
      ['v1', true, true, { status: {} }],
    ]);
  });

  it('the embedded server installs its CRD, takes a valid object and rejects a spec the schema forbids', async () => {
    const client = createKubeClient(server.kubeConfig());
    await installCustomResourceDefinition(client, module.webshopCrd);
    const shops = client.resource(module.WEB_SHOP);
    const created = await shops.create(module.webshop('main', { name: 'world' }));
    expect(created.metadata?.name).to.equal('main');
    const rejected = await shops.create(module.webshop('empty', { name: '' })).then(
      () => 'created',
      (err: Error) => err.message,
    );
    expect(rejected).to.match(/spec\.name: Invalid value: "": spec\.name in body should be at least 1 chars long/);
  });
});
