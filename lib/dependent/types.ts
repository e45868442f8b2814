/**
 * The DependentResource contract (DR1): a dependent is a plain object whose optional members are
 * its traits. A missing trait switches the matching part of the reconcile flow off — no `create`,
 * never created; no `update`, never updated; no `delete`, never deleted.
 *
 * Nothing here knows about Kubernetes: `R` is the secondary resource, `P` the primary, `C` the
 * context the controller passes in (anything satisfying `DependentContext`), `E` the event source
 * type the controller registers for the dependent (by default the one secondary spec `sources/`
 * defines; a workflow outside a controller may carry any).
 */
import type { SecondarySpec } from '../sources/index.js';

/**
 * The minimal context a dependent and a workflow need. The controller's `Context` satisfies it; a
 * test can pass `{}`. An aborted `signal` stops a workflow from starting further dependents.
 * (The `object &` keeps it from being a "weak type": a context without a `signal` member, such as
 * `{ client }`, still satisfies it.)
 */
export type DependentContext = object & { readonly signal?: AbortSignal };

/**
 * A dependent resource. Traits are written as methods (not function-typed properties) on purpose:
 * method parameters are bivariant, so a `DependentResource<ConfigMap, P, C>` can be stored in a
 * workflow next to a `DependentResource<Deployment, P, C>`.
 */
export interface DependentResource<R, P, C extends DependentContext = DependentContext, E = SecondarySpec> {
  /** Unique within a workflow; also what logs, results and errors call the dependent. */
  readonly name?: string;

  /** The secondary resource as it should be, computed from the primary. */
  desired?(primary: P, ctx: C): R | Promise<R>;

  /**
   * The current secondary resource, or `undefined` when it does not exist. `desired` is passed when
   * the dependent has a `desired` trait, so a dependent can pick its own secondary among several of
   * one kind (DR3) without computing the desired state twice.
   */
  getSecondary?(primary: P, ctx: C, desired?: R): R | undefined | Promise<R | undefined>;

  /** Creates the secondary. Returns the created resource, or nothing (the desired state is kept). */
  create?(desired: R, primary: P, ctx: C): R | void | Promise<R | void>;

  /** Updates the secondary to the desired state. Returns the updated resource, or nothing. */
  update?(actual: R, desired: R, primary: P, ctx: C): R | void | Promise<R | void>;

  /**
   * Whether the actual secondary already is as desired (then no update happens). Default:
   * `desiredFieldsEqual(desired, actual)` — every field the desired state sets has that value in
   * the actual state; fields only the actual state has are ignored.
   */
  match?(actual: R, desired: R, primary: P, ctx: C): boolean | Promise<boolean>;

  /** Deletes the secondary. Called whether or not it exists: it must tolerate an absent resource. */
  delete?(primary: P, ctx: C): void | Promise<void>;

  /**
   * Owner references delete the secondary when the primary goes away, so workflow cleanup does not
   * call `delete`. `delete` is still called when a reconcile precondition turns false (the primary
   * stays, so the garbage collector would never remove the secondary).
   */
  readonly garbageCollected?: boolean;

  /** The event source telling the controller about changes of this dependent's secondaries. */
  readonly eventSource?: E;

  /**
   * Replaces the generic create/match/update flow when the dependent's logic does not fit it.
   * `reconcileDependent` then only calls this.
   */
  reconcile?(primary: P, ctx: C): DependentReconcileResult<R> | Promise<DependentReconcileResult<R>>;
}

/** What reconciling one dependent did. `resource` is the secondary after the step, if any. */
export type DependentReconcileResult<R> =
  | { readonly operation: 'created'; readonly resource: R }
  | { readonly operation: 'updated'; readonly resource: R }
  | { readonly operation: 'unchanged'; readonly resource: R }
  /** The secondary is absent and the dependent has no `create` trait. */
  | { readonly operation: 'skipped'; readonly reason: 'noCreate'; readonly resource: undefined }
  /** The secondary differs from the desired state and the dependent has no `update` trait. */
  | { readonly operation: 'skipped'; readonly reason: 'noUpdate'; readonly resource: R };

/** What deleting one dependent did: `skipped` when it has no `delete` trait. */
export interface DeleteResult {
  readonly operation: 'deleted' | 'skipped';
}
