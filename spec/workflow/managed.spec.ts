import { expect } from 'chai';
import { ManagedWorkflowInvocation, workflow } from '../../lib/workflow/index.js';
import { primary, World, type Ctx } from './fakes.js';
import { DIAMOND, graph } from './graphs.js';

const ctx: Ctx = {};

describe('managed workflows (WF4, FZ1)', () => {
  it('FZ1: a finalizer is needed when some dependent is deletable and not garbage-collected', () => {
    const w = new World();
    const gcOnly = graph(w, DIAMOND, Object.fromEntries(['1', '2', '3', '4'].map((n) => [n, { script: { garbageCollected: true } }])));
    expect(gcOnly.hasDeletableDependents).to.equal(false);
    expect(gcOnly.needsFinalizer).to.equal(false);

    const noDeleters = graph(w, { a: [] }, { a: { script: { deletable: false } } });
    expect(noDeleters.needsFinalizer).to.equal(false);

    const oneDeleter = graph(w, DIAMOND, { '1': { script: { garbageCollected: true } } });
    expect(oneDeleter.hasDeletableDependents).to.equal(true);
    expect(oneDeleter.needsFinalizer).to.equal(true);

    expect(workflow().build().isEmpty).to.equal(true);
    expect(oneDeleter.isEmpty).to.equal(false);
  });

  it('WF4: by default the workflow runs before reconcile and its result is kept for the reconciler', async () => {
    const w = new World();
    const inv = new ManagedWorkflowInvocation(graph(w, DIAMOND), primary, ctx);
    expect(inv.reconcileResult).to.equal(undefined);
    const result = await inv.beforeReconcile();
    expect(result?.reconciled).to.deep.equal(['1', '2', '3', '4']);
    expect(inv.reconcileResult).to.equal(result);
    await expectRejection(
      inv.reconcileManagedWorkflow(),
      /reconcileManagedWorkflow\(\) needs a workflow built with \{ explicitInvocation: true \}/,
    );
  });

  it('WF4: with explicitInvocation nothing runs before reconcile; the reconciler runs it itself', async () => {
    const w = new World();
    const wf = graph(w, DIAMOND, {}, { explicitInvocation: true });
    expect(wf.explicitInvocation).to.equal(true);
    const inv = new ManagedWorkflowInvocation(wf, primary, ctx);
    expect(await inv.beforeReconcile()).to.equal(undefined);
    expect(w.log).to.deep.equal([]);
    const result = await inv.reconcileManagedWorkflow();
    expect(result.reconciled).to.deep.equal(['1', '2', '3', '4']);
    expect(inv.reconcileResult).to.equal(result);
  });

  it("WF4: cleanup runs before the reconciler's cleanup unless explicit and the reconciler has cleanup", async () => {
    const implicit = new World();
    const ran = await new ManagedWorkflowInvocation(graph(implicit, DIAMOND), primary, ctx).beforeCleanup(true);
    expect(ran?.allDeleted()).to.equal(true);
    expect(implicit.completed('delete')).to.have.length(4);

    const explicitWithCleaner = new World();
    const inv = new ManagedWorkflowInvocation(graph(explicitWithCleaner, DIAMOND, {}, { explicitInvocation: true }), primary, ctx);
    expect(await inv.beforeCleanup(true)).to.equal(undefined);
    expect(explicitWithCleaner.log).to.deep.equal([]);
    const cleaned = await inv.cleanupManagedWorkflow();
    expect(cleaned.deleteCalled).to.have.length(4);
    expect(inv.cleanupResult).to.equal(cleaned);

    // Explicit invocation without a cleanup of its own: the workflow cleans up implicitly.
    const explicitNoCleaner = new World();
    const implicitAnyway = await new ManagedWorkflowInvocation(
      graph(explicitNoCleaner, DIAMOND, {}, { explicitInvocation: true }),
      primary,
      ctx,
    ).beforeCleanup(false);
    expect(implicitAnyway?.kind).to.equal('cleanup');
    expect(explicitNoCleaner.completed('delete')).to.have.length(4);
  });

  it('WF4: nothing to delete, no cleanup run (garbage collection does it)', async () => {
    const w = new World();
    const wf = graph(w, { a: [] }, { a: { script: { garbageCollected: true } } });
    expect(await new ManagedWorkflowInvocation(wf, primary, ctx).beforeCleanup(false)).to.equal(undefined);
  });

  it('WF4: an unmet delete postcondition tells the controller to keep the finalizer', async () => {
    const w = new World();
    const wf = graph(w, DIAMOND, { '3': { deletePostcondition: () => false } });
    const result = await new ManagedWorkflowInvocation(wf, primary, ctx).beforeCleanup(false);
    expect(result?.allPostconditionsMet()).to.equal(false);
    expect(result?.allDeleted()).to.equal(false);
    expect(result?.hasErrors()).to.equal(false);
  });

  it('WF4: the execution options (event source registry) reach the workflow', async () => {
    const w = new World();
    const wf = graph(w, { a: [] }, { a: { activationCondition: () => true, script: { eventSource: 'es' } } });
    const registered: string[] = [];
    await new ManagedWorkflowInvocation(wf, primary, ctx, {
      eventSources: { register: (name) => void registered.push(name), unregister: () => undefined },
    }).beforeReconcile();
    expect(registered).to.deep.equal(['a']);
  });
});

async function expectRejection(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const outcome = await promise.then(
    () => 'resolved',
    (e: unknown) => String(e),
  );
  expect(outcome).to.match(pattern);
}
