import { expect } from 'chai';
import { AggregatedOperatorError } from '../../lib/workflow/index.js';
import { deferred, flush, primary, World, type Ctx } from './fakes.js';
import { DIAMOND, FAN, graph } from './graphs.js';

const ctx: Ctx = {};

describe('workflow cleanup (reference: Workflow Execution > Cleanup)', () => {
  describe('sample 1 --> 2, 1 --> 3, 2 --> 4, 3 --> 4', () => {
    it('WF2: 4 is deleted first, then 2 and 3 concurrently, and only after both, 1', async () => {
      const w = new World();
      const g2 = deferred();
      const g3 = deferred();
      const wf = graph(w, DIAMOND, {
        '2': { script: { deleteGate: g2.promise } },
        '3': { script: { deleteGate: g3.promise } },
      });
      const run = wf.cleanup(primary, ctx);
      await flush();
      expect(w.log).to.deep.equal(['delete 4 start', 'delete 4 end', 'delete 2 start', 'delete 3 start']);
      g3.resolve();
      await flush();
      expect(w.started('delete')).to.not.include('1');
      g2.resolve();
      const result = await run;
      expect(w.completed('delete')).to.deep.equal(['4', '3', '2', '1']);
      expect(result.deleteCalled).to.have.members(['1', '2', '3', '4']);
      expect(result.allDeleted()).to.equal(true);
      expect(result.allPostconditionsMet()).to.equal(true);
      expect(w.completed('reconcile')).to.deep.equal([]);
    });

    it('WF2: cleanup concurrency is bounded by maxConcurrentDependents too', async () => {
      const w = new World();
      const g2 = deferred();
      const run = graph(w, DIAMOND, { '2': { script: { deleteGate: g2.promise } } }, { maxConcurrentDependents: 1 }).cleanup(primary, ctx);
      await flush();
      expect(w.started('delete')).to.deep.equal(['4', '2']);
      g2.resolve();
      await run;
      expect(w.completed('delete')).to.deep.equal(['4', '2', '3', '1']);
    });

    it('WF2: 2 delete postcondition false -> 1 is not deleted; 4 and 3 are', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '2': { deletePostcondition: () => false } }).cleanup(primary, ctx);
      expect(w.completed('delete')).to.have.members(['4', '2', '3']);
      expect(w.started('delete')).to.not.include('1');
      expect(result.deletePostconditionNotMet).to.deep.equal(['2']);
      expect(result.dependent('1').outcome).to.equal('notVisited');
      expect(result.allPostconditionsMet()).to.equal(false);
      expect(result.allDeleted()).to.equal(false);
    });

    it('WF2: 2 in error -> 1 is not deleted; 4 and 3 are', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '2': { script: { failDelete: 'boom 2' } } }).cleanup(primary, ctx);
      expect(w.completed('delete')).to.have.members(['4', '3']);
      expect(w.started('delete')).to.not.include('1');
      expect(result.dependent('2').outcome).to.equal('errored');
      expect(result.dependent('1').outcome).to.equal('notVisited');
      expect(() => result.throwIfErrors()).to.throw(AggregatedOperatorError, /^workflow cleanup failed for 1 dependent: '2': boom 2$/);
    });

    it('WF2: 4 in error -> no other dependent is deleted', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '4': { script: { failDelete: 'boom 4' } } }).cleanup(primary, ctx);
      expect(w.started('delete')).to.deep.equal(['4']);
      expect(w.completed('delete')).to.deep.equal([]);
      for (const name of ['1', '2', '3']) expect(result.dependent(name).outcome).to.equal('notVisited');
      expect([...result.erroredDependents().keys()]).to.deep.equal(['4']);
    });
  });

  describe('rules', () => {
    it('WF2: delete starts on every dependent nothing depends on, concurrently', async () => {
      const w = new World();
      const g2 = deferred();
      const g4 = deferred();
      const g5 = deferred();
      const run = graph(w, FAN, {
        '2': { script: { deleteGate: g2.promise } },
        '4': { script: { deleteGate: g4.promise } },
        '5': { script: { deleteGate: g5.promise } },
      }).cleanup(primary, ctx);
      await flush();
      expect(w.started('delete')).to.have.members(['2', '4', '5']);
      expect(w.completed('delete')).to.deep.equal([]);
      g4.resolve();
      g5.resolve();
      await flush();
      expect(w.completed('delete')).to.have.members(['4', '5', '3']);
      expect(w.started('delete')).to.not.include('1');
      g2.resolve();
      await run;
      expect(w.completed('delete').at(-1)).to.equal('1');
    });

    it("WF2: a dependent is deleted only once its dependents' delete postconditions hold (async too)", async () => {
      const w = new World();
      const gone = deferred<boolean>();
      const run = graph(w, { a: [], b: ['a'] }, { b: { deletePostcondition: () => gone.promise } }).cleanup(primary, ctx);
      await flush();
      expect(w.completed('delete')).to.deep.equal(['b']);
      gone.resolve(true);
      const result = await run;
      expect(w.completed('delete')).to.deep.equal(['b', 'a']);
      expect(result.conditionResult('b', 'deletePostcondition')).to.deep.equal({ met: true });
    });

    it('WF2/DR1: a garbage-collected dependent is not deleted by cleanup but counts as deleted', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '4': { script: { garbageCollected: true } } }).cleanup(primary, ctx);
      expect(w.started('delete')).to.not.include('4');
      expect(w.completed('delete')).to.have.members(['1', '2', '3']);
      expect(result.dependent('4')).to.include({ outcome: 'deleted', deleteCalled: false });
    });

    it('WF2/DR1: a dependent without delete counts as deleted automatically', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, { '2': { script: { deletable: false } } }).cleanup(primary, ctx);
      expect(w.completed('delete')).to.have.members(['4', '3', '1']);
      expect(result.dependent('2')).to.include({ outcome: 'deleted', deleteCalled: false });
      expect(result.deleteCalled).to.have.members(['1', '3', '4']);
    });

    it('WF2: the delete postcondition of a garbage-collected dependent still holds its parents back', async () => {
      const w = new World();
      const result = await graph(
        w,
        { a: [], b: ['a'] },
        {
          b: { script: { garbageCollected: true }, deletePostcondition: () => false },
        },
      ).cleanup(primary, ctx);
      expect(w.started('delete')).to.deep.equal([]);
      expect(result.deletePostconditionNotMet).to.deep.equal(['b']);
    });

    it('cleanup ignores reconcile preconditions and ready postconditions', async () => {
      const w = new World();
      const result = await graph(w, DIAMOND, {
        '2': { reconcilePrecondition: () => false, readyPostcondition: () => false },
      }).cleanup(primary, ctx);
      expect(w.completed('delete')).to.have.length(4);
      expect(result.dependent('2').conditions).to.deep.equal({});
    });
  });
});
