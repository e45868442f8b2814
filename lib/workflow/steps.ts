/**
 * The fan-out engine under both executors: steps are pushed into a stream and run through
 * `mergeMap` with a concurrency bound. A step does its asynchronous work, then hands back a
 * synchronous `settle` function that records the outcome and may submit further steps. The
 * stream completes when no step is queued or running.
 */
import { Observable, Subject, from, mergeMap } from 'rxjs';

/** Asynchronous work that must not reject; its `settle` applies the outcome and returns events. */
export type Step<T> = () => Promise<() => readonly T[]>;

export type Submit<T> = (step: Step<T>) => void;

export function runSteps<T>(maxConcurrency: number, start: (submit: Submit<T>) => void): Observable<T> {
  return new Observable<T>((subscriber) => {
    const steps = new Subject<Step<T>>();
    let unfinished = 0;
    const submit: Submit<T> = (step) => {
      unfinished += 1;
      steps.next(step);
    };
    const subscription = steps.pipe(mergeMap((step) => from(step()), maxConcurrency)).subscribe({
      next: (settle) => {
        const events = settle();
        unfinished -= 1;
        for (const event of events) subscriber.next(event);
        if (unfinished === 0) subscriber.complete();
      },
      error: (err: unknown) => subscriber.error(err),
    });
    start(submit);
    if (unfinished === 0) subscriber.complete();
    return subscription;
  });
}
