import { expect } from 'chai';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AggregatedOperatorError, cleanupWorkflow, reconcileWorkflow, workflow } from '../../lib/workflow/index.js';
import { deferred, flush, primary, World, type Ctx, type Item, type Primary } from './fakes.js';
import { DIAMOND, FAN, graph } from './graphs.js';

const ctx: Ctx = {};

describe('workflow reconcile (reference: Workflow Execution > Reconciliation)', () => {
  describe('reconcile sample 1 --> 2, 1 --> 3, 2 --> 4, 3 --> 4', () => {
    it('WF2: 1 first, then 2 and 3 concurrently, then 4 once both are reconciled', async () => {
      const w = new World();
      const g2 = deferred();
      const g3 = deferred();
      const wf = graph(w, DIAMOND, { '2': { script: { gate: g2.promise } }, '3': { script: { gate: g3.promise } } });
      const run = wf.reconcile(primary, ctx);
      await flush();
      // 2 and 3 both started while neither has ended: they overlap.
      expect(w.log).to.deep.equal(['reconcile 1 start', 'reconcile 1 end', 'reconcile 2 start', 'reconcile 3 start']);
      g2.resolve();
      await flush();
      expect(w.started('reconcile')).to.not.include('4');
      g3.resolve();
      const result = await run;
      expect(w.log.slice(4)).to.deep.equal(['reconcile 2 end', 'reconcile 3 end', 'reconcile 4 start', 'reconcile 4 end']);
      expect(result.reconciled).to.deep.equal(['1', '2', '3', '4']);
      expect(result.allReady()).to.equal(true);
      expect(result.hasErrors()).to.equal(false);
    });

    it('WF2: independent nodes are bounded by maxConcurrentDependents (1: 2 and 3 never overlap)', async () => {
      const w = new World();
      const g2 = deferred();
      const g3 = deferred();
      const wf = graph(
        w,
        DIAMOND,
        { '2': { script: { gate: g2.promise } }, '3': { script: { gate: g3.promise } } },
        { maxConcurrentDependents: 1 },
      );
      const run = wf.reconcile(primary, ctx);
      await flush();
      expect(w.started('reconcile')).to.deep.equal(['1', '2']);
      g3.resolve();
      await flush();
      expect(w.started('reconcile')).to.deep.equal(['1', '2']);
      g2.resolve();
      await run;
      expect(w.log).to.deep.equal([
        'reconcile 1 start',
        'reconcile 1 end',
        'reconcile 2 start',
        'reconcile 2 end',
        'reconcile 3 start',
        'reconcile 3 end',
        'reconcile 4 start',
        'reconcile 4 end',
      ]);
    });

    it('WF2: the per-run maxConcurrentDependents option overrides the workflow default', async () => {
      const w = new World();
      const g2 = deferred();
      const wf = graph(w, DIAMOND, { '2': { script: { gate: g2.promise } } });
      const run = wf.reconcile(primary, ctx, { maxConcurrentDependents: 1 });
      await flush();
      expect(w.started('reconcile')).to.deep.equal(['1', '2']);
      g2.resolve();
      await run;
      expect(w.completed('reconcile')).to.deep.equal(['1', '2', '3', '4']);
    });

    it('WF2: 2 not ready (ready postcondition false) -> 4 is not reconciled; 1, 2 and 3 are', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '2': { readyPostcondition: () => false } }).reconcile(primary, ctx);
      expect(w.completed('reconcile')).to.have.members(['1', '2', '3']);
      expect(result.reconciled).to.deep.equal(['1', '2', '3']);
      expect(result.notReady).to.deep.equal(['2']);
      expect(result.dependent('4').outcome).to.equal('notVisited');
      expect(result.dependent('2').ready).to.equal(false);
      expect(result.conditionResult('2', 'readyPostcondition')).to.deep.equal({ met: false });
      expect(result.allReady()).to.equal(false);
      expect(w.completed('delete')).to.deep.equal([]);
    });

    it('WF2: 1 not ready -> neither 2, 3 nor 4 is reconciled', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '1': { readyPostcondition: async () => false } }).reconcile(primary, ctx);
      expect(w.completed('reconcile')).to.deep.equal(['1']);
      expect(result.reconciled).to.deep.equal(['1']);
      expect(result.notReady).to.deep.equal(['1']);
      for (const name of ['2', '3', '4']) expect(result.dependent(name).outcome).to.equal('notVisited');
    });

    it('WF2: an error reconciling 2 -> 4 is not reconciled, 1 and 3 are', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '2': { script: { failReconcile: 'boom 2' } } }).reconcile(primary, ctx);
      expect(w.completed('reconcile')).to.have.members(['1', '3']);
      expect(result.reconciled).to.deep.equal(['1', '3']);
      expect(result.dependent('2').outcome).to.equal('errored');
      expect(result.dependent('4').outcome).to.equal('notVisited');
      expect([...result.erroredDependents().keys()]).to.deep.equal(['2']);
      expect((result.erroredDependents().get('2') as Error).message).to.equal('boom 2');
      expect(result.allReady()).to.equal(false);
    });

    it('WF2: a ready postcondition may be async and is only evaluated after a successful reconcile', async () => {
      const w = new World();
      const seen: string[] = [];
      const result = await graph(w, DIAMOND, {
        '2': { script: { failReconcile: 'x' }, readyPostcondition: () => (seen.push('2'), true) },
        '3': { readyPostcondition: async () => (seen.push('3'), true) },
      }).reconcile(primary, ctx);
      expect(seen).to.deep.equal(['3']);
      expect(result.conditionResult('2', 'readyPostcondition')).to.equal(undefined);
    });
  });

  describe('sample with reconcile precondition 1 --> 2, 1 --> 3, 3 --> 4, 3 --> 5', () => {
    it('WF2: 3 precondition false -> 1, 2 reconciled; 4 and 5 deleted concurrently, then 3', async () => {
      const w = new World();
      const g4 = deferred();
      const g5 = deferred();
      const wf = graph(w, FAN, {
        '3': { reconcilePrecondition: () => false },
        '4': { script: { deleteGate: g4.promise } },
        '5': { script: { deleteGate: g5.promise } },
      });
      const run = wf.reconcile(primary, ctx);
      await flush();
      expect(w.started('delete')).to.deep.equal(['4', '5']);
      expect(w.completed('delete')).to.deep.equal([]);
      g4.resolve();
      await flush();
      expect(w.started('delete')).to.deep.equal(['4', '5']);
      g5.resolve();
      const result = await run;
      expect(w.completed('delete')).to.deep.equal(['4', '5', '3']);
      expect(w.completed('reconcile')).to.have.members(['1', '2']);
      expect(result.reconciled).to.deep.equal(['1', '2']);
      expect(result.deleteCalled).to.have.members(['3', '4', '5']);
      expect(result.conditionResult('3', 'reconcilePrecondition')).to.deep.equal({ met: false });
      for (const name of ['3', '4', '5']) {
        expect(result.dependent(name)).to.include({ outcome: 'deleted', markedForDelete: true, deleteCalled: true });
      }
      expect(result.dependent('1').markedForDelete).to.equal(false);
      // Deleting the branch whose precondition is false is the desired state: all ready.
      expect(result.allReady()).to.equal(true);
    });

    it('WF2: 5 delete postcondition false -> 3 is not deleted, 4 still is', async () => {
      const w = new World();
      const result = await graph(w, FAN, {
        '3': { reconcilePrecondition: () => false },
        '5': { deletePostcondition: () => ({ met: false, detail: 'still terminating' }) },
      }).reconcile(primary, ctx);
      expect(w.completed('delete')).to.have.members(['4', '5']);
      expect(w.started('delete')).to.not.include('3');
      expect(result.deletePostconditionNotMet).to.deep.equal(['5']);
      expect(result.conditionResult('5', 'deletePostcondition')).to.deep.equal({ met: false, detail: 'still terminating' });
      expect(result.dependent('3')).to.include({ outcome: 'notVisited', markedForDelete: true, deleteCalled: false });
      expect(result.dependent('4').outcome).to.equal('deleted');
      expect(result.allReady()).to.equal(false);
    });

    it('WF2: an error deleting 5 -> 3 is not deleted, 4 still is', async () => {
      const w = new World();
      const result = await graph(w, FAN, {
        '3': { reconcilePrecondition: () => false },
        '5': { script: { failDelete: 'cannot delete 5' } },
      }).reconcile(primary, ctx);
      expect(w.completed('delete')).to.deep.equal(['4']);
      expect(w.started('delete')).to.not.include('3');
      expect(result.dependent('5').outcome).to.equal('errored');
      expect(result.dependent('3').outcome).to.equal('notVisited');
      expect(result.reconciled).to.deep.equal(['1', '2']);
      expect(() => result.throwIfErrors()).to.throw(AggregatedOperatorError, /'5': cannot delete 5/);
    });

    it('WF2: a precondition that holds lets the node reconcile, and its result is kept', async () => {
      const w = new World();
      const result = await graph(w, FAN, { '3': { reconcilePrecondition: async () => ({ met: true, detail: 42 }) } }).reconcile(
        primary,
        ctx,
      );
      expect(result.reconciled).to.deep.equal(['1', '2', '3', '4', '5']);
      expect(result.conditionResult('3', 'reconcilePrecondition')).to.deep.equal({ met: true, detail: 42 });
    });

    it('WF2: a leaf with a false precondition is deleted alone', async () => {
      const w = new World();
      const result = await graph(w, FAN, { '5': { reconcilePrecondition: () => false } }).reconcile(primary, ctx);
      expect(w.completed('delete')).to.deep.equal(['5']);
      expect(result.reconciled).to.deep.equal(['1', '2', '3', '4']);
    });

    it('WF2: an existing secondary is deleted when its precondition turns false', async () => {
      const w = new World();
      let exposed = true;
      const wf = graph(w, FAN, { '3': { reconcilePrecondition: () => exposed } });
      await wf.reconcile(primary, ctx);
      expect([...w.items.keys()]).to.have.members(['p/1', 'p/2', 'p/3', 'p/4', 'p/5']);
      exposed = false;
      await wf.reconcile(primary, ctx);
      expect([...w.items.keys()]).to.have.members(['p/1', 'p/2']);
    });

    it('WF2/DR1: a dependent without delete counts as deleted, so what it depends on is deleted next', async () => {
      const w = new World();
      const result = await graph(w, FAN, {
        '3': { reconcilePrecondition: () => false },
        '4': { script: { deletable: false } },
      }).reconcile(primary, ctx);
      expect(w.completed('delete')).to.have.members(['5', '3']);
      expect(result.dependent('4')).to.include({ outcome: 'deleted', deleteCalled: false });
      expect(result.deleteCalled).to.have.members(['3', '5']);
    });

    it('a garbage-collected dependent is still deleted when its precondition is false (the primary stays)', async () => {
      const w = new World();
      const result = await graph(w, FAN, {
        '3': { reconcilePrecondition: () => false, script: { garbageCollected: true } },
      }).reconcile(primary, ctx);
      expect(w.completed('delete')).to.include('3');
      expect(result.dependent('3').deleteCalled).to.equal(true);
    });

    it('WF2: a node depending on two false-precondition nodes is deleted once, and both of them after it', async () => {
      const w = new World();
      const lateB = deferred<boolean>();
      const wf = graph(
        w,
        { a: [], b: [], c: ['a', 'b'] },
        {
          a: { reconcilePrecondition: () => false },
          b: { reconcilePrecondition: () => lateB.promise },
        },
      );
      const run = wf.reconcile(primary, ctx);
      await flush();
      // a's false precondition already had c deleted before b's precondition answers.
      expect(w.completed('delete')).to.deep.equal(['c', 'a']);
      lateB.resolve(false);
      const result = await run;
      expect(w.completed('delete')).to.deep.equal(['c', 'a', 'b']);
      expect(w.started('delete').filter((n) => n === 'c')).to.have.length(1);
      expect(result.reconciled).to.deep.equal([]);
    });
  });

  describe('errors and bad input', () => {
    it('WF2: a desired() that throws fails only its node; independent nodes still reconcile', async () => {
      const w = new World();
      const broken = {
        ...w.dependent('2'),
        desired: (): Item => {
          throw new Error('spec.replicas must be a number');
        },
      };
      const wf = workflow<Primary, Ctx, string>()
        .add(w.dependent('1'))
        .add(broken, { dependsOn: '1' })
        .add(w.dependent('3'), { dependsOn: '1' })
        .add(w.dependent('4'), { dependsOn: ['2'] })
        .build();
      const result = await wf.reconcile(primary, ctx);
      expect(result.reconciled).to.deep.equal(['1', '3']);
      expect(result.dependent('2').outcome).to.equal('errored');
      expect((result.dependent('2').error as Error).message).to.equal('spec.replicas must be a number');
      expect(result.dependent('4').outcome).to.equal('notVisited');
    });

    it('WF3: several errors raise one AggregatedOperatorError carrying each by dependent name', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, {
        '2': { script: { failReconcile: 'boom 2' } },
        '3': { script: { failReconcile: 'boom 3' } },
      }).reconcile(primary, ctx);
      let thrown: unknown;
      try {
        result.throwIfErrors();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).to.be.instanceOf(AggregatedOperatorError);
      const error = thrown as AggregatedOperatorError;
      expect([...error.byDependent.keys()]).to.have.members(['2', '3']);
      expect((error.byDependent.get('3') as Error).message).to.equal('boom 3');
      expect(error.errors).to.have.length(2);
      expect(error.result).to.equal(result);
      expect(error.message).to.match(/^workflow reconcile failed for 2 dependents: /);
      expect(error.message).to.include("'2': boom 2").and.include("'3': boom 3");
    });

    it('WF3: no error, no throw', async () => {
      const result = await graph(new World(), DIAMOND).reconcile(primary, ctx);
      expect(() => result.throwIfErrors()).to.not.throw();
      expect(result.erroredDependents().size).to.equal(0);
    });

    it('a condition that throws, or answers neither boolean nor { met }, errors its node', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, {
        '2': {
          readyPostcondition: () => {
            throw new Error('cannot read status');
          },
        },
        '3': { reconcilePrecondition: () => 'yes' as unknown as boolean },
      }).reconcile(primary, ctx);
      expect((result.dependent('2').error as Error).message).to.equal('cannot read status');
      expect(String(result.dependent('3').error)).to.match(
        /TypeError: reconcilePrecondition of dependent '3' returned a string; expected a boolean or \{ met: boolean, detail\? \}/,
      );
      expect(result.dependent('4').outcome).to.equal('notVisited');
      expect(w.started('reconcile')).to.deep.equal(['1', '2']);
    });

    it('an aborted signal starts no dependent', async () => {
      const w = new World();
      const controller = new AbortController();
      controller.abort();
      const result = await graph(w, DIAMOND).reconcile(primary, { signal: controller.signal });
      expect(w.log).to.deep.equal([]);
      expect([...result.dependents.values()].map((r) => r.outcome)).to.deep.equal(Array(4).fill('notVisited'));
    });

    it('aborting mid-run lets running dependents finish and starts no more', async () => {
      const w = new World();
      const controller = new AbortController();
      const g1 = deferred();
      const run = graph(w, DIAMOND, { '1': { script: { gate: g1.promise } } }).reconcile(primary, { signal: controller.signal });
      await flush();
      controller.abort();
      g1.resolve();
      const result = await run;
      expect(w.completed('reconcile')).to.deep.equal(['1']);
      expect(result.reconciled).to.deep.equal(['1']);
    });
  });

  it('WF3: reconcile$ emits each dependent as it settles, then the result', async () => {
    const events = await lastValueFrom(graph(new World(), DIAMOND).reconcile$(primary, ctx).pipe(toArray()));
    const settled = events.flatMap((e) => (e.type === 'dependent' ? [e.dependent.name] : []));
    expect(settled[0]).to.equal('1');
    expect(settled.slice(1, 3)).to.have.members(['2', '3']);
    expect(settled[3]).to.equal('4');
    const last = events.at(-1)!;
    expect(last.type).to.equal('done');
    expect(last.type === 'done' && last.result.reconciled).to.deep.equal(['1', '2', '3', '4']);
  });

  it('WF3: the result carries the dependent reconcile result with the resource', async () => {
    const w = new World();
    const first = await graph(w, { a: [] }).reconcile(primary, ctx);
    expect(first.dependent('a').reconcileResult).to.deep.equal({
      operation: 'created',
      resource: { owner: 'p', dependent: 'a' },
    });
    const second = await graph(w, { a: [] }).reconcile(primary, ctx);
    expect(second.dependent('a').reconcileResult?.operation).to.equal('updated');
  });

  it('an empty workflow completes with an empty result', async () => {
    const result = await workflow<Primary>().build().reconcile(primary, {});
    expect(result.dependents.size).to.equal(0);
    expect(result.allReady()).to.equal(true);
  });
});

describe('workflow operators', () => {
  it('reconcileWorkflow / cleanupWorkflow map primaries to workflow results, one after the other', async () => {
    const w = new World();
    const wf = graph(w, { a: [], b: ['a'] });
    const reconciled = await lastValueFrom(
      from([{ name: 'x' }, { name: 'y' }]).pipe(
        reconcileWorkflow(wf, () => ({})),
        toArray(),
      ),
    );
    expect(reconciled.map((r) => r.reconciled)).to.deep.equal([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    expect([...w.items.keys()]).to.deep.equal(['x/a', 'x/b', 'y/a', 'y/b']);
    const cleaned = await lastValueFrom(
      from([{ name: 'x' }]).pipe(
        cleanupWorkflow(wf, () => ({})),
        toArray(),
      ),
    );
    expect(cleaned[0]?.deleteCalled).to.deep.equal(['a', 'b']);
    expect([...w.items.keys()]).to.deep.equal(['y/a', 'y/b']);
  });
});
