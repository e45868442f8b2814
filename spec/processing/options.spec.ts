import { expect } from 'chai';
import { asyncScheduler, of } from 'rxjs';
import { ConfigurationError } from '../../lib/core/errors.js';
import { reconcileEach, resolveReconcileOptions, type ReconcileOptions } from '../../lib/processing/index.js';

const run = () => undefined;

/** Options built from untyped input, as they would come from a config file. */
const bad = (options: Record<string, unknown>) => options as ReconcileOptions;

describe('reconcileEach options', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['maxConcurrentReconciliations', { maxConcurrentReconciliations: -1 }, /maxConcurrentReconciliations: .*-1/],
    ['maxConcurrentReconciliations', { maxConcurrentReconciliations: 0 }, /maxConcurrentReconciliations: .*0/],
    ['maxConcurrentReconciliations', { maxConcurrentReconciliations: Number.NaN }, /maxConcurrentReconciliations: .*NaN/],
    ['maxConcurrentReconciliations', { maxConcurrentReconciliations: 2.5 }, /maxConcurrentReconciliations: .*2\.5/],
    ['maxConcurrentReconciliations', { maxConcurrentReconciliations: '5' }, /maxConcurrentReconciliations: .*"5"/],
    ['maxReconciliationInterval', { maxReconciliationInterval: Number.NaN }, /maxReconciliationInterval: .*NaN/],
    ['maxReconciliationInterval', { maxReconciliationInterval: Number.POSITIVE_INFINITY }, /maxReconciliationInterval: .*Infinity/],
    ['scheduler', { scheduler: {} }, /scheduler: .*now, schedule/],
    ['retry', { retry: { delay: () => 1 } }, /retry: .*delayBefore/],
    ['retry', { retry: true }, /retry: .*true/],
    ['rateLimiter', { rateLimiter: {} }, /rateLimiter: .*acquire/],
    ['exists', { exists: true }, /exists: must be a function/],
    ['active$', { active$: true }, /active\$: must be an Observable/],
    ['probe', { probe: 'metrics' }, /probe: must be a function/],
  ];
  for (const [option, options, message] of cases) {
    it(`rejects ${JSON.stringify(options, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))} at construction, naming ${option}`, () => {
      let error: unknown;
      try {
        reconcileEach(run, bad(options));
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(ConfigurationError);
      expect((error as ConfigurationError).option).to.equal(option);
      expect(String(error)).to.match(message);
    });
  }

  it('rejects a run that is not a function, naming run', () => {
    expect(() => reconcileEach('reconcile' as unknown as () => void)).to.throw(ConfigurationError, /run: must be a function/);
  });

  it('accepts the documented forms: retry false, a max interval <= 0, the defaults', () => {
    expect(() => reconcileEach(run)).not.to.throw();
    expect(() =>
      reconcileEach(run, { retry: false, maxReconciliationInterval: 0, maxConcurrentReconciliations: 1, scheduler: asyncScheduler }),
    ).not.to.throw();
    expect(() => reconcileEach(run, { maxReconciliationInterval: -1, active$: of(true) })).not.to.throw();
  });

  it('EP1: maxConcurrency is the deprecated old name of maxConcurrentReconciliations: still taken alone, refused with it', () => {
    expect(resolveReconcileOptions({ maxConcurrency: 3 }).maxConcurrentReconciliations).to.equal(3);
    expect(() => resolveReconcileOptions({ maxConcurrency: 0 })).to.throw(
      ConfigurationError,
      /^maxConcurrency: must be a positive integer/,
    );
    expect(() => resolveReconcileOptions({ maxConcurrency: 3, maxConcurrentReconciliations: 3 })).to.throw(
      ConfigurationError,
      /give only maxConcurrentReconciliations/,
    );
  });
});
