/** stale: after a step settled the operator restarts on a view of the cluster as at an earlier step, then catches up (Sieve's stale read). */
import type { Perturbation } from '../types.js';
import type { PerturbationKind, RunControl } from './kind.js';

type Stale = Extract<Perturbation, { type: 'stale' }>;

export const stale: PerturbationKind<Stale> = {
  type: 'stale',
  candidates: (_, steps) => {
    const list: Stale[] = [];
    for (let s = steps - 1; s >= 0; s--) {
      for (let j = s; j >= 0; j--) {
        list.push({ type: 'stale', afterStep: s, view: { step: j, at: 'applied' } });
        if (j < s) list.push({ type: 'stale', afterStep: s, view: { step: j, at: 'settled' } });
      }
    }
    return list;
  },
  describe: (p) => `stale@step${p.afterStep}(view step${p.view.step} ${p.view.at})`,
  withoutSteps: (p, renumber) => {
    const afterStep = renumber(p.afterStep);
    const step = renumber(p.view.step);
    return afterStep === undefined || step === undefined ? undefined : { ...p, afterStep, view: { ...p.view, step } };
  },
  count: (_, coverage) => void coverage.staleViews++,
  arm: (p, run) => ({
    afterStep: async (index) => {
      const view = run.views[p.view.step];
      if (index === p.afterStep && view) await restartOnView(p, view, run);
    },
  }),
};

/** The operator crashes and restarts seeing the cluster as at the planned step, settles on that view, then catches up. */
async function restartOnView(p: Stale, view: RunControl['views'][number], run: RunControl): Promise<void> {
  const index = p.afterStep;
  const rvAt = p.view.at === 'applied' ? view.applied : view.settled;
  await run.operator.crashAndRestart(
    `crash after step ${index}; restart seeing the cluster as at step ${p.view.step} ${p.view.at} (revision ${rvAt})`,
    rvAt,
  );
  await run.settle('on the stale view');
  const incarnation = run.operator.incarnation;
  if (incarnation && incarnation.staleRv !== undefined) {
    run.log.push('the stale view catches up');
    await run.proxy.release(incarnation);
  }
  await run.settle('after catching up');
}
