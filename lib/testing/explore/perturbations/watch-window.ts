/** What gap and coalesce share: a window of steps during which the operator's watches (or one of them) drop or hold what comes. */
import type { Incarnation } from '../../fault-proxy.js';
import type { Perturbation } from '../types.js';
import type { PerturbationHooks, RunControl } from './kind.js';

export type WatchWindow = Extract<Perturbation, { type: 'gap' | 'coalesce' }>;

/** What a kind of window does to the watches, and how it ends. */
export interface WindowEffect {
  readonly mode: 'drop' | 'hold';
  /** Undoes what the window did to the incarnation's watches once they pass again; a promise when that waits. */
  end(p: WatchWindow, run: RunControl, incarnation: Incarnation): Promise<void> | undefined;
  /** The log line of its end, written as the end begins. */
  ended(run: RunControl): string;
}

export const describeWindow = (p: WatchWindow): string =>
  `${p.type}@steps${p.fromStep}-${p.fromStep + p.steps - 1}${p.watch ? `(watch ${p.watch})` : ''}`;

/** The window over the kept steps of its span; undefined when none is kept. */
export function windowWithoutSteps<W extends WatchWindow>(p: W, renumber: (step: number) => number | undefined): W | undefined {
  const kept = Array.from({ length: p.steps }, (_, k) => renumber(p.fromStep + k)).filter((i): i is number => i !== undefined);
  const [fromStep] = kept;
  return fromStep === undefined ? undefined : { ...p, fromStep, steps: kept.length };
}

/** At the window's first step the watches switch to the effect's mode; once its last step settled they pass again and the effect ends. */
export function armWindow(p: WatchWindow, run: RunControl, effect: WindowEffect): PerturbationHooks {
  const last = p.fromStep + p.steps - 1;
  return {
    onStepStart: (index) => {
      if (index !== p.fromStep) return;
      run.proxy.watchMode = effect.mode;
      run.proxy.watchOnly = p.watch;
      run.log.push(`${p.type} watch events of steps ${p.fromStep}..${last}${p.watch ? ` on the watch ${p.watch} only` : ''}`);
    },
    onStepEnd: async (index) => {
      if (index === last) await closeWindow(p, run, effect);
    },
  };
}

async function closeWindow(p: WatchWindow, run: RunControl, effect: WindowEffect): Promise<void> {
  const incarnation = run.operator.incarnation;
  run.proxy.watchMode = 'pass';
  run.proxy.watchOnly = undefined;
  // The line goes in before the watches deliver: the operator's writes during a release, spaced
  // in time, would otherwise land before or after it from one replay to the next.
  run.log.push(effect.ended(run));
  const ending = incarnation ? effect.end(p, run, incarnation) : undefined;
  if (ending) await ending;
  await run.settle(`after the ${p.type} ending at step ${p.fromStep + p.steps - 1}`);
}
