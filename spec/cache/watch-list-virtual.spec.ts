import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { reflector, type ReflectorMessage } from '../../lib/cache/reflector.js';
import { configMapAt, FakeListWatch, GONE_EVENT, httpError, virtualClock } from './fake-list-watch.js';

const LIST_TIMEOUT_MS = 60_000;
const endBookmark = (resourceVersion: string) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
});

describe('cache/reflector: streamed lists (watch-list) in virtual time', () => {
  let subscription: Subscription | undefined;
  afterEach(() => subscription?.unsubscribe());

  async function start(watchList = true) {
    const clock = virtualClock();
    const client = new FakeListWatch(clock);
    client.watchList = watchList;
    const messages: ReflectorMessage<KubernetesObject>[] = [];
    subscription = reflector(client, {
      scope: { namespace: 'default' },
      timeoutSeconds: 290,
      deadMarginMs: 30_000,
      listTimeoutMs: LIST_TIMEOUT_MS,
      scheduler: clock.scheduler,
      random: () => 0,
      describe: 'ConfigMap in default',
    }).subscribe((message) => messages.push(message));
    await clock.settle();
    const summary = () =>
      messages.map((m) =>
        m.type === 'listItem' || m.type === 'event'
          ? `${m.type} ${m.object.metadata?.name}`
          : 'resourceVersion' in m
            ? `${m.type} ${m.resourceVersion}`
            : m.type,
      );
    return { clock, client, messages, summary };
  }

  it('ES9: asks for a watch-list (sendInitialEvents, no resourceVersion), streams the objects as list items, and resumes from the closing bookmark', async () => {
    const { clock, client, summary } = await start();
    expect(client.listCalls).to.have.length(0);
    expect(client.lastWatch.request).to.deep.include({ sendInitialEvents: true, resourceVersion: '' });
    client.lastWatch.event('ADDED', configMapAt('default', 'b', '7'));
    client.lastWatch.event('ADDED', configMapAt('default', 'a', '5'));
    client.lastWatch.event('BOOKMARK', endBookmark('9'));
    client.lastWatch.event('MODIFIED', configMapAt('default', 'a', '10'));
    client.lastWatch.end();
    await clock.settle();
    expect(summary()).to.deep.equal(['watching ', 'listStart', 'listItem b', 'listItem a', 'listEnd 9', 'event a', 'watching 10']);
    expect(client.watchCalls.map((w) => [w.request.resourceVersion, w.request.sendInitialEvents === true])).to.deep.equal([
      ['', true],
      ['10', false],
    ]);
  });

  it('ES9: a stream that breaks before its closing bookmark lists again (its objects are no resume point)', async () => {
    const { clock, client } = await start();
    client.lastWatch.event('ADDED', configMapAt('default', 'a', '5'));
    client.lastWatch.end(httpError(410));
    await clock.settle();
    expect(client.watchCalls.map((w) => [w.request.resourceVersion, w.request.sendInitialEvents === true])).to.deep.equal([
      ['', true],
      ['', true],
    ]);
    client.lastWatch.event('ERROR', GONE_EVENT);
    await clock.settle();
    expect(client.watchCalls).to.have.length(3);
    expect(client.lastWatch.request.sendInitialEvents).to.equal(true);
  });

  it('ES9: a server that refuses it (422) gets paged lists from then on', async () => {
    const { clock, client, summary } = await start();
    client.lastWatch.end(httpError(422));
    await clock.settle();
    expect(client.listCalls).to.have.length(1);
    client.lastWatch.end(httpError(410)); // the watch after the list: 410, list again, never a watch-list
    await clock.settle();
    expect(client.listCalls).to.have.length(2);
    expect(client.watchCalls.map((w) => w.request.sendInitialEvents === true)).to.deep.equal([true, false, false]);
    expect(summary().filter((s) => s.startsWith('list'))).to.deep.equal(['listed 1', 'listed 1']);
  });

  it('ES9: a server that ignores it (the stream ends, or the list timeout passes, without the closing bookmark) gets paged lists', async () => {
    const ended = await start();
    ended.client.lastWatch.event('ADDED', configMapAt('default', 'a', '5'));
    ended.client.lastWatch.end();
    await ended.clock.settle();
    expect(ended.client.listCalls, 'after a stream that ended without its bookmark').to.have.length(1);
    subscription?.unsubscribe();

    const silent = await start();
    silent.client.lastWatch.event('ADDED', configMapAt('default', 'a', '5'));
    await silent.clock.advance(LIST_TIMEOUT_MS - 1);
    expect(silent.client.listCalls).to.have.length(0);
    await silent.clock.advance(1);
    expect(silent.client.listCalls, 'at the list timeout').to.have.length(1);
    expect(silent.client.watchCalls[0]!.closed).to.equal(true);
  });

  it('ES9: a client that cannot ask for watch-lists, or an informer that does not want them, lists', async () => {
    const { client } = await start(false);
    expect(client.listCalls).to.have.length(1);
    expect(client.watchCalls.every((w) => w.request.sendInitialEvents !== true)).to.equal(true);
  });
});
