/** The three WebPage variants pass one and the same test against the embedded API server. */
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ReconcileOutcome } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { CONFIGMAP, DEPLOYMENT, INGRESS, SERVICE, WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { variants } from '../../demos/webpage/variants.js';

const VALID = '<html><body><h1>Hi</h1></body></html>';

for (const [name, variant] of Object.entries(variants)) {
  describe(`demo webpage (${name}: ${variant.description})`, () => {
    let cluster: TestCluster;
    let outcomes: ReconcileOutcome[];

    beforeEach(async () => {
      cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 50 } } });
      const operator = cluster.operator();
      outcomes = [];
      operator.register(variant.reconciler, variant.config).outcome$.subscribe((o) => outcomes.push(o));
      await operator.start();
    });
    afterEach(() => cluster.close());

    const get = <T extends KubernetesObject>(
      resource: typeof CONFIGMAP | typeof DEPLOYMENT | typeof SERVICE | typeof INGRESS | typeof WEBPAGE,
      objectName: string,
    ) => cluster.client.resource<T>(resource).find({ name: objectName, namespace: 'default' });

    it('creates the ConfigMap, Deployment, Service and Ingress, reports ready, follows changes and is garbage-collected', async () => {
      const page = await cluster.apply(WEBPAGE, webPage('site', VALID, { exposed: true }));
      const ready = await eventually('site ready', async () => {
        const current = await get<WebPage>(WEBPAGE, 'site');
        return current?.status?.ready === true ? current : undefined;
      });
      expect(ready.status).to.include({ htmlConfigMap: 'site-html', ready: true });
      expect(ready.status?.observedGeneration).to.equal(ready.metadata?.generation);

      const configMap = await get<V1ConfigMap>(CONFIGMAP, 'site-html');
      expect(configMap?.data?.['index.html']).to.equal(VALID);
      const deployment = await get<V1Deployment>(DEPLOYMENT, 'site');
      expect(deployment?.spec?.template.spec?.volumes?.[0]?.configMap?.name).to.equal('site-html');
      for (const owned of [configMap, deployment, await get(SERVICE, 'site'), await get(INGRESS, 'site')]) {
        expect(owned?.metadata?.ownerReferences?.[0]?.uid, owned?.kind).to.equal(page.metadata?.uid);
      }

      await cluster.apply(WEBPAGE, webPage('site', VALID.replace('Hi', 'Changed'), { exposed: false }));
      await eventually('the Ingress deleted once exposed is false', async () => (await get(INGRESS, 'site')) === undefined);
      await eventually('the ConfigMap follows the HTML', async () =>
        (await get<V1ConfigMap>(CONFIGMAP, 'site-html'))?.data?.['index.html']?.includes('Changed'),
      );

      await cluster.client.resource(WEBPAGE).delete({ name: 'site', namespace: 'default' });
      await eventually('the page and its secondaries gone', async () =>
        (await Promise.all([get(WEBPAGE, 'site'), get(CONFIGMAP, 'site-html'), get(DEPLOYMENT, 'site'), get(SERVICE, 'site')])).every(
          (o) => o === undefined,
        ),
      );
    });

    it('puts a clear error for invalid HTML in status, writes no secondary and does not retry', async () => {
      await cluster.apply(WEBPAGE, webPage('broken', '<html><body><p>never closed</body></html>'));
      const status = await eventually('an error in status', async () => {
        const current = await get<WebPage>(WEBPAGE, 'broken');
        return current?.status?.errorMessage ? current.status : undefined;
      });
      expect(status.errorMessage).to.match(/spec\.html: <\/body> closes <p>/);
      expect(status.ready).to.equal(false);
      const failures = outcomes.filter((o) => o.id.name === 'broken' && o.result === 'failure');
      expect(failures.length).to.be.greaterThan(0);
      expect(
        failures.every((o) => o.retry === undefined),
        'no retry scheduled',
      ).to.equal(true);
      for (const [resource, objectName] of [
        [CONFIGMAP, 'broken-html'],
        [DEPLOYMENT, 'broken'],
        [SERVICE, 'broken'],
      ] as const) {
        expect(await get(resource, objectName), `${resource.kind} ${objectName}`).to.equal(undefined);
      }
    });
  });
}
