/** A one-shot timer on an RxJS scheduler. */
import { Subscription, type SchedulerLike } from 'rxjs';

// Node's setTimeout (under asyncScheduler) fires at once for delays above 2^31-1 ms (~24.8
// days), so longer delays are chained.
const LONGEST_TIMER = 2 ** 31 - 1;

/** Calls `work` once, `delay` ms from now on `scheduler`. Unsubscribe to cancel. */
export function scheduleOnce(scheduler: SchedulerLike, delay: number, work: () => void): Subscription {
  const timer = new Subscription();
  const arm = (remaining: number): void => {
    const step = Math.min(remaining, LONGEST_TIMER);
    timer.add(
      scheduler.schedule(() => {
        if (remaining > step) arm(remaining - step);
        else work();
      }, step),
    );
  };
  arm(Math.max(0, delay));
  return timer;
}
