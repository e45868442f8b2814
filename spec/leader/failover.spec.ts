import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { createLeaderElector, type LeaderElector } from '../../lib/leader/index.js';
import { advance, FakeLeaseServer, unusedKubeConfig, type Link } from './fake-leases.js';

// The defaults: a 15 s lease, 10 s renew deadline, 2 s retry period (candidates poll every 2–4.4 s).
const LEASE_MS = 15_000;

/** Electors on one fake lease in virtual time; each has a link the test can cut. */
function cluster(options: { random?: () => number; latencyMs?: number } = {}) {
  const scheduler = new TestScheduler(() => undefined);
  const server = new FakeLeaseServer(scheduler, options.latencyMs ?? 5);
  const links = new Map<string, Link>();
  const electors = new Map<string, LeaderElector>();
  const elector = (name: string, extra: { releaseOnStop?: boolean } = {}) => {
    links.set(name, 'up');
    const e = createLeaderElector({
      kubeConfig: unusedKubeConfig,
      leaseName: 'op',
      leaseNamespace: 'default',
      identity: name,
      scheduler,
      random: options.random ?? (() => 0.999),
      leaseClient: server.client(() => links.get(name) ?? 'up'),
      ...extra,
    });
    electors.set(name, e);
    e.start();
    return e;
  };
  /** Virtual time of the last version `holder` stored, and of the first version a different holder stored after it. */
  const handover = (from: string) => {
    const lastRenewal = server.writes.filter((w) => w.holder === from).at(-1)?.at;
    const takeover = server.writes.find((w) => lastRenewal !== undefined && w.at > lastRenewal && w.holder !== from && w.holder !== '');
    return { lastRenewal, takeover };
  };
  const stopAll = async () => {
    for (const name of links.keys()) links.set(name, 'up');
    const stopping = Promise.all([...electors.values()].map((e) => e.stop()));
    await advance(scheduler, 1_000);
    await stopping;
  };
  return { scheduler, server, links, electors, elector, handover, stopAll };
}

describe('leader/failover in virtual time', () => {
  // Before the fix a candidate noticed a renewal up to one jittered poll (4.4 s) late and acquired at
  // its next poll after that: 15 s + up to 2 × 4.4 s.
  for (const killedAfterMs of [2_000, 2_700, 3_300, 4_100, 5_900]) {
    it(`OB4: a candidate takes over a dead leader's lease within lease + 1 s of its last renewal (killed at ${killedAfterMs} ms)`, async () => {
      const c = cluster();
      const a = c.elector('a');
      await advance(c.scheduler, 100);
      expect(a.isLeader).to.equal(true);
      const b = c.elector('b');
      await advance(c.scheduler, killedAfterMs);
      c.links.set('a', 'dead'); // SIGKILL: no more renewals, no release
      await advance(c.scheduler, 25_000);

      const { lastRenewal, takeover } = c.handover('a');
      expect(takeover?.holder).to.equal('b');
      const failover = (takeover?.at ?? Infinity) - (lastRenewal ?? 0);
      expect(failover, 'never before the lease expired').to.be.at.least(LEASE_MS);
      expect(failover).to.be.at.most(LEASE_MS + 1_000);
      expect(b.isLeader).to.equal(true);
      await c.stopAll();
    });
  }

  it('OB4: with several candidates and any jitter, exactly one takes over within lease + 1 s', async () => {
    let seed = 11;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const c = cluster({ random });
    c.elector('a');
    await advance(c.scheduler, 100);
    ['b', 'c', 'd'].forEach((n) => c.elector(n));
    const killed = new Set<string>();
    for (let trial = 0; trial < 3; trial++) {
      const leader = [...c.links.keys()].find((n) => c.server.holder === n) as string;
      await advance(c.scheduler, 3_000 + 700 * trial);
      c.links.set(leader, 'dead');
      killed.add(leader);
      await advance(c.scheduler, 17_000);
      const { lastRenewal, takeover } = c.handover(leader);
      const failover = (takeover?.at ?? Infinity) - (lastRenewal ?? 0);
      expect(failover, `trial ${trial}`).to.be.within(LEASE_MS, LEASE_MS + 1_000);
      const leaders = [...c.electors.values()].filter((e) => !killed.has(e.identity) && e.isLeader);
      expect(
        leaders.map((e) => e.identity),
        `trial ${trial}`,
      ).to.deep.equal([takeover?.holder]);
    }
    await c.stopAll();
  });

  it('OB4: a candidate acquires a released lease as soon as it sees the release', async () => {
    const c = cluster();
    const a = c.elector('a');
    await advance(c.scheduler, 100);
    const b = c.elector('b');
    await advance(c.scheduler, 3_000);
    const stopping = a.stop();
    await advance(c.scheduler, 100);
    await stopping;
    const released = c.server.writes.find((w) => w.holder === '');
    const { takeover } = c.handover('a');
    expect(released).to.not.equal(undefined);
    expect(takeover?.holder).to.equal('b');
    // the watch delivers the release after 5 ms; the read and the write take 5 ms each
    expect((takeover?.at ?? Infinity) - (released?.at ?? 0)).to.be.at.most(20);
    expect(b.isLeader).to.equal(true);
    await c.stopAll();
  });

  for (const link of ['failing', 'dead'] as const) {
    it(`OB4: a leader whose renewals ${link === 'failing' ? 'fail' : 'hang'} stops within the renew deadline of its last renewal, before the lease expires, and the candidate acquires only after it expired`, async () => {
      const c = cluster();
      const a = c.elector('a');
      await advance(c.scheduler, 100);
      const b = c.elector('b');
      let overlap = false;
      const check = () => {
        if (a.isLeader && b.isLeader) overlap = true;
      };
      a.isLeader$.subscribe(check);
      b.isLeader$.subscribe(check);
      const aStopped: number[] = [];
      a.isLeader$.subscribe((v) => !v && aStopped.push(c.scheduler.now()));
      await advance(c.scheduler, 2_500);
      c.links.set('a', link); // a is alive but its renewals fail or hang: it must step down by itself
      await advance(c.scheduler, 20_000);
      const { lastRenewal, takeover } = c.handover('a');
      expect(a.isLeader).to.equal(false);
      expect(aStopped.at(-1)).to.be.at.most((lastRenewal ?? 0) + 10_000); // the renew deadline
      expect(takeover?.holder).to.equal('b');
      expect((takeover?.at ?? 0) - (lastRenewal ?? 0)).to.be.within(LEASE_MS, LEASE_MS + 1_000);
      expect(overlap).to.equal(false);
      await c.stopAll();
    });
  }

  it('OB4: a candidate whose attempts on an expired lease fail keeps to the retry period (no busy loop)', async () => {
    const c = cluster();
    c.elector('a');
    await advance(c.scheduler, 100);
    c.elector('b');
    await advance(c.scheduler, 2_000);
    c.links.set('a', 'dead');
    await advance(c.scheduler, 14_000); // b's watch has seen a's last renewal
    c.links.set('b', 'failing');
    const before = c.server.requests;
    await advance(c.scheduler, 20_000);
    // b reads every 2–4.4 s; a is dead and only its pending requests remain
    expect(c.server.requests - before).to.be.at.most(12);
    expect(c.server.holder).to.equal('a');
    await c.stopAll();
  });

  it('OB4: a candidate whose watch silently died reopens it when a read shows what it missed, and still takes over within lease + 1 s', async () => {
    const c = cluster();
    c.elector('a');
    await advance(c.scheduler, 100);
    const b = c.elector('b');
    await advance(c.scheduler, 1_000);
    c.server.silenceWatches(); // b's watch: open, but nothing arrives any more
    await advance(c.scheduler, 10_000); // b's polls find renewals its watch did not deliver
    c.links.set('a', 'dead');
    await advance(c.scheduler, 20_000);
    const { lastRenewal, takeover } = c.handover('a');
    expect(takeover?.holder).to.equal('b');
    expect((takeover?.at ?? Infinity) - (lastRenewal ?? 0)).to.be.within(LEASE_MS, LEASE_MS + 1_000);
    expect(b.isLeader).to.equal(true);
    await c.stopAll();
  });

  // Before the overdue read, a renewal the silent watch missed was found by the next jittered poll,
  // up to 4.4 s later, and the lease was judged to expire that much later.
  // b polls at about 0.1, 4.5, 8.9 s (the longest jitter); a renews at about 0, 2, 4, 6, 8 s. The
  // watch goes silent at 4.6 s, after b's poll: a's renewal at 6 s reaches b only by a read.
  for (const killedAfterMs of [100, 1_500, 2_300, 3_300]) {
    it(`OB4: a candidate whose watch went silent just before the leader's last renewal still takes over within lease + 1 s (killed ${killedAfterMs} ms after)`, async () => {
      const c = cluster();
      c.elector('a');
      await advance(c.scheduler, 100);
      const b = c.elector('b');
      await advance(c.scheduler, 4_500); // b's watch has delivered a few renewals
      c.server.silenceWatches();
      await advance(c.scheduler, killedAfterMs);
      c.links.set('a', 'dead');
      await advance(c.scheduler, 25_000);

      const { lastRenewal, takeover } = c.handover('a');
      expect(takeover?.holder).to.equal('b');
      expect((takeover?.at ?? Infinity) - (lastRenewal ?? 0)).to.be.within(LEASE_MS, LEASE_MS + 1_000);
      expect(b.isLeader).to.equal(true);
      await c.stopAll();
    });
  }

  it('OB4: a candidate reads only when a renewal is overdue or its retry period is up, not more (a live watch costs no extra reads)', async () => {
    const c = cluster();
    c.elector('a');
    await advance(c.scheduler, 100);
    c.elector('b');
    await advance(c.scheduler, 1_000);
    const before = c.server.requests;
    await advance(c.scheduler, 22_000);
    // a: a read and a write every 2 s (22); b: a read every 4.4 s (5); the watch delivers the rest
    expect(c.server.requests - before).to.be.at.most(22 + 5 + 1);
    await c.stopAll();
  });

  it('OB4: a candidate whose read hung in a network cut abandons it at the renew deadline and takes over within lease + 1 s', async () => {
    const c = cluster();
    c.elector('a');
    await advance(c.scheduler, 100);
    const b = c.elector('b');
    await advance(c.scheduler, 1_000);
    c.links.set('b', 'dead'); // black hole: b's next read is never answered, its watch delivers nothing
    await advance(c.scheduler, 5_000);
    c.links.set('b', 'up'); // b's watch sees a's next renewal; its read still hangs
    await advance(c.scheduler, 2_500);
    c.links.set('a', 'dead');
    await advance(c.scheduler, 25_000);

    const { lastRenewal, takeover } = c.handover('a');
    expect(takeover?.holder).to.equal('b');
    expect((takeover?.at ?? Infinity) - (lastRenewal ?? 0)).to.be.within(LEASE_MS, LEASE_MS + 1_000);
    expect(b.isLeader).to.equal(true);
    await c.stopAll();
  });

  it('OB4: a candidate whose watch is cut still takes over by polling', async () => {
    const c = cluster();
    c.elector('a');
    await advance(c.scheduler, 100);
    const b = c.elector('b');
    await advance(c.scheduler, 1_000);
    c.links.set('a', 'dead');
    await advance(c.scheduler, 30_000);
    expect(b.isLeader).to.equal(true);
    await c.stopAll();
  });
});
