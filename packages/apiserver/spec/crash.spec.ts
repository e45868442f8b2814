import { expect } from 'chai';
import { runCrashTest } from './crash-test.js';

describe('apiserver: durability under kill -9 (--data)', function () {
  // A CI-sized run; `npm run crash-test -- --rounds 50` is the full one.
  this.timeout(120_000);

  it('keeps every acknowledged write, never hands out a seen resourceVersion again, and answers old watches 410', async () => {
    const result = await runCrashTest({ rounds: 8, seed: 7 });
    expect(result.failures).to.deep.equal([]);
    expect(result).to.include({ kills: 8, lostWrites: 0, resourceVersionRegressions: 0, watchesNot410: 0 });
    expect(result.acknowledgedWrites).to.be.greaterThan(0);
  });
});
