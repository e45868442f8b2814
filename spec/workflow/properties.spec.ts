/**
 * Property tests over random DAGs: the executors against a direct model of the reference rules.
 * Dependents take a random number of microtask turns, so runs interleave differently — no timers.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { DependentResource } from '../../lib/dependent/index.js';
import { workflow } from '../../lib/workflow/index.js';

interface NodeSpec {
  readonly dependsOn: readonly number[];
  readonly turns: number;
  readonly fails: boolean;
  /** Reconcile: ready postcondition. Cleanup: delete postcondition. */
  readonly condition: boolean;
}

const dagArb = fc
  .integer({ min: 1, max: 8 })
  .chain((size) =>
    fc.tuple(
      ...Array.from({ length: size }, (_, i) =>
        fc.record({
          dependsOn: i === 0 ? fc.constant([]) : fc.uniqueArray(fc.integer({ min: 0, max: i - 1 }), { maxLength: 3 }),
          turns: fc.integer({ min: 0, max: 5 }),
          fails: fc.boolean(),
          condition: fc.boolean(),
        }),
      ),
    ),
  )
  .map((nodes): NodeSpec[] => nodes);

const name = (i: number) => `n${i}`;

async function turns(n: number): Promise<void> {
  for (let k = 0; k < n; k++) await Promise.resolve();
}

function build(specs: readonly NodeSpec[], withFailures: boolean, maxConcurrency: number) {
  const log: string[] = [];
  let running = 0;
  let peak = 0;
  const work = async (op: string, i: number) => {
    running += 1;
    peak = Math.max(peak, running);
    log.push(`${op} ${i} start`);
    await turns(specs[i].turns);
    running -= 1;
    if (withFailures && specs[i].fails) {
      log.push(`${op} ${i} failed`);
      throw new Error(`n${i} failed`);
    }
    log.push(`${op} ${i} end`);
  };
  let builder = workflow<object>();
  specs.forEach((spec, i) => {
    const dr: DependentResource<string, object> = {
      name: name(i),
      reconcile: async () => {
        await work('reconcile', i);
        return { operation: 'unchanged', resource: name(i) };
      },
      delete: () => work('delete', i),
    };
    const condition = () => !withFailures || spec.condition;
    builder = builder.add(dr, {
      dependsOn: spec.dependsOn.map(name),
      readyPostcondition: condition,
      deletePostcondition: condition,
    });
  });
  return { wf: builder.build({ maxConcurrency }), log, peak: () => peak };
}

const index = (log: readonly string[], line: string) => log.indexOf(line);

describe('workflow properties over random DAGs', () => {
  it('WF2: reconcile order — each node starts after everything it depends on ended; concurrency stays bounded', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, fc.integer({ min: 1, max: 4 }), async (specs, max) => {
        const { wf, log, peak } = build(specs, false, max);
        const result = await wf.reconcile({}, {});
        expect(result.reconciled).to.have.length(specs.length);
        specs.forEach((spec, i) => {
          for (const d of spec.dependsOn) {
            expect(index(log, `reconcile ${d} end`)).to.be.lessThan(index(log, `reconcile ${i} start`));
          }
        });
        expect(peak()).to.be.at.most(max);
      }),
      { numRuns: 100 },
    );
  });

  it('WF2: cleanup order — each node is deleted after everything that depends on it', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, fc.integer({ min: 1, max: 4 }), async (specs, max) => {
        const { wf, log, peak } = build(specs, false, max);
        const result = await wf.cleanup({}, {});
        expect(result.deleteCalled).to.have.length(specs.length);
        specs.forEach((spec, i) => {
          for (const d of spec.dependsOn) {
            expect(index(log, `delete ${i} end`)).to.be.lessThan(index(log, `delete ${d} start`));
          }
        });
        expect(peak()).to.be.at.most(max);
      }),
      { numRuns: 100 },
    );
  });

  it('WF2: reconcile outcomes with errors and unready nodes match the rules', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, async (specs) => {
        const { wf } = build(specs, true, 3);
        const result = await wf.reconcile({}, {});
        // Model: a node is attempted when every node it depends on was reconciled and ready.
        const expected: string[] = [];
        const readyOk: boolean[] = [];
        specs.forEach((spec, i) => {
          const attempted = spec.dependsOn.every((d) => readyOk[d]);
          const outcome = !attempted ? 'notVisited' : spec.fails ? 'errored' : 'reconciled';
          readyOk[i] = outcome === 'reconciled' && spec.condition;
          expected.push(outcome);
        });
        expect(specs.map((_, i) => result.dependent(name(i)).outcome)).to.deep.equal(expected);
        expect(specs.map((_, i) => result.dependent(name(i)).ready)).to.deep.equal(readyOk);
      }),
      { numRuns: 100 },
    );
  });

  it('WF2: cleanup outcomes with errors and unmet delete postconditions match the rules', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, async (specs) => {
        const { wf } = build(specs, true, 3);
        const result = await wf.cleanup({}, {});
        const goneOk: boolean[] = [];
        const expected: string[] = [];
        for (let i = specs.length - 1; i >= 0; i--) {
          const dependents = specs.flatMap((s, j) => (s.dependsOn.includes(i) ? [j] : []));
          const attempted = dependents.every((j) => goneOk[j]);
          const spec = specs[i];
          const outcome = !attempted ? 'notVisited' : spec.fails ? 'errored' : spec.condition ? 'deleted' : 'deletePostconditionNotMet';
          goneOk[i] = outcome === 'deleted';
          expected[i] = outcome;
        }
        expect(specs.map((_, i) => result.dependent(name(i)).outcome)).to.deep.equal(expected);
      }),
      { numRuns: 100 },
    );
  });
});
