/**
 * The workflow as pipeable operators: a stream of primaries in, one workflow result per primary
 * out. Primaries are handled one after the other (per-resource scheduling is the processing
 * layer's job); dependents within one run still fan out concurrently.
 */
import { concatMap, filter, last, map, type OperatorFunction } from 'rxjs';
import type { DependentContext } from '../dependent/index.js';
import type { ExecutionOptions } from './node-run.js';
import type { WorkflowEvent } from './reconcile.js';
import type { WorkflowCleanupResult, WorkflowReconcileResult } from './result.js';
import type { Workflow } from './workflow.js';

function resultOf<W>(): OperatorFunction<WorkflowEvent<W>, W> {
  return (events$) =>
    events$.pipe(
      filter((e): e is Extract<WorkflowEvent<W>, { type: 'done' }> => e.type === 'done'),
      last(),
      map((e) => e.result),
    );
}

export function reconcileWorkflow<P, C extends DependentContext, E>(
  wf: Workflow<P, C, E>,
  contextFor: (primary: P) => C,
  options?: ExecutionOptions<E>,
): OperatorFunction<P, WorkflowReconcileResult> {
  return concatMap((primary) => wf.reconcile$(primary, contextFor(primary), options).pipe(resultOf()));
}

export function cleanupWorkflow<P, C extends DependentContext, E>(
  wf: Workflow<P, C, E>,
  contextFor: (primary: P) => C,
  options?: ExecutionOptions<E>,
): OperatorFunction<P, WorkflowCleanupResult> {
  return concatMap((primary) => wf.cleanup$(primary, contextFor(primary), options).pipe(resultOf()));
}
