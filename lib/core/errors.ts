/** The errors rxkube throws on purpose, and how any thrown value is described in a message. */
import { isKubernetesObject, objectReference } from './redact.js';

/** Base class of every error rxkube throws on purpose, so callers can tell them from bugs. */
export class RxkubeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An option or argument is invalid. The message names the option and the value it got. */
export class ConfigurationError extends RxkubeError {
  constructor(
    /** Dotted name of the offending option, e.g. `retry.maxAttempts`. */
    readonly option: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${option}: ${message}`, options);
  }
}

/**
 * Thrown (or rejected) by a run to say "this failed, and retrying will not help" — what
 * `ErrorStatusUpdateControl.withNoRetry()` means. The run counts as a failure whose error is
 * `cause`; no retry is scheduled, the failure streak ends (the next run is attempt 0) and the
 * max-reconciliation-interval timer is armed as after any run that schedules nothing else —
 * or, with `rescheduleAfter`, a run after that many ms (EP9), as after a success asking for it.
 */
export class NoRetryError extends RxkubeError {
  readonly rescheduleAfter: number | undefined;

  constructor(
    override readonly cause: unknown,
    options: { readonly rescheduleAfter?: number | undefined } = {},
  ) {
    super(`not retried: ${describeError(cause)}`, { cause });
    const delay = options.rescheduleAfter;
    if (delay !== undefined && !(typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) {
      throw new RangeError(`NoRetryError: rescheduleAfter must be a finite number of milliseconds >= 0, got ${describeValue(delay)}`);
    }
    this.rescheduleAfter = delay;
  }
}

/**
 * A run outlived its deadline (`runTimeoutMs`, or what the run set with `ctx.setRunTimeout`): its
 * signal was aborted at the deadline and the run is a failure, retried like any other. The run's
 * slot was held until it really ended; `overrunMs` says how long after the deadline that was.
 */
export class RunTimeoutError extends RxkubeError {
  constructor(
    /** The deadline the run had, in ms from its start. */
    readonly timeoutMs: number,
    /** How long the run went on after its deadline before it ended (0: it stopped at once). */
    readonly overrunMs: number,
    /** What the run itself ended with, if it failed (an AbortError, usually). */
    override readonly cause?: unknown,
  ) {
    super(`the run did not finish within its deadline of ${timeoutMs} ms${overrunMs > 0 ? ` (it ended ${overrunMs} ms after it)` : ''}`, {
      cause,
    });
  }
}

/** A one-line description of any thrown value, for messages. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : safeJson(error);
}

/** Renders a value for an error message (`NaN`, `-1`, `"abc"`, `{...}`). */
export function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  return safeJson(value);
}

/** JSON of a value for a message; a Kubernetes object in it is written as its reference (its data may be a Secret's). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (isKubernetesObject(v) ? objectReference(v) : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * A run, or a write on a run's behalf, refused because this replica cannot be sure it still holds
 * its Lease (leader or shard member): its last successful renewal started a renew deadline ago or
 * more. Nothing was sent. Whoever holds the Lease now runs the resource.
 */
export class LeaseLostError extends RxkubeError {
  constructor(what: string) {
    super(`${what}: refused, the lease was not renewed within the renew deadline`);
  }
}
