/**
 * Per-run state of each workflow node, shared by the reconcile and the cleanup executor: where the
 * node is, what its conditions answered, and the activation-condition bookkeeping (WF5).
 */
import type { DependentContext, DependentReconcileResult } from '../dependent/index.js';
import { evaluateCondition, type ConditionKind, type ConditionResult } from './conditions.js';
import type { WorkflowGraph, WorkflowNode } from './graph.js';
import type { DependentOutcome, DependentResult } from './result.js';
import type { SecondarySpec } from '../sources/index.js';
import { inSpan, type SpanFn } from '../observe/index.js';

/**
 * Where the executor registers and unregisters the event source of a dependent that has an
 * activation condition (WF5): `register` when the condition holds, `unregister` when it does not.
 * Both are called on every evaluation, so they must be idempotent.
 */
export interface EventSourceRegistry<E = SecondarySpec> {
  register(dependent: string, eventSource: E): void | Promise<void>;
  unregister(dependent: string, eventSource: E): void | Promise<void>;
}

export interface ExecutionOptions<E = SecondarySpec> {
  /** How many dependents may run at once; defaults to the workflow's `maxConcurrentDependents`. */
  readonly maxConcurrentDependents?: number;
  readonly eventSources?: EventSourceRegistry<E>;
  /** Each dependent's step and condition as a span of the run (a traced controller passes its tracer's). */
  readonly span?: SpanFn | undefined;
}

export interface NodeRun<P, C extends DependentContext, E> {
  readonly node: WorkflowNode<P, C, E>;
  /** `running` from submission to settlement, so a node is never submitted twice. */
  phase: 'idle' | 'running' | 'done';
  outcome: DependentOutcome;
  ready: boolean;
  markedForDelete: boolean;
  deleteCalled: boolean;
  error?: unknown;
  reconcileResult?: DependentReconcileResult<unknown>;
  /** The activation condition's answer, evaluated at most once per run. */
  active?: boolean;
  readonly conditions: Partial<Record<ConditionKind, ConditionResult>>;
}

export class WorkflowRun<P, C extends DependentContext, E> {
  readonly runs: ReadonlyMap<string, NodeRun<P, C, E>>;

  constructor(
    readonly graph: WorkflowGraph<P, C, E>,
    readonly primary: P,
    readonly ctx: C,
    private readonly eventSources: EventSourceRegistry<E> | undefined,
    private readonly span?: SpanFn | undefined,
  ) {
    this.runs = new Map(
      graph.nodes.map((node) => [
        node.name,
        {
          node,
          phase: 'idle',
          outcome: 'notVisited',
          ready: false,
          markedForDelete: false,
          deleteCalled: false,
          conditions: {},
        },
      ]),
    );
  }

  run(name: string): NodeRun<P, C, E> {
    return this.runs.get(name)!;
  }

  get aborted(): boolean {
    return this.ctx.signal?.aborted === true;
  }

  /** Evaluates one condition of the node and records it; a node without it counts as met. */
  async condition(run: NodeRun<P, C, E>, kind: ConditionKind): Promise<boolean> {
    const condition = run.node.conditions[kind];
    if (!condition) return true;
    const result = await inSpan(
      this.span,
      `${kind} ${run.node.name}`,
      { 'rxkube.dependent': run.node.name, 'rxkube.condition': kind },
      () => evaluateCondition(condition, this.primary, this.ctx, { dependent: run.node.name, kind }),
    );
    run.conditions[kind] = result;
    return result.met;
  }

  /** One step of a dependent (reconcile, delete), as a span of the run when it is traced. */
  traced<T>(operation: 'reconcile' | 'delete', run: NodeRun<P, C, E>, work: () => Promise<T>): Promise<T> {
    return inSpan(
      this.span,
      `${operation} ${run.node.name}`,
      { 'rxkube.dependent': run.node.name, 'rxkube.dependent.operation': operation },
      work,
    );
  }

  /**
   * The activation condition, once per run; then the node's event source is registered (active)
   * or unregistered (inactive), before the node's traits run.
   */
  async activation(run: NodeRun<P, C, E>): Promise<boolean> {
    if (run.active !== undefined) return run.active;
    if (!run.node.conditions.activationCondition) return (run.active = true);
    const active = await this.condition(run, 'activationCondition');
    run.active = active;
    const source = run.node.dependent.eventSource;
    if (this.eventSources && source !== undefined) {
      if (active) await this.eventSources.register(run.node.name, source);
      else await this.eventSources.unregister(run.node.name, source);
    }
    return active;
  }

  snapshot(run: NodeRun<P, C, E>): DependentResult {
    return {
      name: run.node.name,
      outcome: run.outcome,
      ready: run.ready,
      ...(run.reconcileResult ? { reconcileResult: run.reconcileResult } : {}),
      markedForDelete: run.markedForDelete,
      deleteCalled: run.deleteCalled,
      ...(run.outcome === 'errored' ? { error: run.error } : {}),
      conditions: { ...run.conditions },
    };
  }

  finish(run: NodeRun<P, C, E>, outcome: DependentOutcome, error?: unknown): readonly DependentResult[] {
    run.phase = 'done';
    run.outcome = outcome;
    if (outcome === 'errored') run.error = error;
    return [this.snapshot(run)];
  }

  /** Settlement of a step that found the run aborted: the node stays unvisited. */
  release(run: NodeRun<P, C, E>): readonly DependentResult[] {
    run.phase = 'idle';
    return [];
  }

  /** The node went through its delete step cleanly (or was inactive): what waits on it may go on. */
  isCleanlyGone(name: string): boolean {
    const outcome = this.run(name).outcome;
    return outcome === 'deleted' || outcome === 'inactive';
  }

  /** The latest state of every node, in topological order. */
  results(): ReadonlyMap<string, DependentResult> {
    return new Map([...this.runs].map(([name, run]) => [name, this.snapshot(run)]));
  }
}
