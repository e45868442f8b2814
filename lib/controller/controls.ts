// What a reconciler asks the framework to do once it returns. Immutable values: every
// modifier returns a new control, so a control can be built once and reused safely.

export type PrimaryWrite = 'none' | 'status' | 'resource' | 'resourceAndStatus';

export class UpdateControl<P> {
  private constructor(
    readonly write: PrimaryWrite,
    readonly resource: P | undefined,
    readonly rescheduleAfterMs: number | undefined,
  ) {}

  static noUpdate<P>(): UpdateControl<P> {
    return new UpdateControl<P>('none', undefined, undefined);
  }

  /** Writes `resource.status` through the status subresource. */
  static patchStatus<P>(resource: P): UpdateControl<P> {
    return new UpdateControl('status', resource, undefined);
  }

  /** Writes everything but status (metadata, spec, ...) of `resource`. */
  static patchResource<P>(resource: P): UpdateControl<P> {
    return new UpdateControl('resource', resource, undefined);
  }

  /** Writes the resource first, then its status. */
  static patchResourceAndStatus<P>(resource: P): UpdateControl<P> {
    return new UpdateControl('resourceAndStatus', resource, undefined);
  }

  /** Runs again at the latest after `ms`; any event-triggered run before then cancels it. */
  rescheduleAfter(ms: number): UpdateControl<P> {
    return new UpdateControl(this.write, this.resource, checkDelay(ms));
  }
}

export class DeleteControl {
  private constructor(
    readonly removeFinalizer: boolean,
    readonly rescheduleAfterMs: number | undefined,
  ) {}

  /** Cleanup is complete: the framework removes its finalizer and Kubernetes deletes the object. */
  static defaultDelete(): DeleteControl {
    return new DeleteControl(true, undefined);
  }

  /** Cleanup is not complete yet: keep the finalizer; an event or `rescheduleAfter` runs cleanup again. */
  static noFinalizerRemoval(): DeleteControl {
    return new DeleteControl(false, undefined);
  }

  rescheduleAfter(ms: number): DeleteControl {
    if (this.removeFinalizer) {
      throw new TypeError(
        'DeleteControl.rescheduleAfter: only noFinalizerRemoval() can be rescheduled; the object is gone after defaultDelete()',
      );
    }
    return new DeleteControl(false, checkDelay(ms));
  }
}

export class ErrorStatusUpdateControl<P> {
  private constructor(
    readonly resource: P | undefined,
    readonly noRetry: boolean,
    readonly rescheduleAfterMs: number | undefined,
  ) {}

  /** Writes `resource.status` through the status subresource, then retries as configured. */
  static patchStatus<P>(resource: P): ErrorStatusUpdateControl<P> {
    return new ErrorStatusUpdateControl(resource, false, undefined);
  }

  /** Writes nothing; retries as configured. */
  static defaultErrorProcessing<P>(): ErrorStatusUpdateControl<P> {
    return new ErrorStatusUpdateControl<P>(undefined, false, undefined);
  }

  /** The error cannot be fixed by trying again: no retry is scheduled. */
  withNoRetry(): ErrorStatusUpdateControl<P> {
    return new ErrorStatusUpdateControl(this.resource, true, this.rescheduleAfterMs);
  }

  /**
   * With `withNoRetry()`: run again after `ms` (an event-triggered run before then cancels it).
   * Without it the retry policy decides when the next attempt runs, and this delay is not used.
   */
  rescheduleAfter(ms: number): ErrorStatusUpdateControl<P> {
    return new ErrorStatusUpdateControl(this.resource, this.noRetry, checkDelay(ms));
  }
}

function checkDelay(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`rescheduleAfter: expected a finite number of milliseconds >= 0, got ${ms}`);
  }
  return ms;
}
