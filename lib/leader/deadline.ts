/** A lease request's deadline on the elector's own clock. */
import type { SchedulerLike } from 'rxjs';

/**
 * `signal`, also aborted after `ms` on `scheduler` (a TimeoutError with `message`): a lease
 * request never outlives its deadline, and the deadline runs on the same clock as every other
 * timer of the elector or shard (virtual time in tests). Call `done` when the request settled.
 */
export function abortAfter(
  scheduler: SchedulerLike,
  ms: number,
  signal: AbortSignal,
  message: string,
): { signal: AbortSignal; done: () => void } {
  const deadline = new AbortController();
  const timer = scheduler.schedule(() => deadline.abort(new DOMException(message, 'TimeoutError')), ms);
  return { signal: AbortSignal.any([signal, deadline.signal]), done: () => timer.unsubscribe() };
}
