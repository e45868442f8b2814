/** coalesce: the operator's watch events of some steps (of one watch, when named) are held and delivered at once at the end. */
import type { PerturbationKind } from './kind.js';
import { armWindow, describeWindow, windowWithoutSteps, type WatchWindow, type WindowEffect } from './watch-window.js';

type Coalesce = Extract<WatchWindow, { type: 'coalesce' }>;

export const coalesce: PerturbationKind<Coalesce> = {
  type: 'coalesce',
  candidates: (reference, steps) => {
    const list: Coalesce[] = [];
    for (let s = 0; s + 1 < steps; s++)
      for (let len = 2; len <= Math.min(3, steps - s); len++) list.push({ type: 'coalesce', fromStep: s, steps: len });
    // One watch's events of one step merged while the other watches deliver as they come (when the operator has several).
    if (reference.watches.length > 1)
      for (let s = 0; s < steps; s++) for (const watch of reference.watches) list.push({ type: 'coalesce', fromStep: s, steps: 1, watch });
    return list;
  },
  describe: describeWindow,
  withoutSteps: windowWithoutSteps,
  count: (_, coverage) => void coverage.coalesced++,
  arm: (p, run) => armWindow(p, run, releaseHeld),
};

const releaseHeld: WindowEffect = {
  mode: 'hold',
  end: (_, run, incarnation) => run.proxy.release(incarnation),
  ended: () => 'held watch events delivered at once',
};
