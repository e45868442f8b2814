/**
 * `toMermaid()`: the workflow DAG as a Mermaid `graph TD`. Arrows follow reconcile order, as in
 * the reference's diagrams (`a --> b`: b dependsOn a); each node lists the conditions it has.
 */
import type { DependentContext } from '../dependent/index.js';
import { CONDITION_KINDS, type ConditionKind } from './conditions.js';
import type { WorkflowNode } from './graph.js';

const CONDITION_LABELS: Record<ConditionKind, string> = {
  activationCondition: 'activation condition',
  reconcilePrecondition: 'reconcile precondition',
  readyPostcondition: 'ready postcondition',
  deletePostcondition: 'delete postcondition',
};

/** Mermaid labels are quoted; a quote inside becomes an entity, and markup is not interpreted. */
function escapeLabel(text: string): string {
  return text.replaceAll('&', '#amp;').replaceAll('"', '#quot;').replaceAll('<', '#lt;').replaceAll('>', '#gt;');
}

export function toMermaid<P, C extends DependentContext, E>(nodes: readonly WorkflowNode<P, C, E>[]): string {
  // Ids are positional so any dependent name (dashes, dots, Mermaid keywords) is safe.
  const ids = new Map(nodes.map((node, i) => [node.name, `n${i}`]));
  const lines = ['graph TD'];
  for (const node of nodes) {
    const conditions = CONDITION_KINDS.filter((kind) => node.conditions[kind]).map((kind) => CONDITION_LABELS[kind]);
    const label = [escapeLabel(node.name), ...conditions].join('<br/>');
    lines.push(`  ${ids.get(node.name)!}["${label}"]`);
  }
  for (const node of nodes) {
    for (const dep of node.dependsOn) lines.push(`  ${ids.get(dep)!} --> ${ids.get(node.name)!}`);
  }
  return `${lines.join('\n')}\n`;
}
