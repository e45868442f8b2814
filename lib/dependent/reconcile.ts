/**
 * The generic, trait-driven reconcile and delete of one dependent (DR1): compute the desired
 * state, read the actual one, create when absent, update when it does not match — each step only
 * when the dependent has the trait for it.
 */
import type { DeleteResult, DependentContext, DependentResource, DependentReconcileResult } from './types.js';

/** The name a dependent is known by in messages; `(unnamed)` when it has none. */
export function dependentName(dr: { readonly name?: string }): string {
  return dr.name ?? '(unnamed)';
}

/**
 * Whether workflow cleanup calls `delete` on this dependent: it has the trait and its secondary is
 * not garbage-collected through owner references. A workflow with such a dependent needs a
 * finalizer on the primary (FZ1).
 */
export function isDeletable(dr: { readonly delete?: unknown; readonly garbageCollected?: boolean }): boolean {
  return typeof dr.delete === 'function' && dr.garbageCollected !== true;
}

/**
 * The default matcher: every field the desired value sets has the same value in the actual one,
 * recursively; fields only the actual value has (defaults, status, server metadata) are ignored.
 * Arrays must have the same length and match element by element. `undefined` in the desired value
 * means "not set".
 */
export function desiredFieldsEqual(desired: unknown, actual: unknown): boolean {
  if (desired === actual) return true;
  if (typeof desired === 'number' && typeof actual === 'number') {
    return Number.isNaN(desired) && Number.isNaN(actual);
  }
  if (typeof desired !== 'object' || desired === null) return false;
  if (typeof actual !== 'object' || actual === null) return false;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || desired.length !== actual.length) return false;
    return desired.every((item, i) => desiredFieldsEqual(item, actual[i]));
  }
  if (Array.isArray(actual)) return false;
  const actualRecord = actual as Record<string, unknown>;
  return Object.entries(desired).every(
    ([key, value]) =>
      value === undefined || (Object.prototype.hasOwnProperty.call(actualRecord, key) && desiredFieldsEqual(value, actualRecord[key])),
  );
}

type TraitPresence = { readonly [K in keyof DependentResource<unknown, unknown>]?: unknown };

function requireTraitsFor(dr: TraitPresence & { readonly name?: string }): void {
  const writes = [dr.create && 'create', dr.update && 'update'].filter(Boolean).join(' and ');
  if (!writes) return;
  if (typeof dr.desired !== 'function') {
    throw new Error(`dependent '${dependentName(dr)}' has ${writes} but no desired(): nothing to write`);
  }
  if (typeof dr.getSecondary !== 'function') {
    throw new Error(`dependent '${dependentName(dr)}' has ${writes} but no getSecondary(): ` + 'cannot tell whether the secondary exists');
  }
}

/**
 * Reconciles one dependent:
 * - a `reconcile` trait replaces everything below;
 * - absent secondary: `create` (`created`), or `skipped`/`noCreate` without the trait;
 * - present secondary: without `desired` it is `unchanged` (read-only dependent); when `match`
 *   (default `desiredFieldsEqual`) says it matches, `unchanged`; otherwise `update` (`updated`), or
 *   `skipped`/`noUpdate` without the trait.
 * Errors of any trait reject the returned promise unchanged.
 */
export async function reconcileDependent<R, P, C extends DependentContext>(
  dr: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
): Promise<DependentReconcileResult<R>> {
  if (typeof dr.reconcile === 'function') return dr.reconcile(primary, ctx);
  requireTraitsFor(dr);

  const hasDesired = typeof dr.desired === 'function';
  const desired = hasDesired ? await dr.desired!(primary, ctx) : undefined;
  const actual = dr.getSecondary ? await dr.getSecondary(primary, ctx, desired) : undefined;

  if (actual === undefined) {
    if (!dr.create) return { operation: 'skipped', reason: 'noCreate', resource: undefined };
    const created = await dr.create(desired as R, primary, ctx);
    return { operation: 'created', resource: created ?? (desired as R) };
  }
  if (!hasDesired) return { operation: 'unchanged', resource: actual };

  const matches = dr.match ? await dr.match(actual, desired as R, primary, ctx) : desiredFieldsEqual(desired, actual);
  if (matches) return { operation: 'unchanged', resource: actual };
  if (!dr.update) return { operation: 'skipped', reason: 'noUpdate', resource: actual };
  const updated = await dr.update(actual, desired as R, primary, ctx);
  return { operation: 'updated', resource: updated ?? (desired as R) };
}

/**
 * Deletes one dependent's secondary when it has a `delete` trait (`skipped` otherwise). Whether a
 * garbage-collected dependent should be deleted is the caller's decision (see `isDeletable`).
 */
export async function deleteDependent<R, P, C extends DependentContext>(
  dr: DependentResource<R, P, C, unknown>,
  primary: P,
  ctx: C,
): Promise<DeleteResult> {
  if (typeof dr.delete !== 'function') return { operation: 'skipped' };
  await dr.delete(primary, ctx);
  return { operation: 'deleted' };
}
