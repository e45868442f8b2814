/** The perturbation kinds the explorer knows, in one list: a new kind is its module and a line here. */
import type { Perturbation } from '../types.js';
import { coalesce } from './coalesce.js';
import { crash } from './crash.js';
import { fail } from './fail.js';
import { gap } from './gap.js';
import type { PerturbationKind, PlannedPerturbation } from './kind.js';
import { stale } from './stale.js';

export type { CoverageTally, PerturbationKind, PlannedPerturbation, ReferenceFacts, RunControl } from './kind.js';

/** In the order `explore` interleaves their candidates, so that a small budget tries each. */
export const PERTURBATIONS: readonly PerturbationKind<Perturbation>[] = [stale, crash, gap, coalesce, fail];

/** The kind of `p` among `kinds`; a plan naming none is an error that says which it named. */
export function kindOf<P extends PlannedPerturbation>(kinds: readonly PerturbationKind<P>[], p: P): PerturbationKind<P> {
  const kind = kinds.find((k) => k.type === p.type);
  if (!kind) throw new Error(`explore: unknown perturbation '${p.type}' in the plan (known: ${kinds.map((k) => k.type).join(', ')})`);
  return kind;
}
