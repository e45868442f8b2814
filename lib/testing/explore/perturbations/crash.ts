/** crash: the operator is killed right after its n-th write committed, and a fresh one starts at once (Sieve's crash between writes). */
import type { Perturbation } from '../types.js';
import type { PerturbationKind } from './kind.js';

type Crash = Extract<Perturbation, { type: 'crash' }>;

export const crash: PerturbationKind<Crash> = {
  type: 'crash',
  candidates: (reference) => Array.from({ length: reference.writes }, (_, k) => ({ type: 'crash', afterWrite: k + 1 })),
  describe: (p) => `crash@write${p.afterWrite}`,
  withoutSteps: (p) => p,
  count: (p, coverage) => void coverage.crashPoints.add(p.afterWrite),
  arm: (p, run) => ({
    onWrite: ({ n, method, path }) => {
      if (n !== p.afterWrite) return undefined;
      void run.operator.crashAndRestart(`crash after write #${n} ${method} ${path}; restart`);
      return 'crash';
    },
  }),
};
