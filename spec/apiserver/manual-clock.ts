/** A simulation clock the specs move by hand (the simulated controllers' readiness delays, schedules). */
import type { SimulationClock } from '../../lib/apiserver/index.js';

/** A clock a test moves by hand: timers fire when `advance` passes their time. */
export class ManualClock implements SimulationClock {
  private time = Date.parse('2026-01-01T00:00:00Z');
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): () => void {
    const t = { at: this.time + ms, fn, cancelled: false };
    this.timers.push(t);
    return () => void (t.cancelled = true);
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.at <= this.time && !t.cancelled);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
