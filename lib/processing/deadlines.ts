/** Deadlines on a scheduler: many pending calls served by one timer. */
import type { SchedulerLike, Subscription } from 'rxjs';
import { scheduleOnce } from './timers.js';

/** A pending call of `Deadlines`; pass it to `cancel`. */
export interface Deadline {
  readonly due: number;
}

interface Entry<T> extends Deadline {
  readonly seq: number;
  readonly item: T;
  /** Place in the heap; -1 once fired or cancelled. */
  index: number;
}

/**
 * Many one-shot deadlines on one scheduler action: a min-heap ordered by due time (ties in the
 * order they were added, as the scheduler itself orders them), and a single timer for the nearest.
 * Adding a deadline later than the nearest one costs no timer at all, cancelling never re-arms:
 * the timer is re-armed lazily when it fires. Runs on any RxJS scheduler, so TestScheduler's
 * virtual time drives it in marble tests.
 */
export class Deadlines<T> {
  private readonly heap: Entry<T>[] = [];
  private seq = 0;
  private armed: { readonly at: number; readonly timer: Subscription } | undefined;
  private firing = false;

  /** `due` is called with the item of every deadline that comes due. */
  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly due: (item: T) => void,
  ) {}

  /** Hands `item` to `due` once, `delay` ms from now, unless cancelled first. */
  add(delay: number, item: T): Deadline {
    const entry: Entry<T> = { due: this.scheduler.now() + Math.max(0, delay), seq: this.seq++, item, index: this.heap.length };
    this.heap.push(entry);
    this.up(entry.index);
    if (!this.firing) this.arm();
    return entry;
  }

  cancel(deadline: Deadline): void {
    const entry = deadline as Entry<T>;
    if (entry.index < 0) return;
    this.removeAt(entry.index);
    // Nothing left: stop the timer so an idle scheduler holds no timer (and no process alive).
    if (this.heap.length === 0 && this.armed) {
      this.armed.timer.unsubscribe();
      this.armed = undefined;
    }
  }

  get size(): number {
    return this.heap.length;
  }

  dispose(): void {
    this.armed?.timer.unsubscribe();
    this.armed = undefined;
    for (const entry of this.heap) entry.index = -1;
    this.heap.length = 0;
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first || (this.armed && this.armed.at <= first.due)) return;
    this.armed?.timer.unsubscribe();
    this.armed = { at: first.due, timer: scheduleOnce(this.scheduler, first.due - this.scheduler.now(), () => this.fire()) };
  }

  private fire(): void {
    this.armed = undefined;
    this.firing = true;
    try {
      const now = this.scheduler.now();
      // Deadlines added by the work itself wait for the next firing, as they would on the scheduler.
      const addedBefore = this.seq;
      for (let first = this.heap[0]; first && first.due <= now && first.seq < addedBefore; first = this.heap[0]) {
        this.removeAt(0);
        this.due(first.item);
      }
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  private removeAt(index: number): void {
    const heap = this.heap;
    const removed = heap[index];
    removed.index = -1;
    const last = heap.pop()!;
    if (index === heap.length) return;
    heap[index] = last;
    last.index = index;
    if (index > 0 && before(last, heap[(index - 1) >> 1])) this.up(index);
    else this.down(index);
  }

  private up(index: number): void {
    const heap = this.heap;
    const entry = heap[index];
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex];
      if (!before(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const entry = heap[index];
    for (;;) {
      let child = 2 * index + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && before(heap[child + 1], heap[child])) child++;
      const smaller = heap[child];
      if (!before(smaller, entry)) break;
      heap[index] = smaller;
      smaller.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}
