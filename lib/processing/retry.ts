/** Retry policies: how long a failing resource waits before each retry. */
import { ConfigurationError, describeError, describeValue, requirePositiveDuration, type BackoffPolicy } from '../core/index.js';

/**
 * A retry policy: how long to wait before each retry of a failing resource. Implement it to
 * write your own; it must be a pure function of the attempt number.
 */
export interface Retry {
  /**
   * Milliseconds to wait before retry number `attempt` (1 = the first retry after the first
   * failure), or `undefined` when that retry must not happen (retries exhausted).
   */
  delayBefore(attempt: number): number | undefined;
}

/**
 * GenericRetry's settings, in the one backoff vocabulary (`BackoffPolicy`'s names: `initialMs`,
 * `maxMs`, `factor`), and how many retries.
 */
export interface GenericRetrySettings extends Readonly<Pick<BackoffPolicy, 'initialMs' | 'maxMs' | 'factor'>> {
  /** Number of retries after the first failure; -1 = unlimited. */
  readonly maxAttempts: number;
}

const DEFAULTS: GenericRetrySettings = {
  maxAttempts: 5,
  initialMs: 2000,
  factor: 1.5,
  maxMs: 15187,
};

/**
 * Exponential backoff as JOSDK's GenericRetry: the first two retries wait `initialMs`, then each
 * waits the previous delay times `factor` (truncated to whole ms), bounded by `maxMs`; no jitter.
 * Defaults (EP7): 5 retries, 2000, 2000, 3000, 4500, 6750 ms.
 * Unlike JOSDK the bound also applies to the first two delays, so no delay ever exceeds it.
 * Immutable: every `with...` returns a new policy.
 */
export class GenericRetry implements Retry {
  private constructor(readonly settings: GenericRetrySettings) {}

  static defaults(): GenericRetry {
    return new GenericRetry(DEFAULTS);
  }

  /** Retries forever with the default delays. */
  static unlimited(): GenericRetry {
    return GenericRetry.defaults().withMaxAttempts(-1);
  }

  /** @param maxAttempts retries after the first failure (a positive integer), or -1 for unlimited. */
  withMaxAttempts(maxAttempts: number): GenericRetry {
    if (maxAttempts !== -1 && (!Number.isSafeInteger(maxAttempts) || maxAttempts <= 0)) {
      throw new ConfigurationError(
        'retry.maxAttempts',
        `must be a positive integer or -1 (unlimited), got ${describeValue(maxAttempts)}; to disable retries pass retry: false`,
      );
    }
    return new GenericRetry({ ...this.settings, maxAttempts });
  }

  /** The delay before the first and second retries. */
  withInitialMs(ms: number): GenericRetry {
    return new GenericRetry({ ...this.settings, initialMs: requirePositiveDuration('retry.initialMs', ms) });
  }

  /** Each delay after the second is the previous one times `factor` (>= 1). */
  withFactor(factor: number): GenericRetry {
    if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
      throw new ConfigurationError('retry.factor', `must be a finite number >= 1, got ${describeValue(factor)}`);
    }
    return new GenericRetry({ ...this.settings, factor });
  }

  /** @param ms the largest delay, or -1 for no bound. */
  withMaxMs(ms: number): GenericRetry {
    if (ms !== -1) requirePositiveDuration('retry.maxMs', ms);
    return new GenericRetry({ ...this.settings, maxMs: ms });
  }

  /** @deprecated Renamed `withInitialMs`; this alias goes in the next release. */
  withInitialInterval(ms: number): GenericRetry {
    return this.withInitialMs(ms);
  }

  /** @deprecated Renamed `withFactor`; this alias goes in the next release. */
  withMultiplier(multiplier: number): GenericRetry {
    return this.withFactor(multiplier);
  }

  /** @deprecated Renamed `withMaxMs`; this alias goes in the next release. */
  withMaxInterval(ms: number): GenericRetry {
    return this.withMaxMs(ms);
  }

  delayBefore(attempt: number): number | undefined {
    const { maxAttempts, initialMs, factor, maxMs } = this.settings;
    if (!Number.isSafeInteger(attempt) || attempt < 1) return undefined;
    if (maxAttempts !== -1 && attempt > maxAttempts) return undefined;
    const bound = maxMs === -1 ? Infinity : maxMs;
    let delay = Math.min(initialMs, bound);
    for (let n = 3; n <= attempt && delay < bound; n++) {
      delay = Math.min(Math.trunc(delay * factor), bound);
    }
    return delay;
  }
}

/**
 * The policy's delay before retry `attempt`, checked: a policy that throws, or answers something
 * that is not a delay (a finite number of ms >= 0, or undefined for "no retry"), is a
 * ConfigurationError naming `retry` and what it answered.
 */
export function retryDelayOf(retry: Retry, attempt: number): number | undefined {
  let delay: unknown;
  try {
    delay = retry.delayBefore(attempt);
  } catch (err) {
    throw new ConfigurationError('retry', `delayBefore(${attempt}) threw ${describeError(err)}`, { cause: err });
  }
  if (delay !== undefined && !(typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) {
    throw new ConfigurationError(
      'retry',
      `delayBefore(${attempt}) returned ${describeValue(delay)}; it must return a finite number of milliseconds >= 0, or undefined for no retry`,
    );
  }
  return delay;
}

/** How many first attempts a policy is asked about when it is configured. */
const PROBED_ATTEMPTS = 3;

/**
 * Asks a policy (pure, by contract) for its first delays, so that a broken one is rejected when
 * it is configured rather than on the first failure.
 */
export function probeRetry<R extends Retry>(retry: R): R {
  for (let attempt = 1; attempt <= PROBED_ATTEMPTS; attempt++) retryDelayOf(retry, attempt);
  return retry;
}
