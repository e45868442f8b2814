/** The WebPage demo seen through kubectl: `wait --for=condition=Ready` and the Events `describe` lists. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { variants } from '../../demos/webpage/variants.js';

const kubectlAvailable = (): Promise<boolean> =>
  new Promise((resolve) => execFile('kubectl', ['version', '--client'], { timeout: 20_000 }, (err) => resolve(!err)));

const BROKEN = '<html><body><p>never closed</body></html>';

describe('demo webpage with kubectl', function () {
  let cluster: TestCluster;
  let dir: string;
  let kubeconfig: string;
  before(async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
  });
  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 200 } } });
    const operator = cluster.operator();
    operator.register(variants.managed.reconciler, variants.managed.config);
    await operator.start();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-webpage-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    await cluster.server.writeKubeconfig(kubeconfig);
  });
  afterEach(async () => {
    await cluster?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const kubectl = async (...args: string[]) =>
    (await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 }))
      .stdout;

  it('kubectl wait --for=condition=Ready webpage/hello returns once the page is ready', async () => {
    await cluster.apply(WEBPAGE, webPage('hello', '<html><body><h1>Hello</h1></body></html>'));
    expect(await kubectl('wait', '--for=condition=Ready', 'webpage/hello', '--timeout=20s')).to.contain(
      'webpage.sample.rxkube.dev/hello condition met',
    );
    const ready = await cluster.client.resource<WebPage>(WEBPAGE).get({ name: 'hello', namespace: 'default' });
    expect(ready.status?.conditions?.[0]).to.include({ type: 'Ready', status: 'True', reason: 'DependentsReady', observedGeneration: 1 });
  });

  it('kubectl describe webpage hello shows the failed reconcile as a Warning with the error and a count', async () => {
    await cluster.apply(WEBPAGE, webPage('hello', BROKEN));
    const pages = cluster.client.resource<WebPage>(WEBPAGE);
    await eventually('the error in status', async () => (await pages.get({ name: 'hello', namespace: 'default' })).status?.errorMessage);
    // The same error again (a spec change that does not fix the HTML): counted, not a new Event.
    await cluster.apply(WEBPAGE, webPage('hello', BROKEN, { exposed: true }));
    await eventually('the second failure counted', async () => (await kubectl('describe', 'webpage', 'hello')).includes('(x2 over'));
    const described = await kubectl('describe', 'webpage', 'hello');
    const events = described.slice(described.indexOf('Events:')).split('\n');
    expect(events[1]).to.match(/^\s+Type\s+Reason\s+Age\s+From\s+Message$/);
    expect(events[3]).to.match(
      /^\s+Warning\s+ReconcileFailed\s+\S+ \(x2 over \S+\)\s+webpage\s+workflow reconcile failed for 1 dependent: 'configmap': spec\.html: <\/body> closes <p>$/,
    );
    expect(described).to.match(/Reason:\s+ReconcileFailed/);
    expect(described).to.match(/Type:\s+Ready/);
  });
});
