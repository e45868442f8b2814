import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../lib/apiserver/index.js';
import { RecordingWatch, startWithClients, webPageCrd } from './helpers.js';

describe('apiserver: dataDir (state saved on close, loaded at start)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-data-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps objects, CRDs (served again) and the resourceVersion counter across restarts', async () => {
    const dataDir = join(dir, 'data');
    const first = await startWithClients({ dataDir });
    await first.ext.createCustomResourceDefinition({ body: webPageCrd() });
    const page = (await first.custom.createNamespacedCustomObject({
      group: 'sample.rxkube.dev',
      version: 'v1',
      namespace: 'default',
      plural: 'webpages',
      body: { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', metadata: { name: 'kept' }, spec: { title: 't' } },
    })) as { metadata: { uid: string; resourceVersion: string } };
    const rv = first.server.stats().resourceVersion;
    await first.server.close();

    const second = await startWithClients({ dataDir });
    try {
      const again = (await second.custom.getNamespacedCustomObject({
        group: 'sample.rxkube.dev',
        version: 'v1',
        namespace: 'default',
        plural: 'webpages',
        name: 'kept',
      })) as { metadata: { uid: string; resourceVersion: string } };
      expect(again.metadata).to.deep.include({ uid: page.metadata.uid, resourceVersion: page.metadata.resourceVersion });
      const cm = await second.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after-restart' } } });
      expect(Number(cm.metadata?.resourceVersion)).to.equal(rv + 1);
      // History did not survive: resuming a watch from before the restart is 410.
      const w = await RecordingWatch.start(second.kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: String(Number(page.metadata.resourceVersion) - 1) });
      await w.waitFor((e) => e.length === 1, 'the ERROR event');
      expect(w.events[0]?.object).to.include({ code: 410 });
    } finally {
      await second.server.close();
    }
  });

  it('refuses a data file that is not a saved state, naming the file', async () => {
    const bogus = join(dir, 'bogus.json');
    await writeFile(bogus, '{"hello": "world"}');
    let err: unknown;
    try {
      await startApiServer({ dataDir: bogus });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.contain(bogus);
  });
});
