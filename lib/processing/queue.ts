/** The links a value carries to be a member of one `FifoSet` (an intrusive list: no node objects). */
export interface FifoLinks<T> {
  fifoPrev: T | undefined;
  fifoNext: T | undefined;
  fifoMember: boolean;
}

/** A FIFO of distinct values with O(1) push, shift and removal of any member, allocating nothing. */
export class FifoSet<T extends FifoLinks<T>> {
  private head: T | undefined;
  private tail: T | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(value: T): boolean {
    return value.fifoMember;
  }

  /** Appends `value` unless it is already queued (then it keeps its place). */
  push(value: T): void {
    if (value.fifoMember) return;
    value.fifoMember = true;
    value.fifoPrev = this.tail;
    value.fifoNext = undefined;
    if (this.tail) this.tail.fifoNext = value;
    else this.head = value;
    this.tail = value;
    this.count++;
  }

  shift(): T | undefined {
    const value = this.head;
    if (value) this.unlink(value);
    return value;
  }

  delete(value: T): boolean {
    if (!value.fifoMember) return false;
    this.unlink(value);
    return true;
  }

  clear(): void {
    for (let value = this.head; value; value = value.fifoNext) value.fifoMember = false;
    this.head = this.tail = undefined;
    this.count = 0;
  }

  private unlink(value: T): void {
    if (value.fifoPrev) value.fifoPrev.fifoNext = value.fifoNext;
    else this.head = value.fifoNext;
    if (value.fifoNext) value.fifoNext.fifoPrev = value.fifoPrev;
    else this.tail = value.fifoPrev;
    value.fifoPrev = value.fifoNext = undefined;
    value.fifoMember = false;
    this.count--;
  }
}
