import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { Informer, type ReflectorFailure } from '../../lib/cache/index.js';
import { reflector, type ReflectorMessage, type ReflectorOptions } from '../../lib/cache/reflector.js';
import { configMapAt, FakeListWatch, GONE_EVENT, httpError, virtualClock, type VirtualClock } from './fake-list-watch.js';

/** The ES1 defaults an informer uses: 290 s watches, 30 s dead-watch margin, 60 s list timeout. */
const WATCH_SECONDS = 290;
const MARGIN_MS = 30_000;
const DEAD_AFTER_MS = WATCH_SECONDS * 1000 + MARGIN_MS;

interface Run {
  readonly clock: VirtualClock;
  readonly client: FakeListWatch;
  readonly messages: { at: number; message: ReflectorMessage<KubernetesObject> }[];
  readonly failures: { at: number; failure: ReflectorFailure }[];
  /** Subscribes the reflector (time 0) and lets the first list answer. */
  start(options?: Partial<ReflectorOptions>): Promise<void>;
}

describe('cache/reflector in virtual time (fake list+watch client)', () => {
  let subscription: Subscription | undefined;
  afterEach(() => subscription?.unsubscribe());

  function setup(): Run {
    const clock = virtualClock();
    const client = new FakeListWatch(clock);
    const run: Run = {
      clock,
      client,
      messages: [],
      failures: [],
      start: async (options = {}) => {
        subscription = reflector(client, {
          scope: { namespace: 'default' },
          timeoutSeconds: WATCH_SECONDS,
          deadMarginMs: MARGIN_MS,
          listTimeoutMs: 60_000,
          scheduler: clock.scheduler,
          random: () => 0,
          describe: 'ConfigMap in default',
          onFailure: (failure) => run.failures.push({ at: clock.now(), failure }),
          ...options,
        }).subscribe((message) => run.messages.push({ at: clock.now(), message }));
        await clock.settle();
      },
    };
    return run;
  }

  const watchesFrom = (client: FakeListWatch) => client.watchCalls.map((w) => ({ at: w.at, from: w.request.resourceVersion }));

  describe('ES1: a silent watch is dead at its timeout plus the dead-watch margin', () => {
    it('ES1: an open watch that stays silent is abandoned at timeoutSeconds + margin and resumed at once from its resourceVersion (a drop, not a failure)', async () => {
      const { clock, client, failures, start } = setup();
      client.defaultResourceVersion = '10';
      await start();
      expect(watchesFrom(client)).to.deep.equal([{ at: 0, from: '10' }]);
      expect(client.watchCalls[0]!.request.inactivityTimeoutMs, 'the client gives up on the connection at the same time').to.equal(
        DEAD_AFTER_MS,
      );

      await clock.advance(DEAD_AFTER_MS - 1);
      expect(client.watchCalls[0]!.closed, 'one ms before the margin').to.equal(false);
      await clock.advance(1);
      expect(client.watchCalls[0]!.closedAt).to.equal(DEAD_AFTER_MS);
      expect(watchesFrom(client)).to.deep.equal([
        { at: 0, from: '10' },
        { at: DEAD_AFTER_MS, from: '10' },
      ]);
      expect(
        failures.map(({ at, failure }) => ({
          at,
          dropped: failure.dropped,
          delayMs: failure.delayMs,
          name: (failure.error as Error).name,
        })),
      ).to.deep.equal([{ at: DEAD_AFTER_MS, dropped: true, delayMs: 0, name: 'WatchSilentError' }]);
      expect(client.listCalls, 'no relist for a dead watch').to.have.length(1);
    });

    it('ES1: every event or bookmark restarts the silence; the watch resumes from the newest resourceVersion', async () => {
      const { clock, client, start } = setup();
      await start();
      await clock.advance(100_000);
      client.lastWatch.event('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '5' } });
      await clock.advance(200_000);
      client.lastWatch.event('MODIFIED', configMapAt('default', 'a', '7'));
      await clock.advance(DEAD_AFTER_MS - 1);
      expect(client.watchCalls).to.have.length(1);
      await clock.advance(1);
      expect(watchesFrom(client)).to.deep.equal([
        { at: 0, from: '1' },
        { at: 300_000 + DEAD_AFTER_MS, from: '7' },
      ]);
    });

    it('ES1: a watch request that gets no answer within the margin is abandoned and backs off (a failure, not a drop)', async () => {
      const { clock, client, failures, start } = setup();
      client.watches.push('hang');
      await start();
      await clock.advance(MARGIN_MS);
      expect(
        failures.map(({ at, failure }) => ({ at, dropped: failure.dropped, delayMs: failure.delayMs, phase: failure.phase })),
      ).to.deep.equal([{ at: MARGIN_MS, dropped: false, delayMs: 800, phase: 'watch' }]);
      await clock.advance(800);
      expect(watchesFrom(client)).to.deep.equal([
        { at: 0, from: '1' },
        { at: MARGIN_MS + 800, from: '1' },
      ]);
    });
  });

  describe('ES1: 410 Gone', () => {
    it('ES1: an ERROR 410 on the watch relists at once, without a failure', async () => {
      const { clock, client, failures, messages, start } = setup();
      await start();
      await clock.advance(1_000);
      client.defaultResourceVersion = '20';
      client.lastWatch.event('ERROR', GONE_EVENT);
      await clock.settle();
      expect(client.listCalls.map((l) => l.at)).to.deep.equal([0, 1_000]);
      expect(watchesFrom(client)).to.deep.equal([
        { at: 0, from: '1' },
        { at: 1_000, from: '20' },
      ]);
      expect(failures).to.deep.equal([]);
      expect(messages.filter((m) => m.message.type === 'listed').map((m) => m.at)).to.deep.equal([0, 1_000]);
    });

    it('ES1: a 410 answered to the relist itself lists again at once: no failure, no backoff', async () => {
      const { clock, client, failures, start } = setup();
      await start();
      await clock.advance(1_000);
      client.lists.push(httpError(410, 'continue token expired'));
      client.lastWatch.end(httpError(410));
      await clock.advance(0);
      expect(
        client.listCalls.map((l) => l.at),
        'watch 410, relist 410, list again',
      ).to.deep.equal([0, 1_000, 1_000]);
      expect(client.watchCalls.map((w) => w.at)).to.deep.equal([0, 1_000]);
      expect(failures).to.deep.equal([]);
    });

    it('ES1: a second 410 in a row on the relist is a failure that backs off (no tight loop)', async () => {
      const { clock, client, failures, start } = setup();
      await start();
      client.lists.push(httpError(410), httpError(410));
      client.lastWatch.event('ERROR', GONE_EVENT);
      await clock.advance(0);
      expect(failures.map(({ failure }) => ({ phase: failure.phase, delayMs: failure.delayMs }))).to.deep.equal([
        { phase: 'list', delayMs: 800 },
      ]);
      await clock.advance(800);
      expect(client.listCalls.map((l) => l.at)).to.deep.equal([0, 0, 0, 800]);
    });
  });

  describe('ES1: backoff', () => {
    it('ES1: a dropped connection reconnects at once; if the reconnect fails it backs off 800, 1600, 3200 ms', async () => {
      const { clock, client, failures, start } = setup();
      await start();
      await clock.advance(5_000);
      client.watches.push(httpError(500), httpError(500), httpError(500));
      client.lastWatch.end(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      await clock.advance(10_000);
      expect(client.watchCalls.map((w) => w.at)).to.deep.equal([0, 5_000, 5_800, 7_400, 10_600]);
      expect(failures.map(({ failure }) => [failure.dropped, failure.delayMs])).to.deep.equal([
        [true, 0],
        [false, 800],
        [false, 1_600],
        [false, 3_200],
      ]);
      expect(client.listCalls, 'resumed from the resourceVersion: no relist').to.have.length(1);
    });

    it('ES1: a connection that drops within a second of opening backs off instead (no reconnect loop)', async () => {
      const { clock, client, failures, start } = setup();
      await start();
      await clock.advance(500);
      client.lastWatch.end(new Error('socket hang up'));
      await clock.advance(800);
      expect(failures.map(({ failure }) => [failure.dropped, failure.delayMs])).to.deep.equal([[false, 800]]);
      expect(client.watchCalls.map((w) => w.at)).to.deep.equal([0, 1_300]);
    });

    it('ES1: jitter: each delay lies within [d, 2d] (random 0 gives d, random → 1 gives almost 2d)', async () => {
      for (const [random, expected] of [
        [0, [800, 1_600, 3_200]],
        [0.5, [1_200, 2_400, 4_800]],
        [0.999, [1_599, 3_198, 6_397]],
      ] as const) {
        const { clock, client, failures, start } = setup();
        client.lists.push(httpError(500), httpError(500), httpError(500));
        await start({ random: () => random });
        await clock.advance(20_000);
        expect(
          failures.map(({ failure }) => failure.delayMs),
          `random ${random}`,
        ).to.deep.equal(expected);
        subscription?.unsubscribe();
      }
    });

    it('ES1: after 30 s of health the next failure starts again from 800 ms; 29 s of health keeps the backoff growing', async () => {
      for (const [healthyMs, expectedDelay] of [
        [30_000, 800],
        [29_000, 6_400],
      ] as const) {
        const { clock, client, failures, start } = setup();
        client.lists.push(httpError(500), httpError(500), httpError(500));
        await start();
        await clock.advance(800 + 1_600 + 3_200);
        expect(client.lastWatch.at, 'listed and watching after three failed lists').to.equal(5_600);
        await clock.advance(healthyMs);
        client.lastWatch.end(httpError(500, 'the watch answered an error'));
        await clock.settle();
        expect(
          failures.map(({ failure }) => failure.delayMs),
          `healthy for ${healthyMs} ms`,
        ).to.deep.equal([800, 1_600, 3_200, expectedDelay]);
        subscription?.unsubscribe();
      }
    });

    it('ES1: it never gives up: a list failing for an hour is retried at the 15–30 s cap, and the first success syncs', async () => {
      const { clock, client, failures, messages, start } = setup();
      for (let i = 0; i < 200; i++) client.lists.push(httpError(503));
      await start();
      await clock.advance(3_600_000);
      expect(failures.length).to.be.greaterThan(100);
      expect(Math.max(...failures.map(({ failure }) => failure.delayMs))).to.equal(15_000);
      client.lists.splice(0);
      await clock.advance(30_000);
      expect(messages.some((m) => m.message.type === 'listed')).to.equal(true);
    });
  });
});

describe('cache/Informer in virtual time (fake list+watch client)', () => {
  let inf: Informer | undefined;
  afterEach(() => inf?.stop());

  function setup() {
    const clock = virtualClock();
    const client = new FakeListWatch(clock);
    inf = new Informer({
      resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
      client,
      scheduler: clock.scheduler,
      random: () => 0,
      namespaces: ['default'],
    });
    const events: string[] = [];
    inf.events$.subscribe((e) => events.push(`${e.type} ${e.object.metadata?.name} ${e.object.metadata?.resourceVersion}`));
    const errors: number[] = [];
    inf.errors$.subscribe((e) => errors.push(e.delayMs));
    return { clock, client, inf, events, errors };
  }

  it('ES1: a 410 relists at once and emits the difference (adds, updates, deletes) with no failure and no unhealthy moment', async () => {
    const { clock, client, inf, events, errors } = setup();
    client.objects = [configMapAt('default', 'kept', '1'), configMapAt('default', 'changed', '1'), configMapAt('default', 'deleted', '1')];
    const health: boolean[] = [];
    inf.healthy$.subscribe((h) => health.push(h));
    inf.start();
    await clock.advance(0);
    client.objects = [configMapAt('default', 'kept', '1'), configMapAt('default', 'changed', '5'), configMapAt('default', 'new', '6')];
    client.defaultResourceVersion = '6';
    client.lastWatch.event('ERROR', GONE_EVENT);
    await clock.advance(0);
    expect(events.slice(3)).to.deep.equal(['modified changed 5', 'added new 6', 'deleted deleted 1']);
    expect(inf.status()[0]).to.include({ lists: 2, state: 'watching', resourceVersion: '6' });
    expect(errors).to.deep.equal([]);
    expect(health).to.deep.equal([true]);
  });

  it('ES1: a paged relist goes into the store page by page as the pages come, emitting the difference; what it did not bring is deleted at its end', async () => {
    const { clock, client, inf, events } = setup();
    client.pageSize = 2;
    client.objects = [configMapAt('default', 'a', '1'), configMapAt('default', 'b', '1'), configMapAt('default', 'gone', '1')];
    inf.start();
    await clock.advance(0);
    client.releasePage();
    await clock.advance(0);
    expect(inf.hasSynced()).to.equal(true);
    expect(inf.status()[0]).to.include({ lists: 1, state: 'watching', resourceVersion: '1' });
    client.objects = [configMapAt('default', 'a', '5'), configMapAt('default', 'b', '1'), configMapAt('default', 'new', '6')];
    client.defaultResourceVersion = '6';
    client.lastWatch.event('ERROR', GONE_EVENT);
    await clock.advance(0);
    // The first page is in the store before the second comes: the relist holds no list beside it.
    expect(events.slice(3)).to.deep.equal(['modified a 5']);
    expect(inf.store.get({ namespace: 'default', name: 'a' })?.metadata?.resourceVersion).to.equal('5');
    expect(inf.store.keys().sort()).to.deep.equal(['default/a', 'default/b', 'default/gone']);
    expect(inf.status()[0]).to.include({ lists: 1 });
    expect(inf.hasSynced()).to.equal(true);
    client.releasePage();
    await clock.advance(0);
    expect(events.slice(3)).to.deep.equal(['modified a 5', 'added new 6', 'deleted gone 1']);
    expect(inf.store.keys().sort()).to.deep.equal(['default/a', 'default/b', 'default/new']);
    expect(inf.status()[0]).to.include({ lists: 2, state: 'watching', resourceVersion: '6' });
    expect(client.watchCalls.at(-1)?.request.resourceVersion).to.equal('6');
  });

  it('ES1: a malformed item on a later page fails the paged list before its resourceVersion is taken: the next round lists again', async () => {
    const { clock, client, inf, errors } = setup();
    client.pageSize = 1;
    client.lists.push({ items: [configMapAt('default', 'a', '1'), { kind: 'ConfigMap' } as KubernetesObject], resourceVersion: '3' });
    inf.start();
    await clock.advance(0);
    client.releasePage();
    await clock.advance(0);
    expect(errors).to.have.length(1);
    expect(inf.hasSynced()).to.equal(false);
    await clock.advance(errors[0]!);
    client.releasePage();
    await clock.advance(0);
    expect(client.listCalls).to.have.length(2);
    expect(inf.hasSynced()).to.equal(true);
    expect(client.watchCalls.map((w) => w.request.resourceVersion)).to.deep.equal(['1']);
  });

  it('ES1, OB3: failing lists make it unhealthy, each failure reported with its delay; the first success makes it synced and healthy', async () => {
    const { clock, client, inf, errors } = setup();
    client.lists.push(httpError(500), httpError(503));
    inf.start();
    await clock.advance(0);
    expect(inf.isHealthy()).to.equal(false);
    expect(inf.hasSynced()).to.equal(false);
    await clock.advance(800 + 1_600);
    expect(errors).to.deep.equal([800, 1_600]);
    expect(inf.isHealthy() && inf.hasSynced()).to.equal(true);
  });

  it('ES1: a dropped or silent watch is resumed at once: counted in status().drops, healthy throughout, nothing reported on errors$', async () => {
    const { clock, client, inf, errors } = setup();
    const health: boolean[] = [];
    inf.healthy$.subscribe((h) => health.push(h));
    inf.start();
    await clock.advance(5_000);
    client.lastWatch.end(new Error('socket hang up'));
    await clock.advance(DEAD_AFTER_MS);
    expect(inf.status()[0]?.drops).to.equal(2);
    expect(client.watchCalls.map((w) => w.at)).to.deep.equal([0, 5_000, 5_000 + DEAD_AFTER_MS]);
    expect(errors).to.deep.equal([]);
    expect(health).to.deep.equal([true]);
  });
});
