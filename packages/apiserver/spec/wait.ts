/**
 * Waiting on a running server in the server's own specs (they cannot use rxkube/testing: the
 * server package does not depend on the toolkit).
 */

/**
 * Polls `check` every 10 ms until it returns something other than undefined or false, and
 * resolves with it; rejects after `timeoutMs` naming `what` and the last error `check` threw.
 */
export async function waitFor<T>(
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
      const reason = lastError === undefined ? '' : `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls `check` every 10 ms for `periodMs` and rejects, naming `what`, as soon as it returns false or throws. */
export async function consistently(what: string | (() => string), check: () => Promise<boolean> | boolean, periodMs = 200): Promise<void> {
  const deadline = Date.now() + periodMs;
  for (;;) {
    const failure = await Promise.resolve()
      .then(check)
      .then(
        (ok) => (ok ? undefined : false),
        (err: unknown) => err ?? new Error(String(err)),
      );
    if (failure !== undefined) {
      const description = typeof what === 'function' ? what() : what;
      const reason = failure === false ? '' : `: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}`;
      throw new Error(`${description} stopped holding during the ${periodMs} ms quiet period${reason}`);
    }
    if (Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
