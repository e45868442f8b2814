/**
 * The reconcile executor (WF2), following the reference's reconciliation rules:
 * - roots are reconciled first, concurrently;
 * - a node is reconciled when every node it depends on is reconciled and ready, and its activation
 *   condition and reconcile precondition hold;
 * - a node is ready when reconciled without error and its ready postcondition holds; only then are
 *   the nodes depending on it considered;
 * - a node whose reconcile precondition does not hold is not reconciled but deleted, together with
 *   every node depending on it, recursively, in reverse order: a node is deleted only once all nodes
 *   depending on it were deleted without error and their delete postconditions hold;
 * - an inactive node (activation condition false) is neither reconciled nor deleted, and the nodes
 *   depending on it are deleted as for a false precondition;
 * - errors stay with their node: independent branches go on ("as complete as possible").
 */
import { concat, defer, map, of, type Observable } from 'rxjs';
import { deleteDependent, type DependentContext, reconcileDependent } from '../dependent/index.js';
import type { WorkflowGraph } from './graph.js';
import { WorkflowRun, type ExecutionOptions, type NodeRun } from './node-run.js';
import { reconcileResult, type DependentResult, type WorkflowReconcileResult } from './result.js';
import { runSteps, type Submit } from './steps.js';

/** A progress event: one dependent settled a step, or the run is over (always the last event). */
export type WorkflowEvent<W> =
  { readonly type: 'dependent'; readonly dependent: DependentResult } | { readonly type: 'done'; readonly result: W };

export function executeReconcile<P, C extends DependentContext, E>(
  graph: WorkflowGraph<P, C, E>,
  primary: P,
  ctx: C,
  maxConcurrency: number,
  options: ExecutionOptions<E> = {},
): Observable<WorkflowEvent<WorkflowReconcileResult>> {
  return defer(() => {
    const run = new WorkflowRun(graph, primary, ctx, options.eventSources, options.span);
    const progress = runSteps<DependentResult>(maxConcurrency, (submit) => new ReconcileExecutor(run, submit).start()).pipe(
      map((dependent) => ({ type: 'dependent' as const, dependent })),
    );
    const done = defer(() => of({ type: 'done' as const, result: reconcileResult(run.results()) }));
    return concat(progress, done);
  });
}

class ReconcileExecutor<P, C extends DependentContext, E> {
  constructor(
    private readonly run: WorkflowRun<P, C, E>,
    private readonly submit: Submit<DependentResult>,
  ) {}

  start(): void {
    for (const node of this.run.graph.nodes) {
      if (node.dependsOn.length === 0) this.handleReconcile(node.name);
    }
  }

  private isReconciledAndReady = (name: string): boolean => {
    const r = this.run.run(name);
    return r.outcome === 'reconciled' && r.ready;
  };

  private handleReconcile(name: string): void {
    const r = this.run.run(name);
    if (r.phase !== 'idle' || r.markedForDelete) return;
    if (!r.node.dependsOn.every(this.isReconciledAndReady)) return;
    r.phase = 'running';
    this.submit(() => this.reconcileStep(r));
  }

  private async reconcileStep(r: NodeRun<P, C, E>): Promise<() => readonly DependentResult[]> {
    const { run } = this;
    try {
      if (run.aborted) return () => run.release(r);
      return await run.traced('reconcile', r, async () => {
        if (!(await run.activation(r))) return () => this.conditionNotMet(r, false);
        if (!(await run.condition(r, 'reconcilePrecondition'))) return () => this.conditionNotMet(r, true);
        r.reconcileResult = await reconcileDependent(r.node.dependent, run.primary, run.ctx);
        const ready = await run.condition(r, 'readyPostcondition');
        return () => {
          r.ready = ready;
          const events = run.finish(r, 'reconciled');
          if (ready) r.node.dependents.forEach((d) => this.handleReconcile(d));
          return events;
        };
      });
    } catch (error) {
      return () => run.finish(r, 'errored', error);
    }
  }

  /**
   * The node's activation condition (`active` false) or reconcile precondition did not hold: mark
   * it (only when active) and everything depending on it for deletion, then start deleting from
   * the nodes that nothing unfinished depends on.
   */
  private conditionNotMet(r: NodeRun<P, C, E>, active: boolean): readonly DependentResult[] {
    const { run } = this;
    const marked: NodeRun<P, C, E>[] = [];
    const mark = (name: string): void => {
      const m = run.run(name);
      if (m.markedForDelete) return;
      m.markedForDelete = true;
      marked.push(m);
      m.node.dependents.forEach(mark);
    };
    let events: readonly DependentResult[];
    if (active) {
      r.phase = 'idle';
      mark(r.node.name);
      events = [];
    } else {
      events = run.finish(r, 'inactive');
      r.node.dependents.forEach(mark);
    }
    // Trying every marked node (not only the bottom ones) also covers a node whose dependents were
    // all deleted already because another false precondition marked them first.
    marked.forEach((m) => this.handleDelete(m.node.name));
    return [...events, ...marked.map((m) => run.snapshot(m))];
  }

  private handleDelete(name: string): void {
    const r = this.run.run(name);
    if (r.phase !== 'idle' || !r.markedForDelete) return;
    if (!r.node.dependents.every((d) => this.run.isCleanlyGone(d))) return;
    r.phase = 'running';
    this.submit(() => this.deleteStep(r));
  }

  /**
   * Deletes a marked node. `delete` is called even for a garbage-collected dependent: the primary
   * stays, so owner references would never remove the secondary.
   */
  private async deleteStep(r: NodeRun<P, C, E>): Promise<() => readonly DependentResult[]> {
    const { run } = this;
    try {
      if (run.aborted) return () => run.release(r);
      return await run.traced('delete', r, async () => {
        if (!(await run.activation(r))) return () => this.deleted(r, 'inactive');
        const deletion = await deleteDependent(r.node.dependent, run.primary, run.ctx);
        r.deleteCalled = deletion.operation === 'deleted';
        const met = await run.condition(r, 'deletePostcondition');
        return () => this.deleted(r, met ? 'deleted' : 'deletePostconditionNotMet');
      });
    } catch (error) {
      return () => run.finish(r, 'errored', error);
    }
  }

  private deleted(r: NodeRun<P, C, E>, outcome: 'deleted' | 'deletePostconditionNotMet' | 'inactive') {
    const events = this.run.finish(r, outcome);
    if (outcome !== 'deletePostconditionNotMet') r.node.dependsOn.forEach((d) => this.handleDelete(d));
    return events;
  }
}
