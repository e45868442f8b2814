import { expect } from 'chai';
import { failoverAfter, maxConcurrentRuns, memoryTrend } from '../../bench/soak/analysis.js';

describe('soak/analysis', () => {
  it('counts runs of one resource that overlap, across operators; touching ends do not overlap', () => {
    const runs = [
      { name: 'a', by: 'op-1', start: 0, end: 10 },
      { name: 'a', by: 'op-2', start: 10, end: 20 },
      { name: 'b', by: 'op-1', start: 0, end: 10 },
    ];
    expect(maxConcurrentRuns(runs)).to.deep.equal({ max: 1, overlap: [] });
    const overlapping = [...runs, { name: 'a', by: 'op-3', start: 15, end: 16 }];
    expect(maxConcurrentRuns(overlapping).max).to.equal(2);
    expect(
      maxConcurrentRuns(overlapping)
        .overlap.map((r) => r.by)
        .sort(),
    ).to.deep.equal(['op-2', 'op-3']);
  });

  it('measures failover from the last renewal of the vanished holder to the next holder, as the server stored them', () => {
    const versions = [
      { holder: 'a', renewedAt: 0, seenAt: 5 },
      { holder: 'a', renewedAt: 2_000, seenAt: 2_030 },
      { holder: '', renewedAt: 2_500, seenAt: 2_505 },
      { holder: 'b', renewedAt: 17_010, seenAt: 17_020 },
    ];
    expect(failoverAfter(versions, 'a', 3_000)).to.deep.equal({
      newHolder: 'b',
      ms: 14_990,
      byRenewTimeMs: 15_010,
      lastRenewalSeenAt: 2_030,
    });
    // a holder that took its lease back had no failover
    expect(
      failoverAfter(
        [...versions.slice(0, 2), { holder: 'a', renewedAt: 9_000, seenAt: 9_005 }, { holder: 'b', renewedAt: 30_000, seenAt: 30_005 }],
        'a',
        3_000,
      ),
    ).to.equal(undefined);
    expect(failoverAfter(versions.slice(0, 2), 'a', 3_000)).to.equal(undefined);
  });

  it('gives a memory trend in MB per minute', () => {
    const MB = 1024 * 1024;
    const trend = memoryTrend([
      { at: 0, heapUsed: 10 * MB, rss: 100 * MB },
      { at: 60_000, heapUsed: 12 * MB, rss: 100 * MB },
    ]);
    expect(trend).to.include({ heapFirstMb: 10, heapLastMb: 12, heapSlopeMbPerMin: 2, rssSlopeMbPerMin: 0 });
    expect(memoryTrend([])).to.equal(undefined);
  });
});
