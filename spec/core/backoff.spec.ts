import { expect } from 'chai';
import { backoffDelay, WATCH_BACKOFF } from '../../lib/core/index.js';

describe('kube/backoff', () => {
  it('ES1 (issue 9): bases double from 800 ms up to 15 s, so that with 100 % jitter no delay passes 30 s; reset after 30 s of health', () => {
    const bases = Array.from({ length: 8 }, (_, i) => backoffDelay(i, {}, () => 0));
    expect(bases).to.deep.equal([800, 1600, 3200, 6400, 12800, 15000, 15000, 15000]);
    const highest = Array.from({ length: 8 }, (_, i) => backoffDelay(i, {}, () => 0.999999));
    expect(highest).to.deep.equal([1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
    expect(WATCH_BACKOFF.resetAfterMs).to.equal(30_000);
  });

  it('ES1 (issue 9): jitter stays visible at the cap (15–30 s) and never passes maxMs', () => {
    expect(backoffDelay(0, {}, () => 0.5)).to.equal(1200);
    expect(backoffDelay(10, {}, () => 0.5)).to.equal(22500);
    expect(backoffDelay(0, { jitter: 0.25 }, () => 0.999)).to.be.within(800, 1000);
    expect(
      backoffDelay(10, { jitter: 0 }, () => 0.5),
      'without jitter the base reaches maxMs',
    ).to.equal(30000);
    expect(
      backoffDelay(0, { initialMs: 100, maxMs: 150 }, () => 0.999),
      'initialMs above maxMs / 2: clamped to maxMs',
    ).to.equal(150);
  });

  it('rejects a negative attempt and an invalid policy', () => {
    expect(() => backoffDelay(-1)).to.throw(/attempt/);
    expect(() => backoffDelay(0, { maxMs: 10, initialMs: 100 })).to.throw(/maxMs >= initialMs/);
    expect(() => backoffDelay(0, { resetAfterMs: -1 })).to.throw(/resetAfterMs >= 0/);
  });
});
