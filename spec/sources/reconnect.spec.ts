import { expect } from 'chai';
import { defer, mergeMap, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { reconnectWithBackoff, type ReconnectFailure } from '../../lib/sources/index.js';

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}

describe('sources/reconnectWithBackoff', () => {
  it('ES1: delays 800, 1600, 3200 ... capped at 30 s (no jitter), and never gives up', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const source = cold('-#');
      const result = source.pipe(reconnectWithBackoff({ scheduler, random: () => 0, onFailure: (f) => failures.push(f) }));
      expectObservable(result, '^ 200000ms !').toBe('');
      scheduler.flush();
      // subscribed at 0, fails at 1, back at 1+800, fails at 802, back at 802+1600, ...
      expect(source.subscriptions.slice(0, 4).map((s) => s.subscribedFrame)).to.deep.equal([0, 801, 2402, 5603]);
      expect(failures.map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000, 30000]);
      expect(failures.map((f) => f.attempt)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });

  it('ES1: jitter keeps every delay within [base, min(2 × base, 30 s)]', () => {
    const scheduler = newScheduler();
    let seed = 7;
    const random = (): number => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    scheduler.run(({ cold, expectObservable }) => {
      const failures: ReconnectFailure[] = [];
      const result = cold('-#').pipe(reconnectWithBackoff({ scheduler, random, onFailure: (f) => failures.push(f) }));
      expectObservable(result, '^ 600000ms !').toBe('');
      scheduler.flush();
      expect(failures.length).to.be.greaterThan(20);
      failures.forEach((f) => {
        const base = Math.min(30_000, 800 * 2 ** f.attempt);
        expect(f.delayMs, `attempt ${f.attempt}`).to.be.within(base, Math.min(2 * base, 30_000));
      });
      expect(new Set(failures.slice(0, 5).map((f, i) => f.delayMs / (800 * 2 ** i))).size, 'jitter varies').to.be.greaterThan(1);
      expect(failures.some((f) => f.delayMs > Math.min(30_000, 800 * 2 ** f.attempt)), 'jitter is applied').to.equal(true);
    });
  });

  it('ES1: after 2 min without failure the delays start again from 800 ms', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const failures: Array<ReconnectFailure & { at: number }> = [];
      const lifetimes = [1, 1, 1, 120_000, 1, 119_000, 1];
      let subscription = 0;
      const source = defer(() => {
        const ms = lifetimes[subscription++] ?? 1;
        return timer(ms, scheduler).pipe(mergeMap(() => throwError(() => new Error('watch failed'))));
      });
      const result = source.pipe(
        reconnectWithBackoff({ scheduler, random: () => 0, onFailure: (f) => failures.push({ ...f, at: scheduler.now() }) }),
      );
      expectObservable(result, '^ 400000ms !').toBe('');
      scheduler.flush();
      expect(failures.slice(0, 7).map((f) => f.delayMs)).to.deep.equal([800, 1600, 3200, 800, 1600, 3200, 6400]);
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
