import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { NoRetryError } from '../../lib/core/errors.js';
import type { ResourceEvent } from '../../lib/core/events.js';
import { GenericRetry, reconcileEach } from '../../lib/processing/index.js';
import { ev, fail, ok, outcomeCode, record, scripted, virtual, type Harness } from './helpers.js';

const events = (h: Harness, marbles: string, names: Record<string, ResourceEvent>): Observable<ResourceEvent> => h.hot(marbles, names);

describe('reconcileEach: NoRetryError with rescheduleAfter', () => {
  it('EP7, EP9: a NoRetryError carrying rescheduleAfter fails without retry and runs again after that delay', () => {
    const { outcomes } = virtual((h) => {
      const s = scripted(() => h.ts.now(), {
        x: [() => fail(10, new NoRetryError(new Error('not yet'), { rescheduleAfter: 50 })), () => ok(10)],
      });
      const op = reconcileEach(s.run, {
        scheduler: h.ts,
        retry: GenericRetry.defaults().withInitialMs(100),
        maxReconciliationInterval: 1000,
      });
      return record(h.ts, events(h, 'a', { a: ev('x') }).pipe(op), 200);
    });
    expect(outcomes.map(outcomeCode)).to.deep.equal(['x failure event +requested@60', 'x success reschedule +maxInterval@1070']);
    expect((outcomes[0]?.error as Error).message).to.equal('not yet');
  });

  it('NoRetryError rejects an invalid rescheduleAfter with a clear error', () => {
    expect(() => new NoRetryError(new Error('x'), { rescheduleAfter: -1 })).to.throw(
      RangeError,
      /rescheduleAfter must be a finite number of milliseconds >= 0, got -1/,
    );
  });
});
