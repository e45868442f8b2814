import { expect } from 'chai';
import type { SchedulerLike } from 'rxjs';
import { Deadlines } from '../../lib/processing/deadlines.js';
import { testScheduler } from './helpers.js';

/** The test scheduler, counting the actions scheduled on it. */
function counting(): { scheduler: SchedulerLike; flush: () => void; scheduled: () => number } {
  const ts = testScheduler();
  ts.maxFrames = Number.POSITIVE_INFINITY;
  let scheduled = 0;
  const scheduler = Object.create(ts) as SchedulerLike;
  scheduler.schedule = (...args: Parameters<SchedulerLike['schedule']>) => {
    scheduled++;
    return ts.schedule(...args);
  };
  return { scheduler, flush: () => ts.flush(), scheduled: () => scheduled };
}

describe('processing/deadlines: many deadlines on one scheduler timer', () => {
  it('fires in due order, ties in the order added, and never fires a cancelled one', () => {
    const { scheduler, flush } = counting();
    const fired: string[] = [];
    const deadlines = new Deadlines<() => void>(scheduler, (work) => work());
    const at = (name: string) => () => fired.push(`${name}@${scheduler.now()}`);
    deadlines.add(30, at('c'));
    deadlines.add(10, at('a1'));
    const cancelled = deadlines.add(20, at('x'));
    deadlines.add(10, at('a2'));
    deadlines.add(20, at('b'));
    deadlines.cancel(cancelled);
    flush();
    expect(fired).to.deep.equal(['a1@10', 'a2@10', 'b@20', 'c@30']);
    expect(deadlines.size).to.equal(0);
  });

  it('a deadline later than the nearest one schedules nothing: 1,000 deadlines cost one armed timer', () => {
    const { scheduler, flush, scheduled } = counting();
    const deadlines = new Deadlines<() => void>(scheduler, (work) => work());
    let fired = 0;
    deadlines.add(5, () => fired++);
    const pending = Array.from({ length: 1000 }, (_, i) => deadlines.add(36_000_000 + i, () => fired++));
    for (const deadline of pending.slice(0, 500)) deadlines.cancel(deadline);
    expect(scheduled(), 'scheduler actions while adding and cancelling').to.equal(1);
    flush();
    expect(fired).to.equal(501);
  });

  it('work that adds a due deadline waits for the next firing instead of looping in place', () => {
    const { scheduler, flush } = counting();
    const deadlines = new Deadlines<() => void>(scheduler, (work) => work());
    const fired: number[] = [];
    const again = (): void => {
      fired.push(scheduler.now());
      if (fired.length < 3) deadlines.add(0, again);
    };
    deadlines.add(10, again);
    flush();
    expect(fired).to.deep.equal([10, 10, 10]);
  });

  it('cancelling the last deadline stops the timer, dispose drops every deadline', () => {
    const { scheduler, flush } = counting();
    const deadlines = new Deadlines<() => void>(scheduler, (work) => work());
    let fired = 0;
    deadlines.cancel(deadlines.add(10, () => fired++));
    deadlines.add(20, () => fired++);
    deadlines.dispose();
    flush();
    expect(fired).to.equal(0);
  });
});
