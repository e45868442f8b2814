/** fail: the operator's n-th write is answered with an error without reaching the server, or committed and answered 504 (timeout). */
import type { Perturbation } from '../types.js';
import type { PerturbationKind } from './kind.js';

type Fail = Extract<Perturbation, { type: 'fail' }>;

const STATUSES = [409, 500, 'timeout'] as const;

export const fail: PerturbationKind<Fail> = {
  type: 'fail',
  candidates: (reference) =>
    Array.from({ length: reference.writes }, (_, k) => STATUSES.map((status): Fail => ({ type: 'fail', write: k + 1, status }))).flat(),
  describe: (p) => `fail@write${p.write}(${p.status})`,
  withoutSteps: (p) => p,
  count: (_, coverage) => void coverage.failedRequests++,
  arm: (p, run) => ({
    beforeWrite: ({ n, method, path }) => {
      if (n !== p.write) return undefined;
      // A create or delete gets 409 only for what exists (or a failed precondition): a made-up one would lie.
      const status = p.status === 409 && (method === 'POST' || method === 'DELETE') ? 500 : p.status;
      run.log.push(`fail write #${n} ${method} ${path} with ${status}`);
      return status === 'timeout' ? 'timeout' : { status };
    },
  }),
};
