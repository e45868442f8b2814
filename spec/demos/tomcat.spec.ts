/** The Tomcat operator (two controllers in one operator) against the embedded API server. */
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ReconcileOutcome } from '../../lib/index.js';
import type { ResourceDescriptor } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import {
  CONFIGMAP,
  DEPLOYMENT,
  SERVICE,
  TOMCAT,
  TOMCAT_LABEL,
  tomcat,
  WEBAPP,
  webapp,
  type Tomcat,
  type Webapp,
  type WebappSpec,
} from '../../demos/tomcat/model.js';
import { runDemo } from '../../demos/tomcat/main.js';
import { crds, registerTomcatOperator } from '../../demos/tomcat/operator.js';

const shop = (overrides: Partial<WebappSpec> = {}) =>
  webapp('shop', { tomcat: 'main', url: 'https://example.com/shop.war', contextPath: '/shop', ...overrides });
const blog = webapp('blog', { tomcat: 'main', url: 'https://example.com/blog.war', contextPath: '/blog' });
const mainTomcat = (replicas = 1, version = '10.1') => tomcat('main', { version, replicas });

describe('demo tomcat (Tomcat and Webapp controllers in one operator)', () => {
  let cluster: TestCluster;
  let webappRuns: ReconcileOutcome[];
  let tomcatRuns: ReconcileOutcome[];

  beforeEach(async () => {
    cluster = await startTestCluster({ crds, simulate: { deployments: { readyAfterMs: 50 } } });
    const operator = cluster.operator();
    const { tomcats, webapps } = registerTomcatOperator(operator);
    webappRuns = [];
    tomcatRuns = [];
    webapps.outcome$.subscribe((o) => webappRuns.push(o));
    tomcats.outcome$.subscribe((o) => tomcatRuns.push(o));
    await operator.start();
  });
  afterEach(() => cluster.close());

  const get = <T extends KubernetesObject>(resource: ResourceDescriptor, name: string) =>
    cluster.client.resource<T>(resource).find({ name, namespace: 'default' });

  const webappWhere = (name: string, what: string, check: (w: Webapp) => boolean) => {
    let last: Webapp | undefined;
    // The description is built at the timeout, so a failure shows the state it ended in.
    const describe = () =>
      `webapp ${name}: ${what} (last status ${JSON.stringify(last?.status)}, runs ${JSON.stringify(runsOf(name).map((o) => `${o.result}:${o.cause.type}`))})`;
    return eventually(
      describe,
      async () => {
        last = await get<Webapp>(WEBAPP, name);
        return last && check(last) ? last : undefined;
      },
      10_000,
    );
  };
  const readyWebapp = (name: string) => webappWhere(name, 'ready', (w) => w.status?.ready === true);

  const runsOf = (name: string, runs = webappRuns) => runs.filter((o) => o.id.name === name);
  const fromTomcatSource = (o: ReconcileOutcome) => o.cause.type === 'event' && o.cause.source === 'tomcat' && !o.cause.primary;
  const noRetryNorRequestedReschedule = (o: ReconcileOutcome) => o.retry === undefined && o.reschedule?.reason !== 'requested';

  it('ES3: a Webapp created before its Tomcat reports the missing Tomcat, then deploys when the Tomcat is created', async () => {
    await cluster.apply(WEBAPP, shop());
    const waiting = await webappWhere('shop', 'an error in status', (w) => w.status?.errorMessage !== undefined);
    expect(waiting.status).to.deep.include({
      ready: false,
      errorMessage: "Tomcat 'main' not found in namespace 'default'; the Webapp is deployed when it is created",
    });
    expect(waiting.status?.deployedTo).to.equal(undefined);
    expect(await get(CONFIGMAP, 'shop-deployment'), 'nothing deployed yet').to.equal(undefined);
    // Waiting is not failing: nothing retries or polls; the Tomcat's creation is the trigger.
    expect(runsOf('shop').length).to.be.greaterThan(0);
    expect(runsOf('shop').every((o) => o.result === 'success' && noRetryNorRequestedReschedule(o))).to.equal(true);

    const created = await cluster.apply(TOMCAT, mainTomcat());
    const ready = await readyWebapp('shop');
    expect(ready.status).to.deep.include({ deployedTo: 'main', url: 'http://main/shop', ready: true });
    expect(ready.status?.errorMessage).to.equal(undefined);
    expect(ready.status?.observedGeneration).to.equal(ready.metadata?.generation);
    expect(runsOf('shop').some(fromTomcatSource), 'a run triggered by the Tomcat source').to.equal(true);

    const configMap = await get<V1ConfigMap>(CONFIGMAP, 'shop-deployment');
    expect(configMap?.data).to.deep.equal({ warUrl: 'https://example.com/shop.war', contextPath: '/shop' });
    expect(configMap?.metadata?.labels?.[TOMCAT_LABEL]).to.equal('main');
    expect(configMap?.metadata?.ownerReferences?.[0]).to.include({ kind: 'Webapp', name: 'shop', uid: ready.metadata?.uid });
    expect(created.metadata?.uid).to.be.a('string');
  });

  it('ES3: two Webapps on one Tomcat both become ready when the Tomcat does', async () => {
    await cluster.apply(TOMCAT, mainTomcat());
    await cluster.apply(WEBAPP, shop());
    await cluster.apply(WEBAPP, blog);
    const [shopReady, blogReady] = await Promise.all([readyWebapp('shop'), readyWebapp('blog')]);
    expect(shopReady.status).to.deep.include({ deployedTo: 'main', url: 'http://main/shop' });
    expect(blogReady.status).to.deep.include({ deployedTo: 'main', url: 'http://main/blog' });

    const main = await get<Tomcat>(TOMCAT, 'main');
    const { conditions, ...rest } = main?.status ?? {};
    expect(rest).to.deep.equal({ readyReplicas: 1, ready: true, observedGeneration: main?.metadata?.generation });
    expect(conditions).to.have.length(1);
    expect(conditions?.[0]).to.include({
      type: 'Ready',
      status: 'True',
      reason: 'DependentsReady',
      observedGeneration: main?.metadata?.generation,
    });
    const deployment = await get<V1Deployment>(DEPLOYMENT, 'main');
    expect(deployment?.spec?.replicas).to.equal(1);
    expect(deployment?.spec?.template.spec?.containers[0]?.image).to.equal('tomcat:10.1');
    for (const owned of [deployment, await get(SERVICE, 'main')]) {
      expect(owned?.metadata?.ownerReferences?.[0]?.uid, owned?.kind).to.equal(main?.metadata?.uid);
    }
  });

  it('ES3: a Tomcat spec change runs every Webapp naming it, which report ready again once it rolled out', async () => {
    await cluster.apply(TOMCAT, mainTomcat());
    await cluster.apply(WEBAPP, shop());
    await cluster.apply(WEBAPP, blog);
    await Promise.all([readyWebapp('shop'), readyWebapp('blog')]);

    const before = webappRuns.length;
    const changed = await cluster.apply(TOMCAT, mainTomcat(2, '11.0'));
    await eventually('both Webapps run by the Tomcat change', () =>
      ['shop', 'blog'].every((name) => runsOf(name, webappRuns.slice(before)).some(fromTomcatSource)),
    );
    await eventually('the Tomcat rolled out the new spec', async () => {
      const main = await get<Tomcat>(TOMCAT, 'main');
      const status = main?.status;
      return status?.observedGeneration === changed.metadata?.generation && status?.readyReplicas === 2 && status.ready === true;
    });
    const deployment = await get<V1Deployment>(DEPLOYMENT, 'main');
    expect(deployment?.spec?.replicas).to.equal(2);
    expect(deployment?.spec?.template.spec?.containers[0]?.image).to.equal('tomcat:11.0');
    await Promise.all([readyWebapp('shop'), readyWebapp('blog')]);
  });

  it('DR2: deleting a Webapp garbage-collects its deployment ConfigMap and leaves the others', async () => {
    await cluster.apply(TOMCAT, mainTomcat());
    await cluster.apply(WEBAPP, shop());
    await cluster.apply(WEBAPP, blog);
    await Promise.all([readyWebapp('shop'), readyWebapp('blog')]);

    await cluster.client.resource(WEBAPP).delete({ name: 'shop', namespace: 'default' });
    await eventually('the shop ConfigMap gone', async () => (await get(CONFIGMAP, 'shop-deployment')) === undefined);
    expect(await get(WEBAPP, 'shop')).to.equal(undefined);
    expect(await get(CONFIGMAP, 'blog-deployment')).to.not.equal(undefined);
    expect((await get<Webapp>(WEBAPP, 'blog'))?.status?.ready).to.equal(true);
  });

  it('UP4: an invalid Webapp spec gets a clear status error, deploys nothing and is not retried; the fix deploys it', async () => {
    await cluster.apply(TOMCAT, mainTomcat());
    await cluster.apply(WEBAPP, shop({ url: 'https://example.com/shop.zip', contextPath: 'shop' }));
    const broken = await webappWhere('shop', 'an error in status', (w) => w.status?.errorMessage !== undefined);
    expect(broken.status?.errorMessage).to.equal(
      `spec.url must be the URL of a .war file, got "https://example.com/shop.zip"; spec.contextPath must start with '/', got "shop"`,
    );
    expect(broken.status?.ready).to.equal(false);
    const failures = runsOf('shop').filter((o) => o.result === 'failure');
    expect(failures.length).to.be.greaterThan(0);
    expect(failures.every(noRetryNorRequestedReschedule), 'no retry scheduled').to.equal(true);
    expect(await get(CONFIGMAP, 'shop-deployment')).to.equal(undefined);

    await cluster.apply(WEBAPP, shop());
    const fixed = await readyWebapp('shop');
    expect(fixed.status?.errorMessage).to.equal(undefined);
    expect(await get(CONFIGMAP, 'shop-deployment')).to.not.equal(undefined);
  });

  it('WF2: a Webapp whose Tomcat is deleted is undeployed (reconcile precondition) and waits for it again', async () => {
    await cluster.apply(TOMCAT, mainTomcat());
    await cluster.apply(WEBAPP, shop());
    await readyWebapp('shop');

    await cluster.client.resource(TOMCAT).delete({ name: 'main', namespace: 'default' });
    await eventually('the shop ConfigMap deleted', async () => (await get(CONFIGMAP, 'shop-deployment')) === undefined);
    const waiting = await webappWhere('shop', 'the missing Tomcat reported', (w) =>
      /Tomcat 'main' not found/.test(w.status?.errorMessage ?? ''),
    );
    expect(waiting.status?.deployedTo).to.equal(undefined);

    await cluster.apply(TOMCAT, mainTomcat());
    await readyWebapp('shop');
    expect(await get(CONFIGMAP, 'shop-deployment')).to.not.equal(undefined);
  });
});

describe('demo tomcat main', () => {
  it('applies one Tomcat and two Webapps, prints each as it becomes ready, and returns', async () => {
    const lines: string[] = [];
    await runDemo({ readyAfterMs: 20, print: (line) => lines.push(line) });
    const ready = lines.filter((l) => / ready/.test(l)).map((l) => l.replace(/ after [\d.]+ s$/, ''));
    expect(ready).to.have.members([
      'tomcat/main ready: 2/2 replicas',
      'webapp/shop ready at http://main/shop (deployed to tomcat/main)',
      'webapp/blog ready at http://main/blog (deployed to tomcat/main)',
    ]);
  });
});
