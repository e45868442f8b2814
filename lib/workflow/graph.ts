/**
 * The workflow DAG (WF1): nodes by name, their `dependsOn` edges and the reverse (`dependents`)
 * edges, checked at build time — unknown names and cycles are errors that name the nodes.
 */
import type { DependentContext, DependentResource } from '../dependent/index.js';
import type { BoundCondition, ConditionKind } from './conditions.js';
import type { SecondarySpec } from '../sources/index.js';

export interface WorkflowNode<P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  readonly name: string;
  readonly dependent: DependentResource<unknown, P, C, E>;
  /** Names of the nodes this one is reconciled after. */
  readonly dependsOn: readonly string[];
  /** Names of the nodes that depend on this one (reconciled after it, deleted before it). */
  readonly dependents: readonly string[];
  readonly conditions: Readonly<Partial<Record<ConditionKind, BoundCondition<P, C>>>>;
}

export interface WorkflowGraph<P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  /** Every node, in topological order (a node comes after everything it depends on). */
  readonly nodes: readonly WorkflowNode<P, C, E>[];
  readonly byName: ReadonlyMap<string, WorkflowNode<P, C, E>>;
}

/** A node before validation: `dependsOn` already resolved to names. */
export type NodeSpec<P, C extends DependentContext, E> = Omit<WorkflowNode<P, C, E>, 'dependents'>;

/**
 * Checks the nodes and orders them. Throws on a duplicate name, an unknown `dependsOn` name, or a
 * cycle (the message shows the cycle's path, e.g. `a -> b -> c -> a`).
 */
export function buildGraph<P, C extends DependentContext, E>(specs: readonly NodeSpec<P, C, E>[]): WorkflowGraph<P, C, E> {
  const specByName = new Map<string, NodeSpec<P, C, E>>();
  for (const spec of specs) {
    if (specByName.has(spec.name)) {
      throw new Error(`workflow: two dependents are named '${spec.name}'; names must be unique`);
    }
    specByName.set(spec.name, spec);
  }
  const dependents = new Map<string, string[]>(specs.map((s) => [s.name, []]));
  for (const spec of specs) {
    for (const dep of spec.dependsOn) {
      const reverse = dependents.get(dep);
      if (!reverse) {
        throw new Error(`workflow: dependent '${spec.name}' dependsOn '${dep}', which is not in the workflow`);
      }
      if (!reverse.includes(spec.name)) reverse.push(spec.name);
    }
  }
  const order = topologicalOrder(specs);
  const nodes = order.map((spec): WorkflowNode<P, C, E> => ({
    ...spec,
    dependsOn: [...new Set(spec.dependsOn)],
    dependents: dependents.get(spec.name) ?? [],
  }));
  return { nodes, byName: new Map(nodes.map((n) => [n.name, n])) };
}

/** Depth-first order over `dependsOn`; a node found on the current path closes a cycle. */
function topologicalOrder<T extends { readonly name: string; readonly dependsOn: readonly string[] }>(specs: readonly T[]): T[] {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const done = new Set<string>();
  const path: string[] = [];
  const ordered: T[] = [];
  const visit = (spec: T): void => {
    if (done.has(spec.name)) return;
    const onPath = path.indexOf(spec.name);
    if (onPath >= 0) {
      const cycle = [...path.slice(onPath), spec.name].join(' -> ');
      throw new Error(`workflow: dependsOn forms a cycle: ${cycle} (x -> y: x dependsOn y)`);
    }
    path.push(spec.name);
    for (const dep of spec.dependsOn) visit(byName.get(dep)!);
    path.pop();
    done.add(spec.name);
    ordered.push(spec);
  };
  specs.forEach(visit);
  return ordered;
}
