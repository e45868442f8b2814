/** The oracles of a run: invariants, what a status claims, generated input and its revert, finalizers, and the end state. */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Run } from './run-state.js';
import { diffSnapshots, readState, snapshot } from './state.js';
import { STATUS_RUNS, statusLag } from './status-truth.js';
import type { Action } from './types.js';

/** Checks the invariants of `kind` on the cluster now (`when` says where, for the message). */
export async function checkInvariants(run: Run, kind: 'every-write' | 'settled', when: string): Promise<void> {
  const invariants = (run.options.invariants ?? []).filter((i) => (i.when ?? 'every-write') === kind);
  if (invariants.length === 0 || run.verdict.failed) return;
  // A settled cluster is one whose operator has seen every change: not while events are held or dropped.
  if (kind === 'settled' && run.viewPerturbed()) return;
  const state = await readState(run.admin, run.options.observe);
  for (const invariant of invariants) {
    const verdict = invariant.check(state);
    if (verdict === true || verdict === undefined) continue;
    run.verdict.fail('invariant', `invariant '${invariant.name}' broken ${when}${typeof verdict === 'string' ? `: ${verdict}` : ''}`);
  }
}

/**
 * After a step settled: a primary whose status lags its generation is watched while its
 * operator runs it again; `STATUS_RUNS` runs without a write to it and still lagging fail the
 * run, whenever they are due (a reschedule later than the horizon counts). An operator that
 * polls with a current status is never waited for.
 */
export async function checkStatusTruth(run: Run, step: string): Promise<void> {
  // While watch events are held or dropped the operator cannot have seen the new generation.
  if (run.verdict.failed || run.viewPerturbed()) return;
  const { admin, options } = run;
  const { outcomes, primaries } = run.operator;
  const state = await readState(admin, options.observe);
  for (const o of state.objects) {
    const lag = statusLag(o);
    const key = [...primaries.keys()].find(
      (k) => primaries.get(k)?.kind === o.kind && k.endsWith(` ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`),
    );
    if (!lag || !key) continue;
    const runsBefore = primaries.get(key)?.runs ?? 0;
    const rv = o.metadata?.resourceVersion;
    const deadline = Date.now() + run.limits.settleTimeoutMs;
    for (;;) {
      const now = (await readState(admin, options.observe)).objects.find((x) => x.kind === o.kind && x.metadata?.uid === o.metadata?.uid);
      if (!now || now.metadata?.resourceVersion !== rv || !statusLag(now)) break;
      const runs = (primaries.get(key)?.runs ?? 0) - runsBefore;
      if (runs >= STATUS_RUNS) {
        run.verdict.fail(
          'status',
          `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? ''} ${step}: ${lag}, and its operator ran it ${runs} times since without writing it`,
        );
        return;
      }
      const next = outcomes.get(key);
      if (Date.now() > deadline || (next && !next.retry && !next.reschedule)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const defaultReportsError = (o: KubernetesObject): boolean => {
  const status = (o as { status?: Record<string, unknown> }).status ?? {};
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as { status?: string }[]) : [];
  return (
    conditions.some((c) => c.status === 'False') || Boolean(status['error']) || status['phase'] === 'Failed' || status['phase'] === 'Error'
  );
};

/** Acto's oracles for a generated spec change: rejected, or handled (or reported); its revert restores the state. */
export function checkInput(run: Run, action: Action, code: number, objects: readonly KubernetesObject[], index: number): void {
  if (action.op !== 'apply' || !action.input) return;
  const input = action.input;
  if (input.revertOf !== undefined) {
    const before = run.snapshots[input.revertOf];
    const now = run.snapshots[index];
    if (before && now) {
      const diff = diffSnapshots(before, now);
      if (diff.length > 0)
        run.verdict.fail(
          'recovery',
          `after the bad value was reverted the state is not what it was before it (step ${input.revertOf}):\n  ${diff.join('\n  ')}`,
        );
    }
    return;
  }
  if (code >= 400) return; // rejected by the server: what bad input should get
  const name = action.object.metadata?.name;
  const object = objects.find((o) => o.kind === action.resource.kind && o.metadata?.name === name);
  const failing = [...run.operator.outcomes.values()].filter((o) => o.id.name === name && o.result === 'failure');
  const reported = object ? (run.options.reportsError ?? defaultReportsError)(object) : false;
  if (failing.length > 0 && !reported) {
    const error = failing[0]?.error;
    run.verdict.fail(
      'input',
      `${input.field}=${JSON.stringify(input.value)} was accepted, and the operator neither handled it nor reported it in status: its runs fail (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** The settled end: invariants, nothing left deleting, and the end state as the reference run's (unless the workload diverged). */
export async function judgeEnd(run: Run): Promise<void> {
  const { admin, options, verdict, reference } = run;
  await checkInvariants(run, 'settled', 'at the end');
  const state = await readState(admin, options.observe);
  run.end = snapshot(state.objects, options.volatile, run.mirror.generatedNames());
  const stuck = state.objects.filter((o) => o.metadata?.deletionTimestamp);
  if (stuck.length > 0)
    verdict.fail(
      'finalizer',
      `deleted but never removed (a finalizer left behind): ${stuck.map((o) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''} [${(o.metadata?.finalizers ?? []).join(', ')}]`).join(', ')}`,
    );
  if (reference && !verdict.failed && run.diverged === undefined) {
    const diff = diffSnapshots(reference.end, run.end);
    if (diff.length > 0) verdict.fail('end-state', `the end state differs from the reference run:\n  ${diff.join('\n  ')}`);
  }
}
