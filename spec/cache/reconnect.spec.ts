import { expect } from 'chai';
import { defer, EMPTY, filter, map, merge, mergeMap, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { type ReconnectFailure } from '../../lib/cache/index.js';
import { reconnectWithBackoff } from '../../lib/cache/reconnect.js';

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}

describe('cache/reconnectWithBackoff', () => {
  it('ES1: delays 800, 1600, 3200 ... 12800, then 15 s bases (no jitter), and never gives up', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const source = cold('-#');
      const result = source.pipe(reconnectWithBackoff({ scheduler, random: () => 0, onFailure: (f) => failures.push(f) }));
      expectObservable(result, '^ 200000ms !').toBe('');
      scheduler.flush();
      // subscribed at 0, fails at 1, back at 1+800, fails at 802, back at 802+1600, ...
      expect(source.subscriptions.slice(0, 4).map((s) => s.subscribedFrame)).to.deep.equal([0, 801, 2402, 5603]);
      expect(failures.slice(0, 9).map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 6400, 12800, 15000, 15000, 15000, 15000]);
      expect(failures.slice(0, 9).map((f) => f.attempt)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect(failures.every((f) => !f.dropped)).to.equal(true);
    });
  });

  it('ES1 (issue 9): jitter keeps every delay within [base, 2 × base] and visible at the cap (15–30 s)', () => {
    const scheduler = newScheduler();
    let seed = 7;
    const random = (): number => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    scheduler.run(({ cold, expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const result = cold('-#').pipe(reconnectWithBackoff({ scheduler, random, onFailure: (f) => failures.push(f) }));
      expectObservable(result, '^ 900000ms !').toBe('');
      scheduler.flush();
      expect(failures.length).to.be.greaterThan(30);
      failures.forEach((f) => {
        const base = Math.min(15_000, 800 * 2 ** f.attempt);
        expect(f.delayMs, `attempt ${f.attempt}`).to.be.within(base, 2 * base);
      });
      const atCap = failures.filter((f) => f.attempt >= 5).map((f) => f.delayMs);
      expect(Math.max(...atCap)).to.be.at.most(30_000);
      expect(Math.max(...atCap) - Math.min(...atCap), 'delays at the cap spread over seconds').to.be.greaterThan(5_000);
    });
  });

  /** A source whose n-th subscription follows script[n]: healthy after `healthyAt` ms (if given), fails at `failAt`. */
  function scripted(scheduler: TestScheduler, script: Array<{ healthyAt?: number; failAt: number; error: Error }>) {
    let n = 0;
    return defer(() => {
      const step = script[n++] ?? { failAt: 1, error: new Error('answer 500') };
      const healthy$ = step.healthyAt === undefined ? EMPTY : timer(step.healthyAt, scheduler).pipe(map(() => 'healthy'));
      const fail$ = timer(step.failAt, scheduler).pipe(mergeMap(() => throwError(() => step.error)));
      return merge(healthy$, fail$);
    });
  }
  const dropped = new Error('connection reset');
  const answer500 = new Error('answer 500');
  const isDropped = (e: unknown) => e === dropped;

  it('ES1 (issue 9): after 30 s of health the delays start again from 800 ms; 29 s of health is not enough', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const fail = (failAt: number, healthyAt?: number) => ({ failAt, healthyAt, error: answer500 });
      const source = scripted(scheduler, [fail(1), fail(1), fail(1), fail(30_001, 1), fail(1), fail(29_001, 1), fail(1)]);
      const result = source.pipe(reconnectWithBackoff({ scheduler, random: () => 0, onFailure: (f) => failures.push(f) }));
      expectObservable(result.pipe(filter(() => false)), '^ 400000ms !').toBe('');
      scheduler.flush();
      expect(failures.slice(0, 7).map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 800, 1600, 3200, 6400]);
    });
  });

  it('ES1 (issue 9): time spent without being healthy (a hung request) does not reset the backoff', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const hung = { failAt: 60_000, error: new Error('list did not answer') };
      const source = scripted(scheduler, [{ failAt: 1, error: answer500 }, hung, hung, hung]);
      const result = source.pipe(reconnectWithBackoff({ scheduler, random: () => 0, onFailure: (f) => failures.push(f) }));
      expectObservable(result.pipe(filter(() => false)), '^ 300000ms !').toBe('');
      scheduler.flush();
      expect(failures.slice(0, 4).map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 6400]);
    });
  });

  it('ES1 (issue 9): a dropped connection reconnects at once, then backs off if the reconnect fails; an error answer backs off', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const failures: Array<ReconnectFailure & { at: number }> = [];
      const source = scripted(scheduler, [
        { healthyAt: 0, failAt: 5_000, error: dropped }, // a healthy watch drops: at once
        { failAt: 10, error: dropped }, // the reconnect is refused (never healthy): back off
        { failAt: 10, error: answer500 }, // still failing: a longer delay
        { healthyAt: 0, failAt: 5_000, error: dropped }, // healthy again, drops: at once
        { healthyAt: 0, failAt: 5_000, error: answer500 }, // healthy, then an error answer: back off
        { healthyAt: 0, failAt: 500, error: dropped }, // drops 0.5 s after connecting: backs off (no reconnect loop)
      ]);
      const result = source.pipe(
        reconnectWithBackoff({ scheduler, random: () => 0, isDropped, onFailure: (f) => failures.push({ ...f, at: scheduler.now() }) }),
      );
      expectObservable(result.pipe(filter(() => false)), '^ 60000ms !').toBe('');
      scheduler.flush();
      expect(failures.slice(0, 6).map((f) => [f.dropped, f.delayMs])).to.deep.equal([
        [true, 0],
        [false, 800],
        [false, 1600],
        [true, 0],
        [false, 3200],
        [false, 6400],
      ]);
      expect(failures[1]?.at, 'the reconnect after the drop started at once').to.equal(5_000 + 10);
    });
  });

  it('ES1 (issue 9): drops resumed at once do not interrupt the healthy time that resets the backoff; a failed reconnect after a long health starts from 800 ms', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const source = scripted(scheduler, [
        { failAt: 1, error: answer500 },
        { failAt: 1, error: answer500 },
        { failAt: 1, error: answer500 }, // three errors: the next delay would be 6400
        { healthyAt: 0, failAt: 20_000, error: dropped }, // 20 s healthy, drop: at once
        { healthyAt: 0, failAt: 20_000, error: answer500 }, // 20 s more (40 s in all): back to 800
        { failAt: 1, error: answer500 },
        { healthyAt: 0, failAt: 40_000, error: dropped }, // 40 s healthy, drop: at once
        { failAt: 10, error: dropped }, // the reconnect is refused: backs off from the start
      ]);
      const result = source.pipe(reconnectWithBackoff({ scheduler, random: () => 0, isDropped, onFailure: (f) => failures.push(f) }));
      expectObservable(result.pipe(filter(() => false)), '^ 200000ms !').toBe('');
      scheduler.flush();
      expect(failures.slice(0, 8).map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 0, 800, 1600, 0, 800]);
    });
  });

  it('ES1: values pass through and a resubscription follows each error', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const result = cold('a#').pipe(reconnectWithBackoff({ scheduler, random: () => 0 }));
      expectObservable(result, '^ 2500ms !').toBe('a 800ms a 1600ms a');
    });
  });

  it('rejects an invalid backoff policy at once, naming it', () => {
    expect(() => reconnectWithBackoff({ backoff: { initialMs: -1 } })).to.throw(/initialMs/);
  });
});
