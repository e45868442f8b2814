/**
 * Workflow conditions: plain functions of (dependent, primary, context). A condition answers a
 * boolean, or a detailed result whose `detail` is kept in the workflow result (WF3).
 */
import type { DependentContext, DependentResource } from '../dependent/index.js';

export type ConditionKind = 'activationCondition' | 'reconcilePrecondition' | 'readyPostcondition' | 'deletePostcondition';

export const CONDITION_KINDS: readonly ConditionKind[] = [
  'activationCondition',
  'reconcilePrecondition',
  'readyPostcondition',
  'deletePostcondition',
];

/**
 * A condition's answer with extra information (e.g. why a dependent is not ready), and how a
 * condition evaluated as the result keeps it: always `{ met }`, `detail` when given.
 */
export interface ConditionResult<D = unknown> {
  readonly met: boolean;
  readonly detail?: D;
}

export type ConditionValue = boolean | ConditionResult;

export type Condition<R, P, C extends DependentContext = DependentContext> = (
  dependent: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
) => ConditionValue | Promise<ConditionValue>;

/** A condition with its dependent already bound, as the executors call it. */
export type BoundCondition<P, C> = (primary: P, ctx: C) => ConditionValue | Promise<ConditionValue>;

function isDetailed(value: unknown): value is ConditionResult {
  return typeof value === 'object' && value !== null && typeof (value as { met?: unknown }).met === 'boolean';
}

/** Evaluates a condition; an answer that is neither a boolean nor `{ met: boolean }` is an error. */
export async function evaluateCondition<P, C>(
  condition: BoundCondition<P, C>,
  primary: P,
  ctx: C,
  where: { readonly dependent: string; readonly kind: ConditionKind },
): Promise<ConditionResult> {
  const value: unknown = await condition(primary, ctx);
  if (typeof value === 'boolean') return { met: value };
  if (isDetailed(value)) {
    return 'detail' in value ? { met: value.met, detail: value.detail } : { met: value.met };
  }
  throw new TypeError(
    `${where.kind} of dependent '${where.dependent}' returned ${describe(value)}; ` + 'expected a boolean or { met: boolean, detail? }',
  );
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return 'an object without a boolean "met"';
  return `a ${typeof value}`;
}
