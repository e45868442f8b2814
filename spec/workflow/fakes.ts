/**
 * Scripted in-memory dependents for workflow specs. Every create/update/delete logs a start and an
 * end line, and can wait on a hand-resolved gate, so specs can prove order and overlap without
 * timers.
 */
import type { DependentResource } from '../../lib/dependent/index.js';

export interface Primary {
  readonly name: string;
}
export interface Item {
  readonly owner: string;
  readonly dependent: string;
}
export type Ctx = { readonly signal?: AbortSignal };

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every promise continuation that can run, run (one macrotask turn). Not a sleep: no timer. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface Script {
  /** Has a `delete` trait (default true). */
  readonly deletable?: boolean;
  readonly garbageCollected?: boolean;
  /** create/update waits for this. */
  readonly gate?: Promise<void>;
  readonly deleteGate?: Promise<void>;
  readonly failReconcile?: string;
  readonly failDelete?: string;
  readonly eventSource?: string;
}

type Op = 'reconcile' | 'delete';

/** The shared world of one spec: the secondaries that exist and the call log. */
export class World {
  readonly items = new Map<string, Item>();
  readonly log: string[] = [];

  /** Names whose `op` finished (successfully), in order. */
  completed(op: Op): string[] {
    const suffix = ' end';
    return this.log
      .filter((line) => line.startsWith(`${op} `) && line.endsWith(suffix))
      .map((line) => line.slice(op.length + 1, -suffix.length));
  }

  /** Names whose `op` started, in order. */
  started(op: Op): string[] {
    return this.log
      .filter((line) => line.startsWith(`${op} `) && line.endsWith(' start'))
      .map((line) => line.slice(op.length + 1, -' start'.length));
  }

  private async work(op: Op, name: string, gate: Promise<void> | undefined, failure: string | undefined) {
    this.log.push(`${op} ${name} start`);
    if (gate) await gate;
    if (failure !== undefined) {
      this.log.push(`${op} ${name} failed`);
      throw new Error(failure);
    }
    this.log.push(`${op} ${name} end`);
  }

  dependent(name: string, script: Script = {}): DependentResource<Item, Primary, Ctx, string> {
    const key = (p: Primary) => `${p.name}/${name}`;
    const write = async (desired: Item) => {
      await this.work('reconcile', name, script.gate, script.failReconcile);
      this.items.set(`${desired.owner}/${name}`, desired);
      return desired;
    };
    const dr: DependentResource<Item, Primary, Ctx, string> = {
      name,
      desired: (p) => ({ owner: p.name, dependent: name }),
      getSecondary: (p) => this.items.get(key(p)),
      create: write,
      // Match never holds, so every run writes: each reconcile shows up in the log.
      match: () => false,
      update: (_actual, desired) => write(desired),
      ...(script.garbageCollected ? { garbageCollected: true } : {}),
      ...(script.eventSource !== undefined ? { eventSource: script.eventSource } : {}),
    };
    if (script.deletable === false) return dr;
    return {
      ...dr,
      delete: async (p) => {
        await this.work('delete', name, script.deleteGate, script.failDelete);
        this.items.delete(key(p));
      },
    };
  }
}

export const primary: Primary = { name: 'p' };
