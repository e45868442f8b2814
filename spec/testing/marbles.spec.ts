import { expect } from 'chai';
import { concat, NEVER, of } from 'rxjs';
import { reconcileEach } from '../../lib/processing/index.js';
import { resourceEvent } from '../../lib/pipeline.js';
import { outcomeCode, testScheduler } from '../../lib/testing/index.js';

/** Lets promise callbacks run (a run's rejection settles on the microtask queue). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('testing: marble helpers', () => {
  it('EP7: testScheduler() used outside run() fires timers beyond 750 frames (a 2000 ms retry)', () => {
    const ts = testScheduler();
    const codes: string[] = [];
    const subscription = concat(of(resourceEvent('a')), NEVER)
      .pipe(
        reconcileEach(() => Promise.reject(new Error('fails')), {
          scheduler: ts,
          retry: { delayBefore: (n) => (n === 1 ? 2000 : undefined) },
          maxReconciliationInterval: 0,
        }),
      )
      .subscribe((o) => codes.push(`${ts.now()} ${outcomeCode(o)}`));
    return settle()
      .then(() => {
        ts.flush();
        return settle();
      })
      .then(() => {
        subscription.unsubscribe();
        expect(codes).to.deep.equal(['0 a failure event +retry1@2000', '2000 a failure retry1']);
      });
  });
});
