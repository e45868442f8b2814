import { expect } from 'chai';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createKubeClient } from '../../lib/kube/index.js';
import { Shard, shardingConfig, type ShardStatus } from '../../lib/sharding/index.js';
import { memberLeaseName } from '../../lib/sharding/shard.js';

// Short durations so the suite takes seconds (the lease is written as whole seconds: 2 s).
const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
const ids = Array.from({ length: 300 }, (_, i) => ({ name: `r${i}`, namespace: 'default' }));

function settledOn(shard: Shard, size: number): Promise<ShardStatus> {
  return firstValueFrom(
    shard.status$.pipe(
      filter((s) => s.member && s.settled && s.members.length === size),
      timeout(10_000),
    ),
  );
}

describe('sharding: members on the embedded server', function () {
  this.timeout(30_000);
  let server: ApiServer;
  const shards: Shard[] = [];

  before(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await Promise.all(shards.splice(0).map((s) => s.stop()));
  });
  after(async () => {
    await server.close();
  });

  function member(identity: string): Shard {
    const shard = new Shard(shardingConfig('web', { identity, ...TIMING }), { client: createKubeClient(server.kubeConfig()) });
    shards.push(shard);
    shard.start();
    return shard;
  }

  function owners(): Map<string, string[]> {
    const byId = new Map<string, string[]>();
    for (const id of ids)
      byId.set(
        id.name,
        shards.filter((s) => s.runnable(id)).map((s) => s.identity),
      );
    return byId;
  }

  it('SH1, SH2: three members agree on one view and split the resources, each to exactly one', async () => {
    const [a, b, c] = [member('a'), member('b'), member('c')];
    const views = await Promise.all([a, b, c].map((s) => settledOn(s, 3)));
    expect(new Set(views.map((v) => v.viewId)).size).to.equal(1);
    const byId = owners();
    expect([...byId.values()].every((o) => o.length === 1)).to.equal(true);
    const loads = ['a', 'b', 'c'].map((m) => [...byId.values()].filter((o) => o[0] === m).length);
    expect(Math.min(...loads)).to.be.greaterThan(60);
  });

  it('SH3: a member that leaves hands its resources over; one that joins takes about 1/N', async () => {
    const [a, b] = [member('a'), member('b')];
    await Promise.all([settledOn(a, 2), settledOn(b, 2)]);
    const c = member('c');
    await Promise.all([a, b, c].map((s) => settledOn(s, 3)));
    const withC = owners();
    expect([...withC.values()].every((o) => o.length === 1)).to.equal(true);
    const movedToC = [...withC.values()].filter((o) => o[0] === 'c').length;
    expect(movedToC / ids.length).to.be.within(0.2, 0.47);

    shards.splice(shards.indexOf(c), 1);
    await c.stop(); // deletes its lease: the others take over at once
    await Promise.all([settledOn(a, 2), settledOn(b, 2)]);
    expect([...owners().values()].every((o) => o.length === 1)).to.equal(true);
  });

  it('SH4: a member that stops renewing loses its resources within the lease duration plus 2 s', async () => {
    const [a, b] = [member('a'), member('b')];
    await Promise.all([settledOn(a, 2), settledOn(b, 2)]);
    // b is cut off: its renewals fail, its lease stays until it expires.
    server.faults.failRequests({ verb: 'update', resource: 'leases.coordination.k8s.io', name: memberLeaseName('web', 'b'), status: 503 });
    const cutAt = Date.now();
    await settledOn(a, 1);
    const takeoverMs = Date.now() - cutAt;
    // The lease is written as 2 s; b's last renewal was at most one retry period before the cut.
    expect(takeoverMs).to.be.below(2_000 + 2_000);
    expect(b.runnable(ids[0]) || ids.some((id) => b.runnable(id)), 'b stopped acting before a took over').to.equal(false);
    expect(ids.every((id) => a.runnable(id))).to.equal(true);
    server.faults.clear();
  });
});
