import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';

/** In which order a woken process fires the timers that came due while it was frozen. */
export type WakeOrder = 'due' | 'latest-first';

interface Held {
  readonly due: number;
  readonly seq: number;
  readonly action: SchedulerAction<unknown>;
  readonly run: () => void;
}

/**
 * One process's view of a shared virtual clock that can be frozen, as SIGSTOP or a long GC pause
 * freezes a process: while frozen, its timers that come due do not run; on `thaw` they all run at
 * once, at the time of waking, in the order asked ('due': the order they came due, as Node fires
 * them; 'latest-first': the timer set last fires first, the worst case for a deadline set long ago).
 */
export class FreezableScheduler implements SchedulerLike {
  private frozen = false;
  private held: Held[] = [];
  private seq = 0;
  private io: (() => void)[] = [];

  constructor(private readonly base: SchedulerLike) {}

  now(): number {
    return this.base.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the action below runs as a plain function, whose `this` is the action
    const clock = this;
    const due = this.now() + delay;
    return this.base.schedule(
      function (this: SchedulerAction<T>, s?: T) {
        if (!clock.frozen) return work.call(this, s);
        clock.held.push({ due, seq: clock.seq++, action: this, run: () => work.call(this, s) });
      },
      delay,
      state,
    );
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  freeze(): void {
    this.frozen = true;
  }

  /** Network input (an answer, a watch event): handled now, or, while frozen, on waking after the timers (as Node's event loop does). */
  deliver(input: () => void): void {
    if (this.frozen) this.io.push(input);
    else input();
  }

  /** A promise whose settlement reaches the process only when it is not frozen. */
  arrive<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      promise.then(
        (value) => this.deliver(() => resolve(value)),
        (err: unknown) => this.deliver(() => reject(err)),
      );
    });
  }

  /** Wakes: every timer that came due meanwhile runs now, in `order` (one cancelled meanwhile does not), then the input that arrived. */
  thaw(order: WakeOrder): void {
    this.frozen = false;
    const held = this.held.sort((a, b) => (order === 'due' ? a.due - b.due || a.seq - b.seq : b.seq - a.seq));
    this.held = [];
    for (const timer of held) if (!timer.action.closed) timer.run();
    const io = this.io;
    this.io = [];
    for (const input of io) input();
  }
}
