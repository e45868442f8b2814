/** Events: core v1 and events.k8s.io/v1 as two views of the same objects, as the real server has them. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { kubectlAvailable, raw, RecordingWatch, startWithClients, type Clients } from './helpers.js';

const CORE = '/api/v1/namespaces/default/events';
const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';

/** An events.k8s.io/v1 Event as client-go's new recorder writes it. */
function newEvent(name: string, regarding: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    eventTime: '2026-11-24T01:00:00.123456Z',
    reportingController: 'example.com/widget-controller',
    reportingInstance: 'widget-controller-host1',
    action: 'Reconcile',
    reason: 'ReconcileFailed',
    type: 'Warning',
    note: 'backend unavailable',
    regarding: { apiVersion: 'example.com/v1', namespace: 'default', ...regarding },
    ...extra,
  };
}

describe('apiserver: Events (core v1 and events.k8s.io/v1)', () => {
  let c: Clients;
  beforeEach(async () => {
    c = await startWithClients();
  });
  afterEach(() => c.server.close());

  const post = (path: string, body: unknown) => raw(c.server, 'POST', path, JSON.stringify(body));
  const get = async (path: string) =>
    (await raw(c.server, 'GET', path)).json as Record<string, unknown> & { items?: Record<string, unknown>[] };

  it('an Event written through events.k8s.io/v1 reads through core v1 with the fields the real conversion renames, and back', async () => {
    const created = await post(
      EVENTS,
      newEvent(
        'w1.1',
        { kind: 'Widget', name: 'w1', uid: 'u-1' },
        { series: { count: 3, lastObservedTime: '2026-11-24T01:05:00.000000Z' } },
      ),
    );
    expect(created.status, created.text).to.equal(201);
    const core = await get(`${CORE}/w1.1`);
    expect(core).to.deep.include({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { apiVersion: 'example.com/v1', namespace: 'default', kind: 'Widget', name: 'w1', uid: 'u-1' },
      message: 'backend unavailable',
      reportingComponent: 'example.com/widget-controller',
      reportingInstance: 'widget-controller-host1',
      series: { count: 3, lastObservedTime: '2026-11-24T01:05:00.000000Z' },
      eventTime: '2026-11-24T01:00:00.123456Z',
    });
    expect(core).to.not.have.any.keys('regarding', 'note', 'reportingController');

    const legacy = await post(CORE, {
      metadata: { name: 'w1.2' },
      involvedObject: { kind: 'Widget', name: 'w1', namespace: 'default' },
      reason: 'Scaled',
      message: 'scaled to 3',
      type: 'Normal',
      count: 4,
      firstTimestamp: '2026-11-24T01:00:00Z',
      lastTimestamp: '2026-11-24T01:10:00Z',
      source: { component: 'legacy-controller' },
    });
    expect(legacy.status, legacy.text).to.equal(201);
    const asNew = await get(`${EVENTS}/w1.2`);
    expect(asNew).to.deep.include({
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'Widget', name: 'w1', namespace: 'default' },
      note: 'scaled to 3',
      deprecatedCount: 4,
      deprecatedFirstTimestamp: '2026-11-24T01:00:00Z',
      deprecatedLastTimestamp: '2026-11-24T01:10:00Z',
      deprecatedSource: { component: 'legacy-controller' },
    });
    expect((await get(EVENTS)).items?.map((e) => e['metadata'])).to.have.length(2);
  });

  it('field selectors: involvedObject.* on core v1 and regarding.* on events.k8s.io, as kubectl describe asks', async () => {
    await post(EVENTS, newEvent('a.1', { kind: 'Widget', name: 'a', uid: 'u-a' }));
    await post(EVENTS, newEvent('b.1', { kind: 'Widget', name: 'b', uid: 'u-b' }));
    await post(EVENTS, newEvent('a.2', { kind: 'Gadget', name: 'a', uid: 'u-ga' }));
    const names = (list: { items?: Record<string, unknown>[] }) => list.items?.map((e) => (e['metadata'] as { name: string }).name).sort();
    // kubectl describe's query: name, namespace, kind and uid of the object.
    const describe = 'involvedObject.name=a,involvedObject.namespace=default,involvedObject.kind=Widget,involvedObject.uid=u-a';
    expect(names(await get(`${CORE}?fieldSelector=${encodeURIComponent(describe)}`))).to.deep.equal(['a.1']);
    expect(names(await get(`${EVENTS}?fieldSelector=${encodeURIComponent('regarding.name=a')}`))).to.deep.equal(['a.1', 'a.2']);
    expect(names(await get(`${EVENTS}?fieldSelector=${encodeURIComponent('regarding.kind=Gadget,type=Warning')}`))).to.deep.equal(['a.2']);
    expect(
      names(await get(`${CORE}?fieldSelector=${encodeURIComponent('reportingComponent=example.com/widget-controller')}`)),
    ).to.have.length(3);
    const wrong = await raw(c.server, 'GET', `${CORE}?fieldSelector=${encodeURIComponent('regarding.name=a')}`);
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('field label not supported: regarding.name');
  });

  it('a watch of either view sees the writes made through the other, in its own form and by its own selector', async () => {
    const watch = await RecordingWatch.start(c.kc, EVENTS, { fieldSelector: 'regarding.name=w' });
    try {
      await post(CORE, {
        metadata: { name: 'w.1' },
        involvedObject: { kind: 'Widget', name: 'w', namespace: 'default' },
        reason: 'Made',
        message: 'm',
        type: 'Normal',
      });
      await post(CORE, {
        metadata: { name: 'other.1' },
        involvedObject: { kind: 'Widget', name: 'other', namespace: 'default' },
        reason: 'Made',
        message: 'm',
        type: 'Normal',
      });
      const events = await watch.waitFor((e) => e.length >= 1, 'the ADDED event of w.1');
      expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).to.deep.equal(['ADDED w.1']);
      expect(events[0]?.object).to.deep.include({
        apiVersion: 'events.k8s.io/v1',
        note: 'm',
        regarding: { kind: 'Widget', name: 'w', namespace: 'default' },
      });
    } finally {
      watch.stop();
    }
  });

  it('a merge patch of series through events.k8s.io/v1 is what core v1 reads as series', async () => {
    await post(EVENTS, newEvent('w.1', { kind: 'Widget', name: 'w' }));
    const patched = await raw(
      c.server,
      'PATCH',
      `${EVENTS}/w.1`,
      JSON.stringify({ series: { count: 2, lastObservedTime: '2026-11-24T01:01:00.000000Z' } }),
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(patched.status, patched.text).to.equal(200);
    expect((patched.json as Record<string, unknown>)['note']).to.equal('backend unavailable');
    expect((await get(`${CORE}/w.1`))['series']).to.deep.equal({ count: 2, lastObservedTime: '2026-11-24T01:01:00.000000Z' });
  });

  it('events.k8s.io/v1 writes are validated as the real server validates them (422 naming each field)', async () => {
    const bad = newEvent(
      'bad.1',
      { kind: 'Widget', name: 'w' },
      {
        reportingController: 'not a name',
        reportingInstance: '',
        action: 'x'.repeat(129),
        reason: '',
        type: 'Bogus',
        note: 'n'.repeat(1025),
        eventTime: undefined,
        deprecatedCount: 2,
        series: { count: 1 },
      },
    );
    const res = await post(EVENTS, bad);
    expect(res.status).to.equal(422);
    const causes = ((res.json as { details: { causes: { field: string; message: string }[] } }).details.causes ?? []).map(
      (x) => `${x.field}: ${x.message}`,
    );
    expect(causes).to.deep.equal([
      "reportingController: Invalid value: \"not a name\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      'reportingInstance: Required value',
      'action: Invalid value: "": can have at most 128 characters',
      'reason: Required value',
      'note: Invalid value: "": can have at most 1024 characters',
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: Bogus',
      'count: Invalid value: "": needs to be unset',
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ]);
  });

  describe('with kubectl', function () {
    let dir: string;
    let kubeconfig: string;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    });
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rxkube-events-'));
      kubeconfig = join(dir, 'kubeconfig');
      await c.server.writeKubeconfig(kubeconfig);
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));
    const kubectl = async (...args: string[]) =>
      (await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 }))
        .stdout;

    it("kubectl get events shows the real columns, -o wide the count and source; describe lists the object's events with (xN over ...)", async () => {
      const cm = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'settings' }, data: { a: '1' } },
      });
      const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      const regarding = { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: cm.metadata?.uid ?? '' };
      await post(EVENTS, newEvent('settings.1', regarding, { eventTime: now, series: { count: 5, lastObservedTime: now } }));
      await post(EVENTS, newEvent('settings.2', regarding, { eventTime: now, type: 'Normal', reason: 'Synced', note: 'in sync' }));
      await post(EVENTS, newEvent('unrelated.1', { ...regarding, name: 'unrelated', uid: 'u-x' }, { eventTime: now, reason: 'Other' }));

      const table = (await kubectl('get', 'events', '--field-selector', 'involvedObject.name=settings', '--sort-by', '.reason'))
        .trim()
        .split('\n');
      expect(table[0]).to.match(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
      expect(table.slice(1).map((l) => l.split(/\s{2,}/).slice(1))).to.deep.equal([
        ['Warning', 'ReconcileFailed', 'configmap/settings', 'backend unavailable'],
        ['Normal', 'Synced', 'configmap/settings', 'in sync'],
      ]);
      const wide = await kubectl(
        'get',
        'events.events.k8s.io',
        '-o',
        'wide',
        '--field-selector',
        'regarding.name=settings,reason=ReconcileFailed',
      );
      expect(wide).to.match(/COUNT\s+NAME/);
      expect(wide).to.match(/example\.com\/widget-controller, widget-controller-host1\s+backend unavailable\s+\S+\s+5\s+settings\.1/);

      const describe = await kubectl('describe', 'configmap', 'settings');
      const events = describe.slice(describe.indexOf('Events:'));
      expect(events).to.match(/Warning\s+ReconcileFailed\s+\S+ \(x5 over \S+\)\s+example\.com\/widget-controller\s+backend unavailable/);
      expect(events).to.match(/Normal\s+Synced\s+\S+\s+example\.com\/widget-controller\s+in sync/);
      expect(events).to.not.contain('Other');
    });
  });
});
