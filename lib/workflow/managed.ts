/**
 * What the controller needs from a managed workflow (WF4), and the per-run invocation rules:
 * the workflow reconciles before `reconcile` and cleans up before `cleanup`, unless it is invoked
 * explicitly — then the reconciler calls it itself. For cleanup, explicit invocation applies only
 * when the reconciler has its own `cleanup`; otherwise the workflow cleans up implicitly.
 */
import type { DependentContext } from '../dependent/index.js';
import type { ExecutionOptions } from './node-run.js';
import type { WorkflowCleanupResult, WorkflowReconcileResult } from './result.js';
import type { SecondarySpec } from '../sources/index.js';

export interface ManagedWorkflow<P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  readonly isEmpty: boolean;
  /** The reconciler invokes the workflow itself (`ManagedWorkflowInvocation.reconcileManagedWorkflow`). */
  readonly explicitInvocation: boolean;
  /** Some dependent has a `delete` trait and is not garbage-collected. */
  readonly hasDeletableDependents: boolean;
  /**
   * The workflow's part in the finalizer decision (FZ1): it needs a finalizer on the primary exactly when it has a
   * deletable dependent (garbage-collected ones go with the primary through owner references).
   * The controller also needs one when the reconciler has `cleanup`.
   */
  readonly needsFinalizer: boolean;
  /** Never rejects on dependent errors: they are in the result (`throwIfErrors()`). */
  reconcile(primary: P, ctx: C, options?: ExecutionOptions<E>): Promise<WorkflowReconcileResult>;
  cleanup(primary: P, ctx: C, options?: ExecutionOptions<E>): Promise<WorkflowCleanupResult>;
}

/**
 * One run of the controller for one primary: runs the managed workflow at the right moment and
 * keeps its result for the reconciler (what JOSDK's context calls
 * `managedWorkflowAndDependentResourceContext`). The controller puts it on its Context.
 */
export class ManagedWorkflowInvocation<P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  private reconciled?: WorkflowReconcileResult;
  private cleaned?: WorkflowCleanupResult;

  constructor(
    readonly workflow: ManagedWorkflow<P, C, E>,
    private readonly primary: P,
    private readonly ctx: C,
    private readonly options: ExecutionOptions<E> = {},
  ) {}

  get reconcileResult(): WorkflowReconcileResult | undefined {
    return this.reconciled;
  }

  get cleanupResult(): WorkflowCleanupResult | undefined {
    return this.cleaned;
  }

  /** Controller: before `reconcile`. Runs the workflow unless it is invoked explicitly or empty. */
  async beforeReconcile(): Promise<WorkflowReconcileResult | undefined> {
    if (this.workflow.explicitInvocation || this.workflow.isEmpty) return undefined;
    return this.runReconcile();
  }

  /**
   * Controller: before `cleanup` (or instead of it when the reconciler has none). Runs the workflow
   * cleanup when it has something to delete, unless the reconciler has `cleanup` and the workflow
   * is invoked explicitly.
   */
  async beforeCleanup(reconcilerHasCleanup: boolean): Promise<WorkflowCleanupResult | undefined> {
    if (this.workflow.explicitInvocation && reconcilerHasCleanup) return undefined;
    if (!this.workflow.hasDeletableDependents) return undefined;
    return this.runCleanup();
  }

  /** Reconciler: runs the workflow now. Only for a workflow with `explicitInvocation`. */
  async reconcileManagedWorkflow(): Promise<WorkflowReconcileResult> {
    this.requireExplicit('reconcileManagedWorkflow');
    return this.runReconcile();
  }

  /** Reconciler's `cleanup`: runs the workflow cleanup now. Only with `explicitInvocation`. */
  async cleanupManagedWorkflow(): Promise<WorkflowCleanupResult> {
    this.requireExplicit('cleanupManagedWorkflow');
    return this.runCleanup();
  }

  private requireExplicit(method: string): void {
    if (!this.workflow.explicitInvocation) {
      throw new Error(
        `${method}() needs a workflow built with { explicitInvocation: true }; ` + 'this one runs before the reconciler by itself',
      );
    }
  }

  private async runReconcile(): Promise<WorkflowReconcileResult> {
    this.reconciled = await this.workflow.reconcile(this.primary, this.ctx, this.options);
    return this.reconciled;
  }

  private async runCleanup(): Promise<WorkflowCleanupResult> {
    this.cleaned = await this.workflow.cleanup(this.primary, this.ctx, this.options);
    return this.cleaned;
  }
}
