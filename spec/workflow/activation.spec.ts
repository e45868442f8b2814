import { expect } from 'chai';
import type { EventSourceRegistry } from '../../lib/workflow/index.js';
import { primary, World, type Ctx } from './fakes.js';
import { DIAMOND, FAN, graph } from './graphs.js';

const ctx: Ctx = {};

/** An idempotent registry that logs into the world's log, so order against traits is visible. */
function registry(w: World) {
  const registered = new Set<string>();
  const reg: EventSourceRegistry<string> = {
    register: (name, source) => {
      w.log.push(`register ${name} ${source}`);
      registered.add(name);
    },
    unregister: async (name, source) => {
      w.log.push(`unregister ${name} ${source}`);
      registered.delete(name);
    },
  };
  return { reg, registered };
}

describe('workflow activation conditions (WF5)', () => {
  it('WF5: an inactive dependent is neither reconciled nor deleted; what depends on it is deleted', async () => {
    const w = new World();
    const { reg } = registry(w);
    const result = await graph(w, FAN, {
      '3': { activationCondition: () => false, script: { eventSource: 'es3' } },
    }).reconcile(primary, ctx, { eventSources: reg });
    expect(w.completed('reconcile')).to.have.members(['1', '2']);
    expect(w.completed('delete')).to.have.members(['4', '5']);
    expect(w.started('delete')).to.not.include('3');
    expect(w.log).to.include('unregister 3 es3');
    expect(result.dependent('3')).to.include({ outcome: 'inactive', markedForDelete: false, deleteCalled: false });
    expect(result.conditionResult('3', 'activationCondition')).to.deep.equal({ met: false });
    expect(result.dependent('4')).to.include({ outcome: 'deleted', markedForDelete: true });
    expect(result.allReady()).to.equal(true);
  });

  it('WF5: an active dependent gets its event source registered before it is reconciled', async () => {
    const w = new World();
    const { reg, registered } = registry(w);
    const result = await graph(w, DIAMOND, {
      '3': { activationCondition: async () => ({ met: true, detail: 'crd present' }), script: { eventSource: 'es3' } },
    }).reconcile(primary, ctx, { eventSources: reg });
    const registeredAt = w.log.indexOf('register 3 es3');
    expect(registeredAt).to.be.greaterThan(-1);
    expect(registeredAt).to.be.lessThan(w.log.indexOf('reconcile 3 start'));
    expect([...registered]).to.deep.equal(['3']);
    expect(result.reconciled).to.deep.equal(['1', '2', '3', '4']);
    expect(result.conditionResult('3', 'activationCondition')).to.deep.equal({ met: true, detail: 'crd present' });
  });

  it('WF5: registration follows the condition from run to run', async () => {
    const w = new World();
    const { reg, registered } = registry(w);
    let crdPresent = true;
    const wf = graph(w, DIAMOND, { '4': { activationCondition: () => crdPresent, script: { eventSource: 'es4' } } });
    await wf.reconcile(primary, ctx, { eventSources: reg });
    expect([...registered]).to.deep.equal(['4']);
    crdPresent = false;
    const result = await wf.reconcile(primary, ctx, { eventSources: reg });
    expect([...registered]).to.deep.equal([]);
    expect(result.dependent('4').outcome).to.equal('inactive');
    expect(w.started('delete')).to.deep.equal([]);
  });

  it('WF5: the reconcile precondition of an inactive dependent is not evaluated', async () => {
    const w = new World();
    let evaluated = 0;
    const result = await graph(
      w,
      { a: [] },
      {
        a: { activationCondition: () => false, reconcilePrecondition: () => (evaluated++, true) },
      },
    ).reconcile(primary, ctx);
    expect(evaluated).to.equal(0);
    expect(result.dependent('a').conditions).to.deep.equal({ activationCondition: { met: false } });
  });

  it('WF5: the activation condition is evaluated once per run, also when the dependent is then deleted', async () => {
    const w = new World();
    let evaluated = 0;
    const result = await graph(w, FAN, {
      '3': { activationCondition: () => (evaluated++, true), reconcilePrecondition: () => false },
    }).reconcile(primary, ctx);
    expect(evaluated).to.equal(1);
    expect(w.completed('delete')).to.have.members(['4', '5', '3']);
    expect(w.completed('delete').at(-1)).to.equal('3');
    expect(result.dependent('3').outcome).to.equal('deleted');
  });

  it('WF5: an inactive dependent in a deleted branch is not deleted and does not block the branch', async () => {
    const w = new World();
    const { reg } = registry(w);
    const result = await graph(w, FAN, {
      '3': { reconcilePrecondition: () => false },
      '5': { activationCondition: () => false, script: { eventSource: 'es5' } },
    }).reconcile(primary, ctx, { eventSources: reg });
    expect(w.completed('delete')).to.have.members(['4', '3']);
    expect(w.completed('delete').at(-1)).to.equal('3');
    expect(result.dependent('5')).to.include({ outcome: 'inactive', markedForDelete: true, deleteCalled: false });
    expect(w.log).to.include('unregister 5 es5');
  });

  it('WF5: cleanup skips an inactive dependent and goes on with what it depends on', async () => {
    const w = new World();
    const { reg } = registry(w);
    const result = await graph(w, DIAMOND, {
      '2': { activationCondition: () => false, deletePostcondition: () => false, script: { eventSource: 'es2' } },
    }).cleanup(primary, ctx, { eventSources: reg });
    expect(w.completed('delete')).to.deep.equal(['4', '3', '1']);
    expect(result.dependent('2').outcome).to.equal('inactive');
    expect(result.conditionResult('2', 'deletePostcondition')).to.equal(undefined);
    expect(w.log).to.include('unregister 2 es2');
    expect(result.allDeleted()).to.equal(true);
  });

  it('WF5: dependents without an activation condition never touch the registry', async () => {
    const w = new World();
    const { reg } = registry(w);
    await graph(w, DIAMOND, { '2': { script: { eventSource: 'es2' } } }).reconcile(primary, ctx, { eventSources: reg });
    expect(w.log.filter((l) => /register/.test(l))).to.deep.equal([]);
  });

  it('WF5: a failing registration errors its dependent only', async () => {
    const w = new World();
    const result = await graph(w, DIAMOND, {
      '3': { activationCondition: () => true, script: { eventSource: 'es3' } },
    }).reconcile(primary, ctx, {
      eventSources: {
        register: () => {
          throw new Error('no such resource type');
        },
        unregister: () => undefined,
      },
    });
    expect((result.dependent('3').error as Error).message).to.equal('no such resource type');
    expect(result.reconciled).to.deep.equal(['1', '2']);
    expect(w.started('reconcile')).to.not.include('3');
  });
});
