import { expect } from 'chai';
import { crashTestFlags, runCrashTest } from './crash-test.js';

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

describe('apiserver: the crash-test command line', () => {
  it('reads its flags as the server command does: defaults, numbers checked, an unknown or misspelt flag refused', () => {
    expect(crashTestFlags([])).to.include({ rounds: 50, writers: 16, seed: 1 });
    expect(crashTestFlags(['--rounds', '8', '--seed=7', '--out', 'x.json'])).to.include({ rounds: 8, writers: 16, seed: 7, out: 'x.json' });
    expect(() => crashTestFlags(['--rounds', 'many'])).to.throw('--rounds must be a positive integer, got many');
    expect(() => crashTestFlags(['--round', '8'])).to.throw(/Unknown option '--round'/);
  });
});
