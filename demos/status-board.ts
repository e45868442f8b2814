/**
 * The demos' live view (not part of the rxkube package): one line per object of an informer,
 * redrawn in place on a terminal and printed when it changes otherwise, with notes in between.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { firstValueFrom, timeout, type Subscription } from 'rxjs';
import type { Informer } from '../lib/pipeline.js';

export interface StatusBoardOptions<T> {
  /** Redraw in place (a terminal) instead of printing changed lines. */
  readonly live: boolean;
  /** The object's line. */
  readonly describe: (object: T) => string;
  /** The line printed when an object is gone (not on a terminal). */
  readonly deleted: (name: string) => string;
}

export class StatusBoard<T extends KubernetesObject> {
  private readonly lines = new Map<string, string>();
  private drawn = 0;
  private readonly subscription: Subscription;

  constructor(
    private readonly informer: Informer<T>,
    private readonly options: StatusBoardOptions<T>,
  ) {
    this.subscription = informer.events$.subscribe(() => this.render());
    this.render();
  }

  /** Resolves once `check` holds for the current objects by name (re-checked on every change, and every 250 ms). */
  async until(check: (objects: Map<string, T>) => boolean | Promise<boolean>, ms: number): Promise<void> {
    const snapshot = () => new Map(this.informer.store.list().map((o) => [o.metadata?.name ?? '', o]));
    const deadline = Date.now() + ms;
    for (;;) {
      if (await check(snapshot())) return;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s; see the operator log`);
      await firstValueFrom(this.informer.events$.pipe(timeout(250))).catch(() => undefined);
    }
  }

  note(message: string): void {
    this.clear();
    console.log(`• ${message}`);
    this.render();
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  private render(): void {
    const objects = this.informer.store.list().sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    const current = new Map(objects.map((o) => [o.metadata?.name ?? '', this.options.describe(o)]));
    if (this.options.live) {
      this.clear();
      for (const line of current.values()) console.log(line);
      this.drawn = current.size;
    } else {
      for (const [name, line] of current) if (this.lines.get(name) !== line) console.log(line);
      for (const name of this.lines.keys()) if (!current.has(name)) console.log(this.options.deleted(name));
    }
    this.lines.clear();
    for (const [name, line] of current) this.lines.set(name, line);
  }

  private clear(): void {
    if (this.options.live && this.drawn > 0) process.stdout.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }
}
