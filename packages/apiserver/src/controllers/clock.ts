/**
 * The time the simulated controllers live in: real time by default; a test passes its own clock
 * to move time forward without sleeping (a CronJob's next run, a Pod's readiness delay).
 */
export interface SimulationClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms`; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const realClock: SimulationClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** Timers by key, so that a controller keeps at most one pending timer per object. */
export class Timers {
  private readonly cancels = new Map<string, () => void>();

  constructor(private readonly clock: SimulationClock) {}

  set(key: string, ms: number, fn: () => void): void {
    this.cancels.get(key)?.();
    this.cancels.set(
      key,
      this.clock.setTimeout(() => {
        this.cancels.delete(key);
        fn();
      }, ms),
    );
  }

  has(key: string): boolean {
    return this.cancels.has(key);
  }

  clear(key: string): void {
    this.cancels.get(key)?.();
    this.cancels.delete(key);
  }

  close(): void {
    for (const cancel of this.cancels.values()) cancel();
    this.cancels.clear();
  }
}
