/**
 * `workflow<P, C>()`: an immutable builder of dependents and their relations, and the built
 * `Workflow` that runs reconcile and cleanup over the DAG.
 */
import { lastValueFrom, type Observable } from 'rxjs';
import { type DependentContext, type DependentResource, isDeletable } from '../dependent/index.js';
import { executeCleanup } from './cleanup.js';
import { CONDITION_KINDS, type BoundCondition, type Condition, type ConditionKind } from './conditions.js';
import { buildGraph, type NodeSpec, type WorkflowGraph, type WorkflowNode } from './graph.js';
import type { ManagedWorkflow } from './managed.js';
import { toMermaid } from './mermaid.js';
import type { ExecutionOptions } from './node-run.js';
import { executeReconcile, type WorkflowEvent } from './reconcile.js';
import type { WorkflowCleanupResult, WorkflowReconcileResult } from './result.js';
import type { SecondarySpec } from '../sources/index.js';

/** A dependent named in `dependsOn`: its name, or the dependent object itself. */
export type DependentRef = string | (object & { readonly name?: string });

export interface DependentOptions<R, P, C extends DependentContext = DependentContext> {
  /** Overrides the dependent's own `name` within this workflow. */
  readonly name?: string;
  readonly dependsOn?: DependentRef | readonly DependentRef[];
  readonly reconcilePrecondition?: Condition<R, P, C>;
  readonly readyPostcondition?: Condition<R, P, C>;
  readonly deletePostcondition?: Condition<R, P, C>;
  readonly activationCondition?: Condition<R, P, C>;
}

export interface WorkflowOptions {
  /** How many independent dependents run at once (default 10; 1 runs them one by one). */
  readonly maxConcurrency?: number;
  /** The reconciler invokes the managed workflow itself (default false). */
  readonly explicitInvocation?: boolean;
}

export const DEFAULT_WORKFLOW_CONCURRENCY = 10;

export interface Workflow<P, C extends DependentContext = DependentContext, E = SecondarySpec> extends ManagedWorkflow<P, C, E> {
  /** The dependents in topological order, with their edges and conditions. */
  readonly nodes: readonly WorkflowNode<P, C, E>[];
  readonly maxConcurrency: number;
  /** The reconcile run as a stream: one event per dependent step, then `done` with the result. */
  reconcile$(primary: P, ctx: C, options?: ExecutionOptions<E>): Observable<WorkflowEvent<WorkflowReconcileResult>>;
  cleanup$(primary: P, ctx: C, options?: ExecutionOptions<E>): Observable<WorkflowEvent<WorkflowCleanupResult>>;
  /** The DAG as a Mermaid `graph TD` (arrows in reconcile order, conditions listed per node). */
  toMermaid(): string;
}

export interface WorkflowBuilder<P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  add<R>(dependent: DependentResource<R, P, C, E>, options?: DependentOptions<R, P, C>): WorkflowBuilder<P, C, E>;
  /** Validates (WF1: names, unknown `dependsOn`, cycles) and returns the runnable workflow. */
  build(options?: WorkflowOptions): Workflow<P, C, E>;
}

interface Entry<P, C extends DependentContext, E> {
  readonly dependent: DependentResource<unknown, P, C, E>;
  readonly options: DependentOptions<unknown, P, C>;
}

export function workflow<P, C extends DependentContext = DependentContext, E = SecondarySpec>(): WorkflowBuilder<P, C, E> {
  return builder<P, C, E>([]);
}

function builder<P, C extends DependentContext, E>(entries: readonly Entry<P, C, E>[]): WorkflowBuilder<P, C, E> {
  return {
    add: <R>(dependent: DependentResource<R, P, C, E>, options: DependentOptions<R, P, C> = {}) =>
      builder<P, C, E>([
        ...entries,
        // Conditions are bound to their own dependent right away, so storing them as `unknown` is safe.
        { dependent, options: options as DependentOptions<unknown, P, C> },
      ]),
    build: (options = {}) => buildWorkflow(entries, options),
  };
}

function validateOptions(options: WorkflowOptions): Required<WorkflowOptions> {
  const maxConcurrency = options.maxConcurrency ?? DEFAULT_WORKFLOW_CONCURRENCY;
  if (!(maxConcurrency === Infinity || (Number.isInteger(maxConcurrency) && maxConcurrency >= 1))) {
    throw new Error(`workflow: maxConcurrency must be a positive integer or Infinity, got ${String(maxConcurrency)}`);
  }
  return { maxConcurrency, explicitInvocation: options.explicitInvocation ?? false };
}

function nodeSpecs<P, C extends DependentContext, E>(entries: readonly Entry<P, C, E>[]): NodeSpec<P, C, E>[] {
  const names = entries.map(({ dependent, options }, i) => {
    const name = options.name ?? dependent.name;
    if (typeof name !== 'string' || name === '') {
      throw new Error(`workflow: dependent #${i + 1} has no name; set its name or pass { name } to add()`);
    }
    return name;
  });
  const nameOf = new Map<object, string>();
  entries.forEach(({ dependent }, i) => {
    const earlier = nameOf.get(dependent);
    if (earlier !== undefined) {
      throw new Error(`workflow: the same dependent object was added twice (as '${earlier}' and '${names[i]}')`);
    }
    nameOf.set(dependent, names[i]);
  });

  return entries.map(({ dependent, options }, i): NodeSpec<P, C, E> => {
    const name = names[i];
    const dependsOn = asList(options.dependsOn).map((ref) => {
      if (typeof ref === 'string') return ref;
      if (typeof ref !== 'object' || ref === null) {
        throw new Error(
          `workflow: dependent '${name}' has a dependsOn entry that is ${String(ref)}; ` +
            'expected a dependent name or a dependent object',
        );
      }
      const resolved = nameOf.get(ref);
      if (resolved === undefined) {
        const which = ref.name === undefined ? 'unnamed' : `named '${ref.name}'`;
        throw new Error(`workflow: dependent '${name}' dependsOn a dependent object that was not added ` + `to the workflow (${which})`);
      }
      return resolved;
    });
    const conditions: Partial<Record<ConditionKind, BoundCondition<P, C>>> = {};
    for (const kind of CONDITION_KINDS) {
      const condition = options[kind];
      if (condition === undefined) continue;
      if (typeof condition !== 'function') {
        throw new Error(`workflow: ${kind} of dependent '${name}' must be a function, got ${typeof condition}`);
      }
      conditions[kind] = (primary, ctx) => condition(dependent, primary, ctx);
    }
    return { name, dependent, dependsOn, conditions };
  });
}

function asList(refs: DependentRef | readonly DependentRef[] | undefined): readonly DependentRef[] {
  if (refs === undefined) return [];
  return Array.isArray(refs) ? (refs as readonly DependentRef[]) : [refs];
}

function buildWorkflow<P, C extends DependentContext, E>(entries: readonly Entry<P, C, E>[], options: WorkflowOptions): Workflow<P, C, E> {
  const { maxConcurrency, explicitInvocation } = validateOptions(options);
  const graph: WorkflowGraph<P, C, E> = buildGraph(nodeSpecs(entries));
  const hasDeletableDependents = graph.nodes.some((n) => isDeletable(n.dependent));
  const concurrency = (o: ExecutionOptions<E>) =>
    o.maxConcurrency === undefined ? maxConcurrency : validateOptions({ maxConcurrency: o.maxConcurrency }).maxConcurrency;

  const reconcile$ = (primary: P, ctx: C, o: ExecutionOptions<E> = {}) => executeReconcile(graph, primary, ctx, concurrency(o), o);
  const cleanup$ = (primary: P, ctx: C, o: ExecutionOptions<E> = {}) => executeCleanup(graph, primary, ctx, concurrency(o), o);

  return {
    nodes: graph.nodes,
    maxConcurrency,
    explicitInvocation,
    isEmpty: graph.nodes.length === 0,
    hasDeletableDependents,
    needsFinalizer: hasDeletableDependents,
    reconcile$,
    cleanup$,
    reconcile: async (primary, ctx, o) => lastResult(reconcile$(primary, ctx, o)),
    cleanup: async (primary, ctx, o) => lastResult(cleanup$(primary, ctx, o)),
    toMermaid: () => toMermaid(graph.nodes),
  };
}

async function lastResult<W>(events$: Observable<WorkflowEvent<W>>): Promise<W> {
  const last = await lastValueFrom(events$);
  if (last.type !== 'done') throw new Error('workflow run ended without a result');
  return last.result;
}
