import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/errors.js';
import { GenericRetry } from '../../lib/processing/index.js';

const delays = (retry: GenericRetry, count: number) => Array.from({ length: count }, (_, i) => retry.delayBefore(i + 1));

describe('GenericRetry', () => {
  it('EP7: defaults are 5 retries after 2000, 2000, 3000, 4500, 6750 ms, then none', () => {
    expect(GenericRetry.defaults().settings).to.deep.equal({ maxAttempts: 5, initialMs: 2000, factor: 1.5, maxMs: 15187 });
    expect(delays(GenericRetry.defaults(), 6)).to.deep.equal([2000, 2000, 3000, 4500, 6750, undefined]);
  });

  it('EP7: -1 retries without end, bounded by maxMs (15187)', () => {
    expect(delays(GenericRetry.unlimited(), 9)).to.deep.equal([2000, 2000, 3000, 4500, 6750, 10125, 15187, 15187, 15187]);
    expect(GenericRetry.unlimited().delayBefore(1_000_000)).to.equal(15187);
  });

  it('EP7: builders are immutable and fluent', () => {
    const base = GenericRetry.defaults();
    const custom = base.withMaxAttempts(3).withInitialMs(100).withFactor(2).withMaxMs(-1);
    expect(base.settings.maxAttempts).to.equal(5);
    expect(delays(custom, 4)).to.deep.equal([100, 100, 200, undefined]);
  });

  it('EP7: maxMs bounds every delay, the first two included', () => {
    expect(delays(GenericRetry.defaults().withInitialMs(20_000), 3)).to.deep.equal([15187, 15187, 15187]);
  });

  it('speaks the one backoff vocabulary (BackoffPolicy: initialMs, maxMs, factor); the old JOSDK-style builders are deprecated aliases of the same settings', () => {
    const renamed = GenericRetry.defaults().withInitialMs(100).withFactor(3).withMaxMs(1000);
    const old = GenericRetry.defaults().withInitialInterval(100).withMultiplier(3).withMaxInterval(1000);
    expect(renamed.settings).to.deep.equal({ maxAttempts: 5, initialMs: 100, factor: 3, maxMs: 1000 });
    expect(old.settings).to.deep.equal(renamed.settings);
    expect(() => GenericRetry.defaults().withMultiplier(0.5)).to.throw(ConfigurationError, 'retry.factor');
  });

  it('no delay for attempt numbers below 1 or not integers', () => {
    expect([0, -1, 1.5].map((n) => GenericRetry.defaults().delayBefore(n))).to.deep.equal([undefined, undefined, undefined]);
  });

  for (const [name, build] of [
    ['retry.maxAttempts', () => GenericRetry.defaults().withMaxAttempts(0)],
    ['retry.maxAttempts', () => GenericRetry.defaults().withMaxAttempts(-2)],
    ['retry.maxAttempts', () => GenericRetry.defaults().withMaxAttempts(2.5)],
    ['retry.initialMs', () => GenericRetry.defaults().withInitialMs(Number.NaN)],
    ['retry.initialMs', () => GenericRetry.defaults().withInitialMs(-1)],
    ['retry.factor', () => GenericRetry.defaults().withFactor(0.5)],
    ['retry.factor', () => GenericRetry.defaults().withFactor(Number.POSITIVE_INFINITY)],
    ['retry.maxMs', () => GenericRetry.defaults().withMaxMs(0)],
  ] as const) {
    it(`rejects a bad ${name} with a ConfigurationError naming it`, () => {
      expect(build).to.throw(ConfigurationError, name);
    });
  }
});
