import { expect } from 'chai';
import { consistently } from './wait.js';
import { failure, raw, RecordingWatch, startWithClients, eventually, type Clients } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';

/** A deterministic random source (for `fraction`). */
function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

describe('apiserver: fault injection', () => {
  let c: Clients;
  beforeEach(async () => {
    c = await startWithClients({ random: sequence([0.1, 0.9]) });
  });
  afterEach(async () => {
    await c.server.close();
  });

  const createCm = (name: string) => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });

  it('answers a chosen status for matching requests, count times, then removes itself', async () => {
    const fault = c.server.faults.failRequests({ verb: 'create', resource: 'configmaps', status: 500, count: 2 });
    const first = await failure(createCm('f1'));
    expect(first.code).to.equal(500);
    expect(first.status).to.include({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect((await failure(createCm('f1'))).code).to.equal(500);
    const created = await createCm('f1');
    expect(created.metadata?.name).to.equal('f1');
    expect(fault.hits).to.equal(2);
    expect(c.server.faults.active).to.deep.equal([]);
  });

  it('rejects a malformed fault when it is added, naming the field and the value, and keeps serving', async () => {
    const f = c.server.faults;
    const bad: [() => unknown, RegExp][] = [
      [
        () => f.failRequests({ resource: /configmaps/ as unknown as string, status: 500 }),
        /faults.failRequests: resource must be a non-empty string, got the RegExp \/configmaps\/.*use path for a RegExp/,
      ],
      [() => f.failRequests({ verb: 'post' as 'create', status: 500 }), /verb must be one of get, list, .*got "post"/],
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it 'GET' does not type-check, and the wrong case is the point
      [() => f.failRequests({ verb: ['list', 'GET' as 'get'], status: 500 }), /verb must be one of .*got "GET"/],
      [() => f.failRequests({ resources: 'configmaps', status: 500 } as unknown as { status: number }), /unknown field 'resources'/],
      [() => f.failRequests({ path: 42 as unknown as string, status: 500 }), /path must be a string or a RegExp, got 42/],
      [() => f.failRequests({ status: 500, delayMs: Number.NaN }), /delayMs must be a finite number >= 0, got NaN/],
      [() => f.failRequests({ status: 503, retryAfterSeconds: 1.5 }), /retryAfterSeconds must be an integer >= 0, got 1.5/],
      [() => f.stallWatches({ resource: /configmaps/ as unknown as string }), /faults.stallWatches: resource must be a non-empty string/],
      [() => f.dropWatches({ name: 'x' } as unknown as { resource: string }), /faults.dropWatches: unknown field 'name'/],
    ];
    for (const [add, message] of bad) expect(add).to.throw(TypeError, message);
    expect(f.active).to.deep.equal([]);
    expect((await createCm('still-served')).metadata?.name).to.equal('still-served');
  });

  it('matches verb, resource, namespace, name and path; others pass', async () => {
    await createCm('target');
    await createCm('bystander');
    c.server.faults.failRequests({ verb: 'update', resource: 'configmaps', name: 'target', status: 409 });
    c.server.faults.failRequests({ path: /\/secrets/, status: 503 });
    const target = await c.core.readNamespacedConfigMap({ name: 'target', namespace: 'default' });
    const conflict = await failure(c.core.replaceNamespacedConfigMap({ name: 'target', namespace: 'default', body: target }));
    expect(conflict.code).to.equal(409);
    expect(conflict.status.reason).to.equal('Conflict');
    const other = await c.core.readNamespacedConfigMap({ name: 'bystander', namespace: 'default' });
    await c.core.replaceNamespacedConfigMap({ name: 'bystander', namespace: 'default', body: { ...other, data: { x: 'y' } } });
    const secrets = await raw(c.server, 'GET', '/api/v1/namespaces/default/secrets');
    expect(secrets.status).to.equal(503);
    expect(secrets.headers['retry-after']).to.equal('1');
  });

  it('meets a watch-list (sendInitialEvents) with a fault or a count aimed at lists: it is the list the client asked for, streamed', async () => {
    const fault = c.server.faults.failRequests({ verb: 'list', resource: 'configmaps', status: 503, count: 1 });
    const streamed = await raw(
      c.server,
      'GET',
      `${CMS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`,
    );
    expect(streamed.status).to.equal(503);
    expect(fault.hits).to.equal(1);
    const plain = await raw(c.server, 'GET', `${CMS}?watch=true&timeoutSeconds=1`);
    expect(plain.status, 'a plain watch is no list').to.equal(200);
    expect(c.server.requests.count({ verb: 'list', resource: 'configmaps' })).to.equal(1);
    expect(c.server.requests.count({ verb: 'watch', resource: 'configmaps' })).to.equal(2);
  });

  it('answers 429 TooManyRequests with Retry-After', async () => {
    c.server.faults.failRequests({ verb: 'list', resource: 'configmaps', status: 429, retryAfterSeconds: 3 });
    const res = await raw(c.server, 'GET', CMS);
    expect(res.status).to.equal(429);
    expect(res.headers['retry-after']).to.equal('3');
    expect(res.json).to.deep.include({ reason: 'TooManyRequests', code: 429 });
    expect((res.json as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds).to.equal(3);
  });

  it('affects a fraction of matching requests', async () => {
    const fault = c.server.faults.failRequests({ verb: 'get', resource: 'configmaps', status: 500, fraction: 0.5 });
    await createCm('frac');
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await raw(c.server, 'GET', `${CMS}/frac`)).status);
    expect(codes).to.deep.equal([500, 200, 500, 200]);
    expect(fault.hits).to.equal(2);
  });

  it('adds latency: a delayed request answers after an undelayed one sent later', async () => {
    await createCm('slow');
    c.server.faults.delayRequests({ verb: 'get', name: 'slow', delayMs: 200 });
    const order: string[] = [];
    const slow = raw(c.server, 'GET', `${CMS}/slow`).then((r) => order.push(`slow ${r.status}`));
    await new Promise((r) => setImmediate(r));
    const fast = raw(c.server, 'GET', CMS).then((r) => order.push(`fast ${r.status}`));
    await Promise.all([slow, fast]);
    expect(order).to.deep.equal(['fast 200', 'slow 200']);
  });

  it('answers 410 to a watch as an ERROR event', async () => {
    c.server.faults.failRequests({ verb: 'watch', resource: 'configmaps', status: 410 });
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: '1' });
    await w.waitFor((e) => e.length === 1, 'the ERROR event');
    expect(w.events[0]?.type).to.equal('ERROR');
    expect(w.events[0]?.object).to.include({ reason: 'Expired', code: 410 });
  });

  it('drops open watches that match (the client sees the stream end)', async () => {
    const cms = await RecordingWatch.start(c.kc, CMS);
    const secrets = await RecordingWatch.start(c.kc, '/api/v1/namespaces/default/secrets');
    await eventually(() => c.server.stats().watches === 2, 'two watches');
    expect(c.server.faults.dropWatches({ resource: 'configmaps' })).to.equal(1);
    expect(await cms.ended()).to.equal(null);
    expect(secrets.done).to.equal(undefined);
    expect(c.server.stats().watches).to.equal(1);
    secrets.stop();
  });

  it('drops abruptly (connection reset) when asked', async () => {
    const w = await RecordingWatch.start(c.kc, CMS);
    await eventually(() => c.server.stats().watches === 1, 'the watch');
    c.server.faults.dropWatches({}, { abrupt: true });
    const err = await w.ended();
    expect(err).to.be.instanceOf(Error);
  });

  it('stalls matching watches (open, silent) until the fault is removed', async () => {
    const w = await RecordingWatch.start(c.kc, CMS, {
      resourceVersion: String(c.server.stats().resourceVersion),
      allowWatchBookmarks: true,
    });
    await eventually(() => c.server.stats().watches === 1, 'the watch');
    const stall = c.server.faults.stallWatches({ resource: 'configmaps' });
    expect(stall.hits).to.equal(1);
    await createCm('during-stall');
    const probe = await RecordingWatch.start(c.kc, CMS, { resourceVersion: String(Number(c.server.stats().resourceVersion) - 1) });
    await probe.waitFor((e) => e.length === 1, 'an unstalled watch to see the change');
    expect(w.events).to.deep.equal([]);
    expect(w.done).to.equal(undefined);
    stall.remove();
    await w.waitFor((e) => e.length === 1, 'the held event after the stall');
    expect(w.summary()).to.deep.equal(['ADDED during-stall']);
    w.stop();
    probe.stop();
  });

  it('issue 9: silences a watch past its timeoutSeconds (no events, no bookmarks, no close); then it sends what it held and closes', async () => {
    const none = c.server.faults.silenceWatches({ resource: 'configmaps', forMs: 1 }); // nothing open yet: no hits
    expect(none.hits).to.equal(0);
    const rv = String(c.server.stats().resourceVersion);
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 1 });
    await eventually(() => c.server.stats().watches === 1, 'the watch');
    const fault = c.server.faults.silenceWatches({ resource: 'configmaps', forMs: 60_000 });
    expect(fault.hits).to.equal(1);
    await createCm('during-silence');
    // Past the watch's 1 s timeout: nothing sent, and still open.
    await consistently(
      () => `a silent, open watch (events: ${JSON.stringify(w.summary())}, done: ${String(w.done)})`,
      () => w.events.length === 0 && w.done === undefined,
      1_500,
    );
    expect(c.server.stats().watches).to.equal(1);
    fault.remove(); // the silence ends (as it does after forMs)
    expect(await w.ended(), 'closed normally, its timeout having passed').to.equal(null);
    expect(w.summary()).to.deep.equal(['ADDED during-silence']);
  });

  it('issue 9: a silence ends by itself after forMs; a watch whose timeout has not passed stays open', async () => {
    const rv = String(c.server.stats().resourceVersion);
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: rv, timeoutSeconds: 30 });
    await eventually(() => c.server.stats().watches === 1, 'the watch');
    c.server.faults.silenceWatches({ resource: 'configmaps', forMs: 300 });
    await createCm('held');
    await w.waitFor((e) => e.length === 1, 'the held event after the silence');
    expect(w.summary()).to.deep.equal(['ADDED held']);
    expect(w.done).to.equal(undefined);
    w.stop();
  });

  it('rejects a silence without a positive duration', () => {
    expect(() => c.server.faults.silenceWatches({ forMs: 0 })).to.throw(/forMs/);
  });

  it('compacts history: resuming from before gets 410', async () => {
    const cm = await createCm('compacted');
    await createCm('after');
    c.server.faults.compact();
    const w = await RecordingWatch.start(c.kc, CMS, { resourceVersion: cm.metadata?.resourceVersion });
    await w.waitFor((e) => e.length === 1, 'the ERROR event');
    expect(w.events[0]?.object).to.include({ code: 410 });
  });

  it('removes faults one by one, or all with clear()', async () => {
    const a = c.server.faults.failRequests({ verb: 'list', status: 500 });
    c.server.faults.failRequests({ verb: 'get', status: 500 });
    a.remove();
    expect((await raw(c.server, 'GET', CMS)).status).to.equal(200);
    c.server.faults.clear();
    await createCm('cleared');
    expect((await raw(c.server, 'GET', `${CMS}/cleared`)).status).to.equal(200);
  });

  it('rejects a fault without an effect or with a bad fraction', () => {
    expect(() => c.server.faults.failRequests({ verb: 'get' })).to.throw(TypeError, /status/);
    expect(() => c.server.faults.failRequests({ status: 500, fraction: 2 })).to.throw(TypeError, /fraction/);
    expect(() => c.server.faults.failRequests({ status: 200 })).to.throw(TypeError, /400-599/);
  });
});
