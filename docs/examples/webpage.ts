// The WebPage operator of demos/webpage written three ways (docs/dependent-resources.md): by hand,
// with a managed workflow of dependents, and with a standalone workflow. The page's excerpts
// are the demo's own files (the docs check finds them there).
// `npx tsx --conditions=rxkube-source docs/examples/webpage.ts` runs the three against the embedded
// API server (the condition: rxkube from its sources, as the demo is). The demo is
// this repository's (demos/webpage); rxkube itself comes through the package's entry points, as
// in a project of yours.
import { eventually } from 'rxkube/testing';
import { startTestCluster } from 'rxkube/testing/cluster';
import { CONFIGMAP, DEPLOYMENT, INGRESS, SERVICE, WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { variants } from '../../demos/webpage/variants.js';

// The same script for each variant.
for (const [name, { reconciler, config }] of Object.entries(variants)) {
  const cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 100 } } });
  const operator = cluster.operator();
  operator.register(reconciler, config);
  await operator.start();
  const pages = cluster.client.resource<WebPage>(WEBPAGE);
  const statusOfPage = (page: string, done: (status: NonNullable<WebPage['status']>) => boolean) =>
    eventually(`${name}: ${page}`, async () => {
      const status = (await pages.find({ name: page, namespace: 'default' }))?.status;
      return status && done(status) ? status : undefined;
    });
  const names = async () => {
    const kinds = await Promise.all(
      [CONFIGMAP, DEPLOYMENT, SERVICE, INGRESS].map(async (resource) =>
        (await cluster.client.resource(resource).list({ namespace: 'default' })).items.map((o) => `${resource.kind} ${o.metadata!.name}`),
      ),
    );
    return kinds.flat().join(', ');
  };

  await cluster.apply(WEBPAGE, webPage('hello', '<html><body><h1>Hello</h1></body></html>', { exposed: true }));
  console.log(`${name}: hello ${JSON.stringify(await statusOfPage('hello', (s) => s.ready === true))}; ${await names()}`);
  await cluster.apply(WEBPAGE, webPage('hello', '<html><body><h1>Hello</h1></body></html>', { exposed: false }));
  await eventually(`${name}: ingress deleted`, async () => (await cluster.client.resource(INGRESS).list()).items.length === 0);
  console.log(`${name}: not exposed; ${await names()}`);
  await cluster.apply(WEBPAGE, webPage('broken', '<html><body><p>never closed</body></html>'));
  console.log(`${name}: broken ${JSON.stringify(await statusOfPage('broken', (s) => s.errorMessage !== undefined))}`);
  await cluster.close();
}
