/** A run's verdict: the first oracle it broke, and the failure thrown where a run cannot go on. */
import type { Oracle } from './types.js';

/** A broken oracle, thrown where the run cannot go on (a step that does not settle). */
export class RunFailure extends Error {
  constructor(
    readonly oracle: Oracle,
    message: string,
  ) {
    super(message);
  }
}

/** The first failure of a run: what follows it is its consequence. */
export class Verdict {
  failure: RunFailure | undefined;

  get failed(): boolean {
    return this.failure !== undefined;
  }

  fail(oracle: Oracle, message: string): void {
    this.failure ??= new RunFailure(oracle, message);
  }
}
