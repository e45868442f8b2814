/** Waiting on real-time state in integration tests: polling with a deadline, and a quiet period. */
import { describeError } from '../core/index.js';

/**
 * Polls `check` every 10 ms until it returns something other than undefined or false, and
 * resolves with it; rejects after `timeoutMs` naming `what` (a function is called only then, so
 * it can describe the state at the time) and the last error `check` threw.
 */
export async function eventually<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const description = typeof what === 'function' ? what() : what;
      const reason = lastError === undefined ? '' : `: ${lastError instanceof Error ? lastError.message : describeError(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The quiet period before a "nothing more happened" assertion: polls `check` every 10 ms for
 * `periodMs` and rejects, naming `what`, as soon as it returns false or throws. Unlike a sleep
 * and one assertion after it, it fails at the moment the unwanted thing happens, and says so.
 */
export async function consistently(what: string | (() => string), check: () => Promise<boolean> | boolean, periodMs = 200): Promise<void> {
  const deadline = Date.now() + periodMs;
  for (;;) {
    let failure: unknown;
    try {
      if (await check()) failure = undefined;
      else failure = false;
    } catch (err) {
      failure = err;
    }
    if (failure !== undefined) {
      const description = typeof what === 'function' ? what() : what;
      const reason = failure === false ? '' : `: ${failure instanceof Error ? failure.message : describeError(failure)}`;
      throw new Error(`${description} stopped holding during the ${periodMs} ms quiet period${reason}`);
    }
    if (Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
