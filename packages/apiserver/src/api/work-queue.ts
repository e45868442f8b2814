/**
 * The work queue of the controllers inside the server (GC, namespaces, CRDs, simulators): keys
 * added while handling store events are processed once each on a later turn of the event loop,
 * so the controllers run after the write that triggered them has been answered.
 */
export class WorkQueue {
  private readonly keys = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;

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

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.keys.clear();
  }
}
