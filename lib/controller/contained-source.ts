/**
 * ES5, OB3: a user's event source is outside code, like a mapper: its failure must not end the
 * controller. Each entry of `ControllerConfig.sources` is piped through `containedSource`: an
 * error is reported (logged with the source's name, counted) and the source is subscribed again
 * after a backoff, or, if so configured, left stopped; the other sources and the runs go on.
 */
import { asyncScheduler, defer, EMPTY, retry, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { ConfigurationError, describeValue, isRecord, requireKnownKeys, type ResourceEvent } from '../core/index.js';
import { backoffDelay, WATCH_BACKOFF, type BackoffPolicy } from '../core/index.js';

/** What a controller does when one of its `sources` errors. */
export interface SourceErrorOptions {
  /** Subscribe to the source again after a backoff (default true); false leaves it stopped. */
  readonly resubscribe?: boolean;
  /** The backoff between resubscriptions (default: the watch backoff, 800 ms doubling up to 30 s, reset after 30 s without error). */
  readonly backoff?: Partial<BackoffPolicy>;
  /** While a source is failed (from its error until it is subscribed again, or for good when left stopped), /readyz answers 503 (default false). */
  readonly affectsReadiness?: boolean;
}

export interface ResolvedSourceErrorOptions {
  readonly resubscribe: boolean;
  readonly backoff: Partial<BackoffPolicy>;
  readonly affectsReadiness: boolean;
}

const SOURCE_ERROR_OPTIONS = { resubscribe: true, backoff: true, affectsReadiness: true } as const satisfies Record<
  keyof SourceErrorOptions,
  true
>;
const BACKOFF_OPTIONS = { initialMs: true, maxMs: true, factor: true, jitter: true, resetAfterMs: true } as const satisfies Record<
  keyof BackoffPolicy,
  true
>;

/** Validates `ControllerConfig.sourceErrors` (ConfigurationError naming the option). */
export function resolveSourceErrorOptions(options: unknown): ResolvedSourceErrorOptions {
  if (options === undefined) return { resubscribe: true, backoff: {}, affectsReadiness: false };
  if (!isRecord(options)) throw new ConfigurationError('sourceErrors', `must be an object, got ${describeValue(options)}`);
  requireKnownKeys('sourceErrors', options, SOURCE_ERROR_OPTIONS);
  const flag = (key: 'resubscribe' | 'affectsReadiness', fallback: boolean): boolean => {
    const value = options[key];
    if (value !== undefined && typeof value !== 'boolean')
      throw new ConfigurationError(`sourceErrors.${key}`, `must be a boolean, got ${describeValue(value)}`);
    return value ?? fallback;
  };
  const backoff = options['backoff'] ?? {};
  if (!isRecord(backoff)) throw new ConfigurationError('sourceErrors.backoff', `must be an object, got ${describeValue(backoff)}`);
  requireKnownKeys('sourceErrors.backoff', backoff, BACKOFF_OPTIONS);
  try {
    backoffDelay(0, backoff);
  } catch (err) {
    throw new ConfigurationError('sourceErrors.backoff', err instanceof Error ? err.message : String(err));
  }
  return {
    resubscribe: flag('resubscribe', true),
    backoff: backoff,
    affectsReadiness: flag('affectsReadiness', false),
  };
}

export interface ContainedSourceOptions {
  readonly policy: ResolvedSourceErrorOptions;
  readonly scheduler?: SchedulerLike | undefined;
  /** Called at each error, with the number of errors in a row and the delay before resubscribing (undefined: left stopped). */
  readonly onError: (error: unknown, attempt: number, retryInMs: number | undefined) => void;
  /** Called when the source is subscribed again. */
  readonly onResubscribe?: () => void;
}

/** `events$`, whose errors are reported and, by the policy, followed by a new subscription after a backoff or by completion. */
export function containedSource(events$: Observable<ResourceEvent>, options: ContainedSourceOptions): Observable<ResourceEvent> {
  const { policy } = options;
  const scheduler = options.scheduler ?? asyncScheduler;
  const resetAfterMs = { ...WATCH_BACKOFF, ...policy.backoff }.resetAfterMs;
  return defer(() => {
    // Errors in a row: a source that stayed up for resetAfterMs starts again from the shortest delay.
    let streak = 0;
    let subscribedAt = scheduler.now();
    return events$.pipe(
      retry({
        delay: (error: unknown) => {
          if (scheduler.now() - subscribedAt >= resetAfterMs) streak = 0;
          const delay = policy.resubscribe ? backoffDelay(streak, policy.backoff) : undefined;
          streak++;
          options.onError(error, streak, delay);
          if (delay === undefined) return EMPTY;
          return timer(delay, scheduler).pipe(
            tap(() => {
              subscribedAt = scheduler.now();
              options.onResubscribe?.();
            }),
          );
        },
      }),
    );
  });
}
