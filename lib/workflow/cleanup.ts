/**
 * The cleanup executor (WF2), following the reference's cleanup rules:
 * - delete starts with the nodes nothing depends on, concurrently;
 * - a node that others depend on is deleted only after all of them were deleted without error and
 *   their delete postconditions hold;
 * - `delete` is called only on a deletable dependent (a `delete` trait, not garbage-collected);
 *   any other dependent counts as deleted automatically (its delete postcondition still applies);
 * - an inactive node (activation condition false) is not deleted and does not hold anything up.
 */
import { concat, defer, map, of, type Observable } from 'rxjs';
import { type DependentContext, isDeletable } from '../dependent/index.js';
import type { WorkflowGraph } from './graph.js';
import { WorkflowRun, type ExecutionOptions, type NodeRun } from './node-run.js';
import type { WorkflowEvent } from './reconcile.js';
import { cleanupResult, type DependentResult, type WorkflowCleanupResult } from './result.js';
import { runSteps, type Submit } from './steps.js';

export function executeCleanup<P, C extends DependentContext, E>(
  graph: WorkflowGraph<P, C, E>,
  primary: P,
  ctx: C,
  maxConcurrency: number,
  options: ExecutionOptions<E> = {},
): Observable<WorkflowEvent<WorkflowCleanupResult>> {
  return defer(() => {
    const run = new WorkflowRun(graph, primary, ctx, options.eventSources, options.span);
    const progress = runSteps<DependentResult>(maxConcurrency, (submit) => new CleanupExecutor(run, submit).start()).pipe(
      map((dependent) => ({ type: 'dependent' as const, dependent })),
    );
    const done = defer(() => of({ type: 'done' as const, result: cleanupResult(run.results()) }));
    return concat(progress, done);
  });
}

class CleanupExecutor<P, C extends DependentContext, E> {
  constructor(
    private readonly run: WorkflowRun<P, C, E>,
    private readonly submit: Submit<DependentResult>,
  ) {}

  start(): void {
    for (const node of this.run.graph.nodes) {
      if (node.dependents.length === 0) this.handleCleanup(node.name);
    }
  }

  private handleCleanup(name: string): void {
    const r = this.run.run(name);
    if (r.phase !== 'idle') return;
    if (!r.node.dependents.every((d) => this.run.isCleanlyGone(d))) return;
    r.phase = 'running';
    this.submit(() => this.cleanupStep(r));
  }

  private async cleanupStep(r: NodeRun<P, C, E>): Promise<() => readonly DependentResult[]> {
    const { run } = this;
    try {
      if (run.aborted) return () => run.release(r);
      return await run.traced('delete', r, async () => {
        if (!(await run.activation(r))) return () => this.settle(r, 'inactive');
        const { dependent } = r.node;
        if (isDeletable(dependent)) {
          await dependent.delete!(run.primary, run.ctx);
          r.deleteCalled = true;
        }
        const met = await run.condition(r, 'deletePostcondition');
        return () => this.settle(r, met ? 'deleted' : 'deletePostconditionNotMet');
      });
    } catch (error) {
      return () => run.finish(r, 'errored', error);
    }
  }

  private settle(r: NodeRun<P, C, E>, outcome: 'deleted' | 'deletePostconditionNotMet' | 'inactive') {
    const events = this.run.finish(r, outcome);
    if (outcome !== 'deletePostconditionNotMet') r.node.dependsOn.forEach((d) => this.handleCleanup(d));
    return events;
  }
}
