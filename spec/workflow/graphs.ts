/** The reference's sample graphs, built from fakes with per-node scripts and conditions. */
import type { DependentOptions, WorkflowOptions } from '../../lib/workflow/index.js';
import { workflow } from '../../lib/workflow/index.js';
import type { Ctx, Item, Primary, Script, World } from './fakes.js';

export type NodeSetup = Omit<DependentOptions<Item, Primary, Ctx>, 'dependsOn' | 'name'> & {
  readonly script?: Script;
};

/** Builds a workflow from `{ node: [dependsOn...] }`, in the key order given. */
export function graph(
  world: World,
  edges: Readonly<Record<string, readonly string[]>>,
  setup: Readonly<Record<string, NodeSetup>> = {},
  options: WorkflowOptions = {},
) {
  let builder = workflow<Primary, Ctx, string>();
  for (const [name, dependsOn] of Object.entries(edges)) {
    const { script, ...conditions } = setup[name] ?? {};
    builder = builder.add(world.dependent(name, script), { dependsOn, ...conditions });
  }
  return builder.build(options);
}

/** Reference sample: 1 --> 2, 1 --> 3, 2 --> 4, 3 --> 4 (arrows in reconcile order). */
export const DIAMOND = { '1': [], '2': ['1'], '3': ['1'], '4': ['2', '3'] } as const;

/** Reference sample with a reconcile precondition: 1 --> 2, 1 --> 3, 3 --> 4, 3 --> 5. */
export const FAN = { '1': [], '2': ['1'], '3': ['1'], '4': ['3'], '5': ['3'] } as const;
