/** A SimulationClock a test moves by hand: timers fire when `advance` passes their time. */
import type { SimulationClock } from '../src/controllers/clock.js';

export class ManualClock implements SimulationClock {
  private time: number;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.time = start;
  }

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

  /** Moves to an ISO time (not backwards). */
  advanceTo(iso: string): void {
    this.advance(Math.max(0, Date.parse(iso) - this.time));
  }

  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
