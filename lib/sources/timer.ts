/** Timer sources: a trigger per resource after a delay, rescheduled or cancelled. */
import { asyncScheduler, Observable, Subject, timer, type SchedulerLike, type Subscription } from 'rxjs';
import { resourceKey, type ResourceEvent, type ResourceID } from '../core/index.js';
import { requireResourceID as checkId, trigger } from './polling.js';

/**
 * ES5: one-shot timers per primary. `schedule(id, delayMs)` triggers the primary after the delay
 * (replacing a timer already set for it); `cancel(id)` drops it. Timers run on the scheduler.
 */
export class TimerSource {
  private readonly timers = new Map<string, Subscription>();
  private readonly triggers = new Subject<ResourceEvent<never>>();

  constructor(
    readonly name: string,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    if (typeof name !== 'string' || name === '') throw new Error('timerSource: name is required');
  }

  get events$(): Observable<ResourceEvent<never>> {
    return this.triggers.asObservable();
  }

  schedule(id: ResourceID, delayMs: number): void {
    checkId(this.name, id);
    if (!(Number.isFinite(delayMs) && delayMs >= 0)) {
      throw new Error(`timerSource ${this.name}: delayMs must be a non-negative number (got ${String(delayMs)})`);
    }
    const key = resourceKey(id);
    this.timers.get(key)?.unsubscribe();
    this.timers.set(
      key,
      timer(delayMs, this.scheduler).subscribe(() => {
        this.timers.delete(key);
        this.triggers.next(trigger<never>(this.name, id, undefined));
      }),
    );
  }

  cancel(id: ResourceID): void {
    const key = resourceKey(id);
    this.timers.get(key)?.unsubscribe();
    this.timers.delete(key);
  }

  /** Primaries with a pending timer (keys). */
  pending(): string[] {
    return [...this.timers.keys()];
  }

  stop(): void {
    for (const t of this.timers.values()) t.unsubscribe();
    this.timers.clear();
    this.triggers.complete();
  }
}

export function timerSource(name: string, scheduler?: SchedulerLike): TimerSource {
  return new TimerSource(name, scheduler);
}
