import { expect } from 'chai';
import type { PerturbationKind, RunControl } from '../../../lib/testing/explore/perturbations/index.js';
import { executeRun } from '../../../lib/testing/explore/run.js';
import type { Action } from '../../../lib/testing/explore/types.js';
import { subjects } from './subjects.js';

/** A kind the explorer does not know, written here against the interface alone: it throttles one write and notes each hook. */
interface Throttle {
  readonly type: 'throttle';
  readonly write: number;
}

function throttleKind(heard: string[]): PerturbationKind<Throttle> {
  return {
    type: 'throttle',
    candidates: (reference) => Array.from({ length: reference.writes }, (_, k) => ({ type: 'throttle', write: k + 1 })),
    describe: (p) => `throttle@write${p.write}`,
    withoutSteps: (p) => p,
    count: (_, coverage) => void coverage.failedRequests++,
    arm: (p, run: RunControl) => ({
      beforeWrite: ({ n, method, path }) => {
        if (n !== p.write) return undefined;
        run.log.push(`throttle write #${n} ${method} ${path}`);
        return { status: 429 };
      },
      onWrite: ({ n }) => void heard.push(`write ${n}`),
      onStepStart: (step) => void heard.push(`start ${step}`),
      onStepEnd: async (step) => {
        heard.push(`end ${step}`);
        await run.settle(`after the throttle of step ${step}`);
      },
      afterStep: (step) => Promise.resolve(void heard.push(`after ${step}`)),
    }),
  };
}

describe('testing: explore perturbation kinds', function () {
  this.timeout(60_000);

  it('a kind defined outside the explorer plugs into a run through the PerturbationKind interface alone', async () => {
    const options = subjects.find((s) => s.name === 'scale-down')!.options('fixed');
    const actions = options.workload as readonly Action[];
    const heard: string[] = [];
    const throttle: Throttle = { type: 'throttle', write: 1 };
    const outcome = await executeRun(options, { seed: 1, actions, perturbations: [throttle] }, undefined, [throttleKind(heard)]);

    expect(outcome.failed, outcome.message).to.equal(false);
    expect(outcome.log.filter((line) => line.startsWith('throttle write #1 '))).to.have.length(1);
    // Each step's hooks in order: start, end once settled, after once judged.
    expect(heard.filter((h) => !h.startsWith('write'))).to.deep.equal(actions.flatMap((_, i) => [`start ${i}`, `end ${i}`, `after ${i}`]));
    // The throttled write never reached the server; the operator's retry did.
    const committed = heard.filter((h) => h.startsWith('write')).map((h) => Number(h.slice(6)));
    expect(committed).to.not.include(1);
    expect(committed.length).to.be.greaterThan(0);
  });

  it('a plan naming a kind the run was not given fails with its name, not silently', async () => {
    const options = subjects.find((s) => s.name === 'scale-down')!.options('fixed');
    const plan = { seed: 1, actions: options.workload as readonly Action[], perturbations: [{ type: 'throttle' }] };
    await executeRun(options, plan).then(
      () => expect.fail('accepted'),
      (err: unknown) => expect(String(err)).to.contain("unknown perturbation 'throttle'"),
    );
  });
});
