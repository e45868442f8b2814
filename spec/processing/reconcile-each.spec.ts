import { expect } from 'chai';
import { from, lastValueFrom, map, of, throwError, toArray, type Observable } from 'rxjs';
import { ConfigurationError, NoRetryError } from '../../lib/core/errors.js';
import type { ResourceEvent } from '../../lib/core/events.js';
import type { ReconcileOutcome } from '../../lib/core/outcome.js';
import {
  GenericRetry,
  LinearRateLimiter,
  reconcileEach,
  serializeByResource,
  type ReconcileOptions,
  type RunContext,
  type RunFn,
  type SchedulingLoad,
} from '../../lib/processing/index.js';
import { ev, fail, ok, outcomeCode, record, scripted, startsOf, virtual, type Harness } from './helpers.js';

type Steps = Parameters<typeof scripted>[1];

/** reconcileEach over a scripted run, with the max interval off unless a test turns it on. */
function setup(h: Harness, steps: Steps, options: ReconcileOptions = {}) {
  const script = scripted(() => h.ts.now(), steps);
  const op = reconcileEach(script.run, { scheduler: h.ts, maxReconciliationInterval: 0, ...options });
  return { ...script, op };
}

const events = (h: Harness, marbles: string, names: Record<string, ResourceEvent>): Observable<ResourceEvent> => h.hot(marbles, names);

describe('reconcileEach', () => {
  describe('EP1 one run per resource, bounded concurrency', () => {
    it('EP1: never runs one resource twice at once; different resources run concurrently', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, {});
        const r = record(h.ts, events(h, '(xy) 2ms x', { x: ev('x'), y: ev('y') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [0, 'y', 0, 'event'],
        [10, 'x', 0, 'event'], // the second x event waited for the first run to end
      ]);
      expect(log).to.deep.equal([
        [10, 'x success event'],
        [10, 'y success event'],
        [20, 'x success event'],
      ]);
    });

    it('EP1: at most maxConcurrentReconciliations runs are in flight; the rest wait for a slot', () => {
      const { starts, peak } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 2 });
        record(h.ts, events(h, '(abc)', { a: ev('a'), b: ev('b'), c: ev('c') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'a', 0, 'event'],
        [0, 'b', 0, 'event'],
        [10, 'c', 0, 'event'],
      ]);
      expect(peak()).to.equal(2);
    });

    it('EP1: waiting resources get slots in FIFO order; a busy resource does not jump the queue', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, 'abca', { a: ev('a'), b: ev('b'), c: ev('c') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts).map(([at, name]) => [at, name])).to.deep.equal([
        [0, 'a'],
        [10, 'b'],
        [20, 'c'],
        [30, 'a'], // a's follow-up queued behind b and c
      ]);
    });
  });

  describe('EP2 coalescing', () => {
    it('EP2: any number of events during a run cause exactly one follow-up run', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, {});
        const r = record(h.ts, events(h, 'a-a-a-a 50ms a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [10, 'x', 0, 'event*3'],
        [57, 'x', 0, 'event'],
      ]);
      expect(log.map(([t]) => t)).to.deep.equal([10, 20, 67]);
    });

    it('EP2: coalescing as a marble diagram', () => {
      virtual((h) => {
        const s = setup(h, {});
        const out = events(h, 'a-a-a', { a: ev('x') }).pipe(s.op, map(outcomeCode));
        h.expectObservable(out).toBe('10ms a 9ms b', { a: 'x success event', b: 'x success event*2' });
      });
    });
  });

  describe('EP3 runs read the cache', () => {
    it('EP3: a run due for a primary that is not in the cache is skipped, checked when the run starts', () => {
      const { starts, log } = virtual((h) => {
        const cache = new Set(['x', 'y']);
        const s = setup(h, {}, { exists: (id) => cache.has(id.name) });
        h.ts.schedule(() => cache.delete('x'), 7);
        const r = record(h.ts, events(h, '(xyz)-x', { x: ev('x'), y: ev('y'), z: ev('z') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [0, 'y', 0, 'event'],
      ]);
      expect(log).to.deep.equal([
        [0, 'z skipped event'],
        [10, 'x success event'],
        [10, 'x skipped event'], // the follow-up found x gone from the cache
        [10, 'y success event'],
      ]);
    });

    it("EP3: with the controller's primaries, a due run is skipped once they no longer have its primary, and exists must agree too", () => {
      const { log } = virtual((h) => {
        const cache = new Set(['x', 'y', 'z']);
        const primaries = { has: (id: { name: string }) => cache.has(id.name) };
        const s = setup(h, {}, { primaries, exists: (id) => id.name !== 'z' });
        h.ts.schedule(() => cache.delete('x'), 7);
        return record(h.ts, events(h, '(xyz)-x', { x: ev('x'), y: ev('y'), z: ev('z') }).pipe(s.op));
      });
      expect(log).to.deep.equal([
        [0, 'z skipped event'],
        [10, 'x success event'],
        [10, 'x skipped event'],
        [10, 'y success event'],
      ]);
      expect(() => reconcileEach(() => undefined, { primaries: {} as never })).to.throw(
        ConfigurationError,
        /^primaries: must have a has\(id\) method/,
      );
    });

    it('EP3: the run gets the id and a cause without the event payload', () => {
      const seen = virtual((h) => {
        const contexts: unknown[] = [];
        const run: RunFn = (id, ctx) => {
          contexts.push({ id, cause: ctx.cause });
        };
        const withPayload: ResourceEvent = { ...ev('x', 'added'), object: { spec: 1 }, oldObject: { spec: 0 } };
        record(h.ts, h.hot('a', { a: withPayload }).pipe(reconcileEach(run, { scheduler: h.ts, maxReconciliationInterval: 0 })));
        return contexts;
      });
      expect(seen).to.deep.equal([
        { id: { name: 'x', namespace: 'ns' }, cause: { type: 'event', source: 'primary', action: 'added', primary: true, coalesced: 1 } },
      ]);
    });
  });

  describe('EP4 only primary events create state', () => {
    it('EP4: secondary events for an unknown resource are dropped; once known they trigger runs', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {});
        const secondary = ev('x', 'modified', { primary: false, source: 'configmaps' });
        const trigger = ev('x', 'trigger', { primary: false, source: 'timer' });
        record(h.ts, events(h, 'st 20ms p 20ms s', { s: secondary, t: trigger, p: ev('x', 'added') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [22, 'x', 0, 'event'],
        [43, 'x', 0, 'event'],
      ]);
    });
  });

  describe('EP5 delete', () => {
    it('EP5: a primary delete drops the pending retry and all state', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, { x: [() => fail(10), () => ok(10)] });
        const secondary = ev('x', 'modified', { primary: false });
        const r = record(h.ts, events(h, 'a 99ms d 99ms s', { a: ev('x'), d: ev('x', 'deleted'), s: secondary }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([[0, 'x', 0, 'event']]); // no retry at 2010, no run for the secondary
      expect(log).to.deep.equal([[10, 'x failure event +retry1@2010']]);
    });

    it('EP5: a delete during a run means no retry; the state goes when the run ends', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, { x: [() => fail(10), () => ok(10)] });
        const secondary = ev('x', 'modified', { primary: false });
        const r = record(
          h.ts,
          events(h, 'a 4ms d 14ms s 9ms n', { a: ev('x'), d: ev('x', 'deleted'), s: secondary, n: ev('x', 'added') }).pipe(s.op),
        );
        return { ...s, ...r };
      });
      expect(log[0]).to.deep.equal([10, 'x failure event']);
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [30, 'x', 0, 'event'], // re-created: fresh state, attempt 0
      ]);
    });

    it('EP5: a resource deleted and re-created during a run starts fresh after it', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => fail(10), () => ok(10)] });
        record(h.ts, events(h, 'a 2ms d a', { a: ev('x'), d: ev('x', 'deleted') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [10, 'x', 0, 'event'],
      ]);
    });

    it('EP5: a delete removes a resource waiting for a slot', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, 'abd', { a: ev('a'), b: ev('b'), d: ev('b', 'deleted') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts).map(([at, name]) => [at, name])).to.deep.equal([[0, 'a']]);
    });

    it('EP5: a delete drops the rate-limit window', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(1)] }, { rateLimiter: new LinearRateLimiter(1, 1000) });
        record(h.ts, events(h, 'a 9ms d 9ms a', { a: ev('x'), d: ev('x', 'deleted') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [20, 'x', 0, 'event'], // not postponed to 1000
      ]);
    });
  });

  describe('EP7 retry', () => {
    it('EP7: GenericRetry defaults retry 5 times after 2000, 2000, 3000, 4500, 6750 ms; ctx.retry tells attempt and lastAttempt', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, () => fail(0));
        const r = record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(starts.map((s) => [s.at, s.attempt, s.lastAttempt, s.cause])).to.deep.equal([
        [0, 0, false, 'event'],
        [2000, 1, false, 'retry1'],
        [4000, 2, false, 'retry2'],
        [7000, 3, false, 'retry3'],
        [11500, 4, false, 'retry4'],
        [18250, 5, true, 'retry5'],
      ]);
      expect(log.map(([, code]) => code)).to.deep.equal([
        'x failure event +retry1@2000',
        'x failure retry1 +retry2@4000',
        'x failure retry2 +retry3@7000',
        'x failure retry3 +retry4@11500',
        'x failure retry4 +retry5@18250',
        'x failure retry5',
      ]);
    });

    it('EP7: a run that throws synchronously is a failure and is retried; the stream lives on', () => {
      const { log } = virtual((h) => {
        let calls = 0;
        const run: RunFn = () => {
          calls++;
          if (calls === 1) throw new Error('sync');
        };
        const retry = GenericRetry.defaults().withInitialMs(100);
        return record(h.ts, h.hot('a', { a: ev('x') }).pipe(reconcileEach(run, { scheduler: h.ts, maxReconciliationInterval: 0, retry })));
      });
      expect(log).to.deep.equal([
        [0, 'x failure event +retry1@100'],
        [100, 'x success retry1'],
      ]);
    });

    it('EP7: a custom Retry decides the delays; retry: false disables retries (every run is the last attempt)', () => {
      const custom = virtual((h) => {
        const s = setup(h, () => fail(0), { retry: { delayBefore: (attempt) => (attempt <= 2 ? attempt * 100 : undefined) } });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return s.starts;
      }).map((r) => [r.at, r.attempt, r.lastAttempt]);
      expect(custom).to.deep.equal([
        [0, 0, false],
        [100, 1, false],
        [300, 2, true],
      ]);
      const disabled = virtual((h) => {
        const s = setup(h, () => fail(0), { retry: false });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return s.starts;
      }).map((r) => [r.at, r.attempt, r.lastAttempt]);
      expect(disabled).to.deep.equal([[0, 0, true]]);
    });

    it('EP7: a failing promise is a failure, never an error of the stream', async () => {
      const run: RunFn = async (id) => {
        if (id.name === 'bad') throw new Error('rejected');
      };
      const outcomes = await lastValueFrom(
        from([ev('bad'), ev('good')]).pipe(reconcileEach(run, { retry: false, maxReconciliationInterval: 0 }), toArray()),
      );
      expect(outcomes.map((o) => `${o.id.name} ${o.result}`)).to.deep.equal(['bad failure', 'good success']);
      expect((outcomes[0]?.error as Error).message).to.equal('rejected');
    });

    it('EP7: a NoRetryError fails without retry, reports the wrapped error and ends the failure streak', () => {
      const { starts, outcomes } = virtual((h) => {
        const cause = new Error('invalid spec');
        const s = setup(
          h,
          { x: [() => fail(10), () => fail(10, new NoRetryError(cause)), () => ok(10)] },
          {
            retry: GenericRetry.defaults().withInitialMs(100),
            maxReconciliationInterval: 1000,
          },
        );
        const r = record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op), 3000);
        return { ...s, ...r };
      });
      expect(outcomes.map(outcomeCode)).to.deep.equal([
        'x failure event +retry1@110',
        'x failure retry1 +maxInterval@1120',
        'x success maxInterval +maxInterval@2130',
        'x success maxInterval +maxInterval@3140',
      ]);
      expect((outcomes[1]?.error as Error).message).to.equal('invalid spec');
      expect(starts[2]?.attempt).to.equal(0);
    });

    it('EP7: an invalid rescheduleAfter makes the run a failure with a clear error', () => {
      const { outcomes } = virtual((h) => {
        const s = setup(h, { x: [() => ok(1, { rescheduleAfter: Number.NaN })] }, { retry: false });
        return record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
      });
      expect(outcomes[0]?.result).to.equal('failure');
      expect(String(outcomes[0]?.error)).to.match(/rescheduleAfter.*NaN/);
    });
  });

  describe('EP8 retries and events', () => {
    it('EP8: an event while a retry is scheduled runs at once and does not count as an attempt', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, { x: [() => fail(1), () => fail(1), () => fail(1), () => ok(1)] });
        const r = record(h.ts, events(h, 'a 499ms a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [500, 'x', 0, 'event'], // the retry due at 2001 is cancelled
        [2501, 'x', 1, 'retry1'], // still the first retry, 2000 ms after the event run failed
        [4502, 'x', 2, 'retry2'],
      ]);
      expect(log.map(([, code]) => code)).to.deep.equal([
        'x failure event +retry1@2001',
        'x failure event +retry1@2501',
        'x failure retry1 +retry2@4502',
        'x success retry2',
      ]);
    });

    it('EP8: events during a run that then fails run at once, and that failure schedules no retry', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, { x: [() => fail(10), () => fail(10), () => ok(10)] });
        const r = record(h.ts, events(h, 'a 4ms a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [10, 'x', 0, 'event'],
        [2020, 'x', 1, 'retry1'],
      ]);
      expect(log.slice(0, 2)).to.deep.equal([
        [10, 'x failure event'],
        [20, 'x failure event +retry1@2020'],
      ]);
    });

    it('EP8: after the last attempt an event still runs (lastAttempt) and its error schedules no retry; a success resets', () => {
      const { starts, log } = virtual((h) => {
        const retry = GenericRetry.defaults().withMaxAttempts(2).withInitialMs(100);
        const s = setup(h, { x: [() => fail(1), () => fail(1), () => fail(1), () => fail(1), () => ok(1), () => fail(1)] }, { retry });
        const r = record(h.ts, events(h, 'a 499ms a 99ms a 99ms a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(starts.map((s) => [s.at, s.attempt, s.lastAttempt, s.cause])).to.deep.equal([
        [0, 0, false, 'event'],
        [101, 1, false, 'retry1'],
        [202, 2, true, 'retry2'],
        [500, 2, true, 'event'], // retries exhausted: runs, still the last attempt
        [600, 2, true, 'event'], // the success of this run resets the retry state
        [700, 0, false, 'event'],
        [801, 1, false, 'retry1'],
        [902, 2, true, 'retry2'],
      ]);
      expect(log.map(([t, code]) => `${t} ${code}`)).to.deep.equal([
        '1 x failure event +retry1@101',
        '102 x failure retry1 +retry2@202',
        '203 x failure retry2',
        '501 x failure event', // no retry after the last attempt
        '601 x success event',
        '701 x failure event +retry1@801', // a fresh streak
        '802 x failure retry1 +retry2@902',
        '903 x failure retry2',
      ]);
    });
  });

  describe('EP9 success, reschedule', () => {
    it('EP9: a success cancels the pending retry', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => fail(1), () => ok(1)] });
        record(h.ts, events(h, 'a 99ms a', { a: ev('x') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [100, 'x', 0, 'event'],
      ]); // nothing at 2001
    });

    it('EP9: rescheduleAfter runs the resource again after the delay', () => {
      const { starts, log } = virtual((h) => {
        const s = setup(h, { x: [() => ok(10, { rescheduleAfter: 100 }), () => ok(10)] });
        const r = record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [110, 'x', 0, 'reschedule'],
      ]);
      expect(log[0]).to.deep.equal([10, 'x success event +requested@110']);
    });

    it('EP9: an event-triggered run cancels a pending reschedule', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(10, { rescheduleAfter: 100 }), () => ok(10)] });
        record(h.ts, events(h, 'a 49ms a', { a: ev('x') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [50, 'x', 0, 'event'],
      ]); // nothing at 110
    });
  });

  describe('EP10 max reconciliation interval', () => {
    it('EP10: after a success without reschedule the resource runs again after the max interval', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(10)] }, { maxReconciliationInterval: 1000 });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op), 3000);
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [1010, 'x', 0, 'maxInterval'],
        [2020, 'x', 0, 'maxInterval'],
      ]);
    });

    it('EP10: a requested reschedule replaces the max interval; after retries are exhausted the max interval applies', () => {
      const { log } = virtual((h) => {
        const retry = GenericRetry.defaults().withMaxAttempts(1).withInitialMs(100);
        const s = setup(
          h,
          { x: [() => ok(10, { rescheduleAfter: 50 }), () => fail(10), () => fail(10), () => ok(10)] },
          { retry, maxReconciliationInterval: 1000 },
        );
        return record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op), 2000);
      });
      expect(log).to.deep.equal([
        [10, 'x success event +requested@60'],
        [70, 'x failure reschedule +retry1@170'],
        [180, 'x failure retry1 +maxInterval@1180'],
        [1190, 'x success maxInterval +maxInterval@2190'],
      ]);
    });

    it('EP10: a max interval <= 0 disables it', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxReconciliationInterval: -1 });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return s;
      });
      expect(starts).to.have.length(1);
    });

    it('EP10: the default is 10 hours', () => {
      const { log } = virtual((h) => {
        const script = scripted(() => h.ts.now(), {});
        return record(h.ts, events(h, 'a', { a: ev('x') }).pipe(reconcileEach(script.run, { scheduler: h.ts })), 11);
      });
      expect(log).to.deep.equal([[10, `x success event +maxInterval@${10 + 36_000_000}`]]);
    });
  });

  describe('EP11 rate limit', () => {
    it('EP11: runs beyond the limit are postponed to the end of the window, never dropped', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(1)] }, { rateLimiter: new LinearRateLimiter(2, 1000) });
        record(h.ts, events(h, 'a 9ms a 9ms a 9ms a', { a: ev('x') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [10, 'x', 0, 'event'],
        [1000, 'x', 0, 'rateLimit(event*2)'], // the two excess events wait together for the next window
      ]);
    });

    it('EP11: a postponed run waits at least 50 ms', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(1)] }, { rateLimiter: new LinearRateLimiter(1, 100) });
        record(h.ts, events(h, 'a 94ms a', { a: ev('x') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [145, 'x', 0, 'rateLimit(event)'],
      ]);
    });

    it('EP11: the rate limit takes precedence over a retry and over a reschedule', () => {
      const retried = virtual((h) => {
        const retry = GenericRetry.defaults().withInitialMs(100);
        const s = setup(h, { x: [() => fail(1), () => ok(1)] }, { retry, rateLimiter: new LinearRateLimiter(1, 1000) });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return s.starts;
      });
      expect(startsOf(retried)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [1000, 'x', 1, 'rateLimit(retry1)'], // due at 101, postponed; still counts as retry 1
      ]);
      const rescheduled = virtual((h) => {
        const s = setup(h, { x: [() => ok(1, { rescheduleAfter: 10 }), () => ok(1)] }, { rateLimiter: new LinearRateLimiter(1, 1000) });
        record(h.ts, events(h, 'a', { a: ev('x') }).pipe(s.op));
        return s.starts;
      });
      expect(startsOf(rescheduled)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [1000, 'x', 0, 'rateLimit(reschedule)'],
      ]);
    });

    it('EP11: limits are per resource', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { rateLimiter: new LinearRateLimiter(1, 1000) });
        record(h.ts, events(h, '(xy)', { x: ev('x'), y: ev('y') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts).map(([at, name]) => [at, name])).to.deep.equal([
        [0, 'x'],
        [0, 'y'],
      ]);
    });
  });

  describe('EP12 activation', () => {
    it('EP12: events before start are kept and run when active$ turns true', () => {
      const { starts } = virtual((h) => {
        const active$ = h.hot('f 99ms t', { f: false, t: true });
        const s = setup(h, {}, { active$ });
        record(h.ts, events(h, 'x-y-x', { x: ev('x'), y: ev('y') }).pipe(s.op));
        return s;
      });
      expect(startsOf(starts)).to.deep.equal([
        [100, 'x', 0, 'event*2'],
        [100, 'y', 0, 'event'],
      ]);
    });

    it('EP12: nothing runs before active$ emits; going inactive holds new runs but lets running ones finish', () => {
      const { starts, log } = virtual((h) => {
        const active$ = h.hot('50ms t 9ms f 99ms t', { f: false, t: true });
        const s = setup(h, { x: [() => ok(20)] }, { active$, retry: false });
        const r = record(h.ts, events(h, 'x 54ms x 9ms y', { x: ev('x'), y: ev('y') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [50, 'x', 0, 'event'],
        [160, 'y', 0, 'event'], // y was queued at 65, before x's follow-up at 70
        [160, 'x', 0, 'event'],
      ]);
      expect(log[0]).to.deep.equal([70, 'x success event']); // finished although inactive since 60
    });

    it('OB4: abortRuns$ (leadership lost) aborts the signal of runs in flight; they still settle before the next run', () => {
      const { signals, starts, log } = virtual((h) => {
        const active$ = h.hot('t 29ms f 99ms t', { f: false, t: true });
        const abortRuns$ = h.hot('30ms a', { a: undefined });
        const s = setup(h, { x: [() => ok(50)] }, { active$, abortRuns$, retry: false });
        const r = record(h.ts, events(h, 'x 39ms x', { x: ev('x') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(signals.map((signal) => signal.aborted)).to.deep.equal([true, false]);
      expect(log[0]).to.deep.equal([50, 'x success event']);
      expect(startsOf(starts).map(([at, name]) => [at, name])).to.deep.equal([
        [0, 'x'],
        [130, 'x'], // the follow-up waits for active$ again
      ]);
    });

    it('OB5, EP12: going inactive alone (stop) lets runs in flight finish with their signal untouched', () => {
      const { signals } = virtual((h) => {
        const active$ = h.hot('t 29ms f', { f: false, t: true });
        const s = setup(h, { x: [() => ok(50)] }, { active$, retry: false });
        record(h.ts, events(h, 'x', { x: ev('x') }).pipe(s.op));
        return s;
      });
      expect(signals.map((signal) => signal.aborted)).to.deep.equal([false]);
    });
  });

  describe('EP13 fresh changes first', () => {
    // A listed event: what the informer's first list (or a relist) reports, not a change just made.
    const listed = (name: string) => ev(name, 'added', { listed: true });
    const at = (starts: Parameters<typeof startsOf>[0]) => startsOf(starts).map(([time, name, , cause]) => [time, name, cause]);

    it('EP13: a fresh change runs before the runs owed for listed events, which keep their order', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, '(abc) 1ms x', { a: listed('a'), b: listed('b'), c: listed('c'), x: ev('x') }).pipe(s.op));
        return s;
      });
      expect(at(starts)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'x', 'event'], // queued at 1, behind b and c, starts at the first free slot
        [20, 'b', 'event'],
        [30, 'c', 'event'],
      ]);
    });

    it('EP13: a fresh change to a resource whose listed run is still queued moves that run ahead (one run)', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, '(abc) 1ms C', { a: listed('a'), b: listed('b'), c: listed('c'), C: ev('c') }).pipe(s.op));
        return s;
      });
      expect(at(starts)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'c', 'event*2'],
        [20, 'b', 'event'],
      ]);
    });

    it('EP13: a listed event does not move a run owed for a fresh change back', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, '(abx) 1ms X', { a: listed('a'), b: listed('b'), x: ev('x'), X: listed('x') }).pipe(s.op));
        return s;
      });
      expect(at(starts)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'x', 'event*2'],
        [20, 'b', 'event'],
      ]);
    });

    it('EP13: events during a run of a listed resource make its follow-up a fresh one', () => {
      const { starts } = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, '(ab) 1ms A', { a: listed('a'), b: listed('b'), A: ev('a') }).pipe(s.op));
        return s;
      });
      expect(at(starts)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'a', 'event'], // the follow-up (EP2) of a change made during a's run
        [20, 'b', 'event'],
      ]);
    });

    it('EP13: a max-interval run waits behind fresh changes; a retry does not wait behind listed runs', () => {
      const resync = virtual((h) => {
        const s = setup(h, {}, { maxConcurrentReconciliations: 1, maxReconciliationInterval: 5 });
        record(h.ts, events(h, '(ab) 11ms c', { a: ev('a'), b: ev('b'), c: ev('c') }).pipe(s.op), 35);
        return s.starts;
      });
      expect(at(resync)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'b', 'event'], // a's max interval falls due at 15, c arrives at 12
        [20, 'c', 'event'],
        [30, 'a', 'maxInterval'],
      ]);
      const retried = virtual((h) => {
        const retry = GenericRetry.defaults().withInitialMs(5);
        const s = setup(h, { a: [() => fail(10), () => ok(10)] }, { maxConcurrentReconciliations: 1, retry });
        record(h.ts, events(h, '(abc)', { a: ev('a'), b: listed('b'), c: listed('c') }).pipe(s.op));
        return s.starts;
      });
      expect(at(retried)).to.deep.equal([
        [0, 'a', 'event'],
        [10, 'b', 'event'], // a's retry falls due at 15
        [20, 'a', 'retry1'],
        [30, 'c', 'event'],
      ]);
    });

    it('EP13, EP12: before activation, listed and fresh events are kept; the fresh ones run first', () => {
      const { starts } = virtual((h) => {
        const active$ = h.hot('f 9ms t', { f: false, t: true });
        const s = setup(h, {}, { active$, maxConcurrentReconciliations: 1 });
        record(h.ts, events(h, '(ab) 1ms x', { a: listed('a'), b: listed('b'), x: ev('x') }).pipe(s.op));
        return s;
      });
      expect(at(starts)).to.deep.equal([
        [10, 'x', 'event'],
        [20, 'a', 'event'],
        [30, 'b', 'event'],
      ]);
    });
  });

  describe('lifecycle', () => {
    it('unsubscribing aborts the signal of the run in flight and stops every timer', () => {
      const { signals, starts } = virtual((h) => {
        const s = setup(h, { x: [() => ok(100)], y: [() => fail(1)] });
        record(h.ts, events(h, '(xy)', { x: ev('x'), y: ev('y') }).pipe(s.op), 50);
        return s;
      });
      expect(starts).to.have.length(2); // y's retry at 2001 never happens
      expect(signals.map((signal) => signal.aborted)).to.deep.equal([true, false]);
    });

    it('a run that reads its signal only after unsubscription still sees it aborted', () => {
      const contexts = virtual((h) => {
        const contexts: RunContext[] = [];
        const run: RunFn = (_id, ctx) => {
          contexts.push(ctx);
          return ok(100);
        };
        record(h.ts, h.hot('a', { a: ev('x') }).pipe(reconcileEach(run, { scheduler: h.ts })), 50);
        return contexts;
      });
      expect(contexts.map((ctx) => ctx.signal.aborted)).to.deep.equal([true]);
    });

    it('source completion drains: runs in flight and due follow-ups finish, then the output completes', () => {
      const { log, completedAt } = virtual((h) => {
        const s = setup(h, {}, { maxReconciliationInterval: 1000 });
        return record(h.ts, h.cold('x-x|', { x: ev('x') }).pipe(s.op));
      });
      expect(log).to.deep.equal([
        [10, 'x success event'],
        [20, 'x success event'],
      ]);
      expect(completedAt()).to.equal(20);
    });

    it('an error of the source is passed on and aborts runs in flight', () => {
      const { signals, error } = virtual((h) => {
        const s = setup(h, { x: [() => ok(100)] });
        let error: unknown;
        h.cold('x-#', { x: ev('x') }, new Error('watch failed'))
          .pipe(s.op)
          .subscribe({ error: (e: unknown) => (error = e) });
        return { ...s, error: () => error };
      });
      expect((error() as Error).message).to.equal('watch failed');
      expect(signals[0]?.aborted).to.equal(true);
    });

    it('a run may return a plain value or nothing', () => {
      const { log } = virtual((h) => {
        const run: RunFn = (id) => (id.name === 'x' ? { rescheduleAfter: 5 } : undefined);
        return record(
          h.ts,
          h.hot('(xy)', { x: ev('x'), y: ev('y') }).pipe(reconcileEach(run, { scheduler: h.ts, maxReconciliationInterval: 0 })),
          7,
        );
      });
      expect(log).to.deep.equal([
        [0, 'x success event +requested@5'],
        [0, 'y success event'],
        [5, 'x success reschedule +requested@10'],
      ]);
    });

    it('many synchronous runs do not grow the stack', () => {
      const names = Array.from({ length: 10_000 }, (_, i) => ev(`r${i}`));
      const outcomes: ReconcileOutcome[] = [];
      from(names)
        .pipe(reconcileEach(() => undefined, { maxConcurrentReconciliations: 1, retry: false, maxReconciliationInterval: 0 }))
        .subscribe((o) => outcomes.push(o));
      expect(outcomes).to.have.length(10_000);
    });

    it('the probe reports running, queued and tracked resources when they change', () => {
      const loads = virtual((h) => {
        const loads: Array<[number, SchedulingLoad]> = [];
        const s = setup(h, {}, { maxConcurrentReconciliations: 1, probe: (load) => loads.push([h.ts.now(), load]) });
        record(h.ts, events(h, '(ab) 19ms d', { a: ev('a'), b: ev('b'), d: ev('a', 'deleted') }).pipe(s.op));
        return loads;
      });
      expect(loads).to.deep.equal([
        [0, { running: 1, queued: 0, resources: 1 }],
        [0, { running: 1, queued: 1, resources: 2 }],
        [10, { running: 1, queued: 0, resources: 2 }],
        [20, { running: 0, queued: 0, resources: 2 }],
        [23, { running: 0, queued: 0, resources: 1 }],
      ]);
    });

    it('EP7: a custom Retry that breaks at run time fails only that run, named, without retry; processing goes on', () => {
      const { log, outcomes, starts } = virtual((h) => {
        // Passes the probe of the first three attempts, then answers -5.
        const s = setup(h, { x: [() => fail(1)], y: [() => fail(1)] }, { retry: { delayBefore: (n) => (n <= 3 ? 10 : -5) } });
        const r = record(h.ts, events(h, 'x 59ms y', { x: ev('x'), y: ev('y') }).pipe(s.op));
        return { ...s, ...r };
      });
      expect(log).to.deep.equal([
        [1, 'x failure event +retry1@11'],
        [12, 'x failure retry1 +retry2@22'],
        [23, 'x failure retry2 +retry3@33'],
        [34, 'x failure retry3'],
        [61, 'y failure event +retry1@71'],
        [72, 'y failure retry1 +retry2@82'],
        [83, 'y failure retry2 +retry3@93'],
        [94, 'y failure retry3'],
      ]);
      expect(
        starts.find((r) => r.name === 'x' && r.attempt === 3)?.lastAttempt,
        'a broken answer about the next retry: the last attempt',
      ).to.equal(true);
      const broken = outcomes.filter((o) => o.result === 'failure' && o.retry === undefined).map((o) => o.error);
      expect(broken[0]).to.be.instanceOf(ConfigurationError);
      expect(String(broken[0])).to.match(/ConfigurationError: retry: delayBefore\(4\) returned -5; .* not retried after: Error: boom/);
      expect((broken[0] as Error).cause, "the run's own error is kept").to.be.instanceOf(Error);
    });

    it('EP7: a custom Retry is probed when configured: one that throws or answers no delay is a ConfigurationError naming it and the value', () => {
      expect(() => reconcileEach(() => undefined, { retry: { delayBefore: () => -5 } })).to.throw(
        ConfigurationError,
        /^retry: delayBefore\(1\) returned -5/,
      );
      expect(() => reconcileEach(() => undefined, { retry: { delayBefore: () => Number.NaN } })).to.throw(
        ConfigurationError,
        /retry: delayBefore\(1\) returned NaN/,
      );
      expect(() =>
        reconcileEach(() => undefined, {
          retry: {
            delayBefore: (n) =>
              n < 3
                ? 1
                : (() => {
                    throw new Error('nope');
                  })(),
          },
        }),
      ).to.throw(ConfigurationError, /retry: delayBefore\(3\) threw Error: nope/);
    });
  });

  describe('serializeByResource', () => {
    it('EP1/EP2: serializes and coalesces without retries', () => {
      const { starts, log } = virtual((h) => {
        const script = scripted(() => h.ts.now(), { x: [() => fail(10), () => fail(10)] });
        const r = record(h.ts, events(h, 'x-x', { x: ev('x') }).pipe(serializeByResource(script.run, { scheduler: h.ts })));
        return { ...script, ...r };
      });
      expect(startsOf(starts)).to.deep.equal([
        [0, 'x', 0, 'event'],
        [10, 'x', 0, 'event'],
      ]);
      expect(log).to.deep.equal([
        [10, 'x failure event'],
        [20, 'x failure event'],
      ]);
    });
  });

  it('passes plain source values through of() and keeps working after a failing run', async () => {
    const out = await lastValueFrom(
      of(ev('a'), ev('b')).pipe(
        reconcileEach((id) => (id.name === 'a' ? throwError(() => new Error('x')) : of({})), {
          retry: false,
          maxReconciliationInterval: 0,
        }),
        map((o) => o.result),
        toArray(),
      ),
    );
    expect(out).to.deep.equal(['failure', 'success']);
  });
});
