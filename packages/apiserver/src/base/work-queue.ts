/**
 * The work queue of the controllers inside the server (GC, namespaces, CRDs, simulators): keys
 * added while handling store events are processed once each on a later turn of the event loop,
 * so the controllers run after the write that triggered them has been answered.
 */
/** The first delay of a key handed to `retryLater`; it doubles with each failure, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 60_000;

export class WorkQueue {
  private readonly keys = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  /** Failures in a row per key, and the timers that add keys back. */
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly name: string,
    private readonly work: (key: string) => void,
  ) {}

  add(key: string): void {
    if (this.closed) return;
    this.keys.add(key);
    this.scheduled ??= setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = undefined;
    const batch = [...this.keys];
    this.keys.clear();
    for (const key of batch) {
      if (this.closed) return;
      try {
        this.work(key);
      } catch (err) {
        console.error(`rxkube apiserver: ${this.name} failed on ${key}`, err);
      }
    }
  }

  /**
   * Adds `key` again after a delay that grows with each failure in a row (as client-go's
   * rate-limited queue requeues an item whose work failed); `forget` starts the count over.
   */
  retryLater(key: string): void {
    if (this.closed || this.retries.has(key)) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const timer = setTimeout(
      () => {
        this.retries.delete(key);
        this.add(key);
      },
      Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** n),
    );
    timer.unref();
    this.retries.set(key, timer);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  close(): void {
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    this.failures.clear();
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.keys.clear();
  }
}
