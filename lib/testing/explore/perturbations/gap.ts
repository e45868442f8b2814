/** gap: the operator's watches deliver nothing for some steps, then expire with 410: the informers relist and see only the final state. */
import type { PerturbationKind } from './kind.js';
import { armWindow, describeWindow, windowWithoutSteps, type WatchWindow, type WindowEffect } from './watch-window.js';

type Gap = Extract<WatchWindow, { type: 'gap' }>;

export const gap: PerturbationKind<Gap> = {
  type: 'gap',
  candidates: (_, steps) => {
    const list: Gap[] = [];
    for (let s = 0; s < steps; s++)
      for (let len = 1; len <= Math.min(2, steps - s); len++) list.push({ type: 'gap', fromStep: s, steps: len });
    return list;
  },
  describe: describeWindow,
  withoutSteps: windowWithoutSteps,
  count: (_, coverage) => void coverage.gaps++,
  arm: (p, run) => armWindow(p, run, expireAfterDropping),
};

const expireAfterDropping: WindowEffect = {
  mode: 'drop',
  end: (p, run, incarnation) => void run.proxy.expire(incarnation, p.watch),
  ended: (run) => `watches expire: relist (${run.proxy.eventsDropped} events dropped)`,
};
