interface Node<T> {
  readonly value: T;
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
}

/** A FIFO of distinct values with O(1) push, shift and removal of any member. */
export class FifoSet<T> {
  private readonly nodes = new Map<T, Node<T>>();
  private head: Node<T> | undefined;
  private tail: Node<T> | undefined;

  get size(): number {
    return this.nodes.size;
  }

  has(value: T): boolean {
    return this.nodes.has(value);
  }

  /** Appends `value` unless it is already queued (then it keeps its place). */
  push(value: T): void {
    if (this.nodes.has(value)) return;
    const node: Node<T> = { value, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.nodes.set(value, node);
  }

  shift(): T | undefined {
    const node = this.head;
    if (!node) return undefined;
    this.unlink(node);
    return node.value;
  }

  delete(value: T): boolean {
    const node = this.nodes.get(value);
    if (!node) return false;
    this.unlink(node);
    return true;
  }

  clear(): void {
    this.nodes.clear();
    this.head = this.tail = undefined;
  }

  private unlink(node: Node<T>): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    this.nodes.delete(node.value);
  }
}
