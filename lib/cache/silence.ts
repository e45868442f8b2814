/** Silence on a stream as an error: the dead-watch check, with one timer per quiet period rather than one per event. */
import { Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * Errors with `error(seen)` when `source` is silent for `firstMs` before its first value or for
 * `eachMs` after any later one, as RxJS `timeout({ first, each })` does. `timeout` re-arms a timer
 * on every value; a watch delivers thousands of events a second, so this keeps the time of the
 * last one and re-arms only when the timer comes due (`seen`: the values seen so far).
 */
export function failWhenSilent<T>(
  firstMs: number,
  eachMs: number,
  scheduler: SchedulerLike,
  error: (seen: number) => Error,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let seen = 0;
      let lastAt = scheduler.now();
      let timer: Subscription | undefined;
      const arm = (delay: number): void => {
        timer = scheduler.schedule(check, delay);
      };
      const check = (): void => {
        timer = undefined;
        const allowed = seen === 0 ? firstMs : eachMs;
        const quietFor = scheduler.now() - lastAt;
        if (quietFor >= allowed) subscriber.error(error(seen));
        else arm(allowed - quietFor);
      };
      arm(firstMs);
      const subscription = source.subscribe({
        next: (value) => {
          seen++;
          lastAt = scheduler.now();
          // The first value may shorten the wait: the timer still counts the (longer) first limit.
          if (seen === 1 && eachMs < firstMs) {
            timer?.unsubscribe();
            arm(eachMs);
          }
          subscriber.next(value);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}
