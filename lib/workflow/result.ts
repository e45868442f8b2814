/**
 * Workflow results (WF3): what happened to each dependent in one reconcile or cleanup run, and the
 * one error that carries every dependent's error.
 */
import { describeValue, redactText, secretValuesWithin, statusCondition, type StatusCondition } from '../core/index.js';
import type { DependentReconcileResult } from '../dependent/index.js';
import type { ConditionKind, ConditionResult } from './conditions.js';

/**
 * Where a dependent ended up in one run:
 * - `reconciled`: reconciled without error (`ready` says whether its ready postcondition held);
 * - `deleted`: its delete step ran (delete called, or nothing to call) and its delete postcondition held;
 * - `deletePostconditionNotMet`: its delete step ran but the delete postcondition did not hold;
 * - `inactive`: its activation condition did not hold — neither reconciled nor deleted;
 * - `errored`: a trait or a condition threw (`error`);
 * - `notVisited`: never reached — something it waits for was not reconciled and ready (reconcile),
 *   or not cleanly deleted (delete), or the run was aborted.
 */
export type DependentOutcome = 'reconciled' | 'deleted' | 'deletePostconditionNotMet' | 'inactive' | 'errored' | 'notVisited';

export interface DependentResult {
  readonly name: string;
  readonly outcome: DependentOutcome;
  /** Reconciled and its ready postcondition (if any) held. */
  readonly ready: boolean;
  readonly reconcileResult?: DependentReconcileResult<unknown>;
  /** Reconcile run only: its own reconcile precondition, or one of an ancestor, did not hold. */
  readonly markedForDelete: boolean;
  /** The dependent's `delete` was called in this run. */
  readonly deleteCalled: boolean;
  readonly error?: unknown;
  /** The conditions evaluated in this run, with their details. */
  readonly conditions: Readonly<Partial<Record<ConditionKind, ConditionResult>>>;
}

export type WorkflowRunKind = 'reconcile' | 'cleanup';

export interface WorkflowResultBase {
  readonly kind: WorkflowRunKind;
  /** Every dependent of the workflow, in topological order. */
  readonly dependents: ReadonlyMap<string, DependentResult>;
  readonly deleteCalled: readonly string[];
  readonly deletePostconditionNotMet: readonly string[];
  /** The result of one dependent; throws for a name that is not in the workflow. */
  dependent(name: string): DependentResult;
  conditionResult(name: string, kind: ConditionKind): ConditionResult | undefined;
  /** Errors by dependent name (empty when none). */
  erroredDependents(): ReadonlyMap<string, unknown>;
  hasErrors(): boolean;
  /** Throws one `AggregatedOperatorError` carrying every error, if there is any. */
  throwIfErrors(): void;
}

export interface WorkflowReconcileResult extends WorkflowResultBase {
  readonly kind: 'reconcile';
  readonly reconciled: readonly string[];
  /** Reconciled, but the ready postcondition did not hold. */
  readonly notReady: readonly string[];
  /**
   * No errors, and every dependent is either reconciled and ready, or meant to be absent and
   * done (inactive, or deleted because a reconcile precondition did not hold).
   */
  allReady(): boolean;
  /**
   * The `Ready` status condition this result means for `primary`: `True` (reason
   * `DependentsReady`) when `allReady()`, else `False` naming the dependents that failed
   * (`DependentsFailed`) or are not ready yet (`DependentsNotReady`).
   */
  readyCondition(primary: unknown, now?: Date): StatusCondition;
}

export interface WorkflowCleanupResult extends WorkflowResultBase {
  readonly kind: 'cleanup';
  /** No dependent's delete postcondition was false. */
  allPostconditionsMet(): boolean;
  /** Every dependent went through its delete step cleanly (or was inactive): the finalizer may go. */
  allDeleted(): boolean;
}

export type WorkflowResult = WorkflowReconcileResult | WorkflowCleanupResult;

/** An `AggregatedOperatorError` as logs and JSON write it: messages only (a Secret's values in them blanked), no objects. */
export interface WorkflowErrorSummary {
  readonly name: string;
  readonly message: string;
  /** Each failed dependent's error: its class name and message. */
  readonly byDependent: Readonly<Record<string, { readonly type: string; readonly message: string }>>;
}

/**
 * Several dependents failed (or one): every error, by dependent name. An `AggregateError`, so
 * `errors` lists them too; `result` is the whole workflow result.
 */
export class AggregatedOperatorError extends AggregateError {
  override readonly name = 'AggregatedOperatorError';
  /** The whole workflow result: it holds the dependents' objects, so it is never logged (not enumerable, left out of toJSON). */
  declare readonly result: WorkflowResult | undefined;

  constructor(
    readonly byDependent: ReadonlyMap<string, unknown>,
    result?: WorkflowResult,
  ) {
    const kind = result?.kind ?? 'workflow';
    const secrets = secretValuesWithin(result?.dependents);
    const details = [...byDependent].map(([name, error]) => `'${name}': ${messageOf(error, secrets)}`);
    const count = `${byDependent.size} dependent${byDependent.size === 1 ? '' : 's'}`;
    super([...byDependent.values()], `workflow ${kind} failed for ${count}: ${details.join('; ')}`);
    Object.defineProperty(this, 'result', { value: result, enumerable: false });
  }

  /** What a log line or a serializer writes: the message and each dependent's error by its type and message, no objects. */
  toJSON(): WorkflowErrorSummary {
    const secrets = secretValuesWithin(this.result?.dependents);
    const byDependent = [...this.byDependent].map(([name, error]) => [
      name,
      { type: error instanceof Error ? error.name : typeof error, message: messageOf(error, secrets) },
    ]);
    return { name: this.name, message: this.message, byDependent: Object.fromEntries(byDependent) as WorkflowErrorSummary['byDependent'] };
  }
}

/** An error's message with the values of the workflow's Secrets blanked (a dependent's error may quote them). */
function messageOf(error: unknown, secrets: readonly string[] = []): string {
  return redactText(error instanceof Error ? error.message : describeValue(error), secrets);
}

function namesWhere(dependents: ReadonlyMap<string, DependentResult>, test: (r: DependentResult) => boolean): string[] {
  return [...dependents.values()].filter(test).map((r) => r.name);
}

function baseResult(dependents: ReadonlyMap<string, DependentResult>) {
  const errors = new Map<string, unknown>();
  for (const r of dependents.values()) if (r.outcome === 'errored') errors.set(r.name, r.error);
  const dependent = (name: string): DependentResult => {
    const r = dependents.get(name);
    if (!r) throw new Error(`workflow result: no dependent named '${name}'`);
    return r;
  };
  return {
    dependents,
    deleteCalled: namesWhere(dependents, (r) => r.deleteCalled),
    deletePostconditionNotMet: namesWhere(dependents, (r) => r.outcome === 'deletePostconditionNotMet'),
    dependent,
    conditionResult: (name: string, kind: ConditionKind) => dependent(name).conditions[kind],
    erroredDependents: () => errors,
    hasErrors: () => errors.size > 0,
  };
}

export function reconcileResult(dependents: ReadonlyMap<string, DependentResult>): WorkflowReconcileResult {
  const base = baseResult(dependents);
  const result: WorkflowReconcileResult = {
    ...base,
    kind: 'reconcile',
    reconciled: namesWhere(dependents, (r) => r.outcome === 'reconciled'),
    notReady: namesWhere(dependents, (r) => r.outcome === 'reconciled' && !r.ready),
    allReady: () =>
      [...dependents.values()].every((r) => r.ready || r.outcome === 'inactive' || (r.markedForDelete && r.outcome === 'deleted')),
    readyCondition: (primary, now) => statusCondition(primary, readiness(result), now),
    throwIfErrors: () => {
      if (base.hasErrors()) throw new AggregatedOperatorError(base.erroredDependents(), result);
    },
  };
  return result;
}

function readiness(result: WorkflowReconcileResult): { type: 'Ready'; status: boolean; reason: string; message: string } {
  if (result.hasErrors()) {
    const secrets = secretValuesWithin(result.dependents);
    const details = [...result.erroredDependents()].map(([name, error]) => `'${name}': ${messageOf(error, secrets)}`);
    return { type: 'Ready', status: false, reason: 'DependentsFailed', message: details.join('; ') };
  }
  if (result.allReady()) return { type: 'Ready', status: true, reason: 'DependentsReady', message: 'every dependent is ready' };
  const waiting = namesWhere(
    result.dependents,
    (r) => r.outcome === 'notVisited' || (r.outcome === 'reconciled' && !r.ready) || r.outcome === 'deletePostconditionNotMet',
  );
  return { type: 'Ready', status: false, reason: 'DependentsNotReady', message: `not ready yet: ${waiting.join(', ')}` };
}

export function cleanupResult(dependents: ReadonlyMap<string, DependentResult>): WorkflowCleanupResult {
  const base = baseResult(dependents);
  const result: WorkflowCleanupResult = {
    ...base,
    kind: 'cleanup',
    allPostconditionsMet: () => base.deletePostconditionNotMet.length === 0,
    allDeleted: () => [...dependents.values()].every((r) => r.outcome === 'deleted' || r.outcome === 'inactive'),
    throwIfErrors: () => {
      if (base.hasErrors()) throw new AggregatedOperatorError(base.erroredDependents(), result);
    },
  };
  return result;
}
