import { expect } from 'chai';
import { backoffDelay, WATCH_BACKOFF } from '../../lib/kube/index.js';

describe('kube/backoff', () => {
  it('ES1: 800 ms doubling to a 30 s cap, reset after 2 min', () => {
    const delays = Array.from({ length: 8 }, (_, i) => backoffDelay(i, {}, () => 0));
    expect(delays).to.deep.equal([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    expect(WATCH_BACKOFF.resetAfterMs).to.equal(120_000);
  });

  it('ES1: jitter adds up to the jitter fraction and never passes the cap', () => {
    expect(backoffDelay(0, {}, () => 0.5)).to.equal(1200);
    expect(backoffDelay(0, { jitter: 0.25 }, () => 0.999)).to.be.within(800, 1000);
    expect(backoffDelay(10, {}, () => 0.999)).to.equal(30000);
  });

  it('rejects a negative attempt and an invalid policy', () => {
    expect(() => backoffDelay(-1)).to.throw(/attempt/);
    expect(() => backoffDelay(0, { maxMs: 10, initialMs: 100 })).to.throw(/maxMs >= initialMs/);
  });
});
