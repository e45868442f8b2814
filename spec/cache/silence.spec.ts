// The dead-watch check in virtual time: silence before the first event and between events is an error, at the moments RxJS `timeout` would raise it.
import { expect } from 'chai';
import { Observable, throwError, timeout, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { failWhenSilent } from '../../lib/cache/silence.js';

const silent = (seen: number): Error => new Error(`silent after ${seen} values`);
const newScheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

describe('cache/failWhenSilent: silence as an error, one timer per quiet period', () => {
  it('errors `first` ms after subscribing when nothing comes, `each` ms after the last value, and not once the source completes', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('-').pipe(failWhenSilent(5, 10, scheduler, silent))).toBe('-----#', undefined, silent(0));
      expectObservable(cold('--a-----b').pipe(failWhenSilent(5, 10, scheduler, silent))).toBe('--a-----b---------#', undefined, silent(2));
      expectObservable(cold('--a-|').pipe(failWhenSilent(5, 10, scheduler, silent))).toBe('--a-|');
      expectObservable(cold('--a-#', undefined, new Error('boom')).pipe(failWhenSilent(5, 10, scheduler, silent))).toBe(
        '--a-#',
        undefined,
        new Error('boom'),
      );
    });
  });

  it('raises the same notifications at the same moments as RxJS timeout({ first, each }), a shorter `each` than `first` included', () => {
    const sources = ['-', '---a', '------a', 'a-a-a-a-a-a', '--a------a', 'a----------a', 'aaa--|', '-a---------#'];
    const limits: Array<[number, number]> = [
      [5, 10],
      [10, 3],
      [4, 4],
    ];
    for (const marbles of sources)
      for (const [first, each] of limits) {
        const record = (operator: (scheduler: SchedulerLike) => (source: Observable<string>) => Observable<string>): unknown[] => {
          const frames: unknown[] = [];
          const scheduler = new TestScheduler(() => undefined);
          scheduler.run(({ cold }) => {
            cold(marbles, undefined, new Error('boom'))
              .pipe(operator(scheduler))
              .subscribe({
                next: (value) => frames.push([scheduler.now(), 'next', value]),
                error: (error: Error) => frames.push([scheduler.now(), 'error', error.message]),
                complete: () => frames.push([scheduler.now(), 'complete']),
              });
          });
          return frames;
        };
        const ours = record((scheduler) => failWhenSilent<string>(first, each, scheduler, silent));
        const rxjs = record((scheduler) => timeout({ first, each, scheduler, with: ({ seen }) => throwError(() => silent(seen)) }));
        expect(ours, `${marbles} with first ${first}, each ${each}`).to.deep.equal(rxjs);
      }
  });

  it('arms a timer per quiet period, not per value as RxJS timeout does: a value every ms for 1 s with a 10 ms limit', () => {
    const timersFor = (operator: (scheduler: SchedulerLike) => (source: Observable<string>) => Observable<string>): number => {
      const scheduler = newScheduler();
      let scheduled = 0;
      const counting: SchedulerLike = {
        now: () => scheduler.now(),
        schedule: (...args: Parameters<SchedulerLike['schedule']>) => {
          scheduled++;
          return scheduler.schedule(...args);
        },
      };
      scheduler.run(({ cold, expectObservable }) => {
        const values = 'a'.repeat(1000);
        expectObservable(cold(`${values}|`).pipe(operator(counting))).toBe(`${values}|`);
      });
      return scheduled;
    };
    const ours = timersFor((scheduler) => failWhenSilent<string>(5, 10, scheduler, silent));
    const rxjs = timersFor((scheduler) => timeout({ first: 5, each: 10, scheduler, with: ({ seen }) => throwError(() => silent(seen)) }));
    expect(ours).to.be.at.most(1000 / 10 + 2);
    expect(rxjs).to.be.at.least(1000);
  });
});
