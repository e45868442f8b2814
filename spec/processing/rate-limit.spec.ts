import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/errors.js';
import { LinearRateLimiter, type LinearRateState } from '../../lib/processing/index.js';

/** Feeds the limiter a series of request times and returns the waits it answered. */
function waits(limiter: LinearRateLimiter, times: number[]): number[] {
  let state: LinearRateState | undefined;
  return times.map((now) => {
    const decision = limiter.acquire(state, now);
    state = decision.state;
    return decision.waitMs;
  });
}

describe('LinearRateLimiter', () => {
  it('EP11: allows limitForPeriod runs per window and tells how long until the window ends', () => {
    expect(waits(new LinearRateLimiter(2, 1000), [0, 10, 20, 999, 1000, 1001, 1002])).to.deep.equal([0, 0, 980, 1, 0, 0, 998]);
  });

  it('EP11: the window defaults to 10 s and opens with the first run after the last one expired', () => {
    expect(new LinearRateLimiter(1).refreshPeriod).to.equal(10_000);
    expect(waits(new LinearRateLimiter(1), [0, 5000, 25_000, 26_000])).to.deep.equal([0, 5000, 0, 9000]);
  });

  it('rejects bad limits with a ConfigurationError naming the option', () => {
    expect(() => new LinearRateLimiter(0)).to.throw(ConfigurationError, 'rateLimiter.limitForPeriod');
    expect(() => new LinearRateLimiter(1.5)).to.throw(ConfigurationError, 'rateLimiter.limitForPeriod');
    expect(() => new LinearRateLimiter(1, Number.NaN)).to.throw(ConfigurationError, 'rateLimiter.refreshPeriod');
    expect(() => new LinearRateLimiter(1, -10)).to.throw(ConfigurationError, 'rateLimiter.refreshPeriod');
  });
});
