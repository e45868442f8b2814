// The workflow layer's entry: dependents in a DAG with conditions, reconciled and cleaned up in order.
export {
  type BoundCondition,
  type Condition,
  type ConditionKind,
  type ConditionResult,
  type ConditionValue,
  type DetailedConditionResult,
} from './conditions.js';
export type { WorkflowNode } from './graph.js';
export { ManagedWorkflowInvocation, type ManagedWorkflow } from './managed.js';
export type { EventSourceRegistry, ExecutionOptions } from './node-run.js';
export { cleanupWorkflow, reconcileWorkflow } from './operators.js';
export type { WorkflowEvent } from './reconcile.js';
export {
  AggregatedOperatorError,
  type DependentOutcome,
  type DependentResult,
  type WorkflowCleanupResult,
  type WorkflowErrorSummary,
  type WorkflowReconcileResult,
  type WorkflowResult,
  type WorkflowResultBase,
  type WorkflowRunKind,
} from './result.js';
export {
  workflow,
  type DependentOptions,
  type DependentRef,
  type Workflow,
  type WorkflowBuilder,
  type WorkflowOptions,
} from './workflow.js';
export {
  crdPresent,
  deploymentReadiness,
  deploymentReady,
  resourceDeleted,
  type CrdPresentDetail,
  type CrdPresentOptions,
  type DeploymentReadiness,
  type ResourceDeletedDetail,
  type ServerContext,
} from './builtin-conditions.js';
