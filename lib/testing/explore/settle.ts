/** When a run has settled (a set of facts, not a silence), and the wait for it that fails an operator that never settles. */
import type { ReconcileOutcome } from '../../core/index.js';
import type { FaultProxy } from '../fault-proxy.js';
import type { Mirror } from './mirror.js';
import type { OperatorUnderProxy } from './operator-under-proxy.js';
import { RunFailure, type Verdict } from './verdict.js';

export interface RunLimits {
  /** A retry or reschedule due within this long keeps a step from settling. */
  readonly horizonMs: number;
  readonly settleTimeoutMs: number;
  /** Writes within one step beyond which the operator counts as looping. */
  readonly maxWrites: number;
}

/** What of a run its settling reads. */
export interface SettlingRun {
  readonly proxy: Pick<FaultProxy, 'writes' | 'inFlight' | 'pendingDeliveries'>;
  readonly mirror: Pick<Mirror, 'caughtUp'>;
  readonly operator: Pick<OperatorUnderProxy, 'incarnation' | 'outcomes' | 'restarted' | 'runsOwed'>;
  readonly limits: RunLimits;
  readonly verdict: Pick<Verdict, 'failed'>;
  readonly log: readonly string[];
}

/** A retry this long past its time has fired or been dropped: its timer runs before any poll scheduled after it. */
const OVERDUE_MS = 50;

/** Polls in a row on which every fact held: the turns of the event loop between them let bytes already written be read. */
const SETTLED_POLLS = 3;

/** Waits until the run has settled `step` (`after step 2`); a step that never settles fails the run. */
export async function quiesce(run: SettlingRun, step: string): Promise<void> {
  const { proxy, log } = run;
  const { settleTimeoutMs, maxWrites } = run.limits;
  const deadline = Date.now() + settleTimeoutMs;
  const writesBefore = proxy.writes;
  for (let held = 0; ;) {
    if (run.verdict.failed) return;
    await run.operator.restarted();
    held = (await settled(run)) ? held + 1 : 0;
    if (held >= SETTLED_POLLS) return;
    if (proxy.writes - writesBefore > maxWrites)
      throw new RunFailure(
        'settle',
        `the operator does not settle ${step}: more than ${maxWrites} writes (last: ${log.slice(-3).join('; ')})`,
      );
    if (Date.now() > deadline)
      throw new RunFailure(
        'settle',
        `the operator did not settle within ${settleTimeoutMs} ms ${step} (${proxy.writes - writesBefore} writes; ${await unsettledFacts(run)}; last: ${log.slice(-3).join('; ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, held > 0 ? 1 : 5));
  }
}

/**
 * The outcomes whose retry or requested reschedule is due within the horizon and has not
 * happened yet (a later outcome replaces it). One overdue by more than a moment has fired (its
 * run is counted in progress or queued) or was dropped with its resource: either way not due.
 */
function dueRuns(run: SettlingRun): [string, ReconcileOutcome][] {
  const now = Date.now();
  const due = (at: number): boolean => at >= now - OVERDUE_MS && at <= now + run.limits.horizonMs;
  return [...run.operator.outcomes.entries()].filter(
    ([, o]) => (o.retry !== undefined && due(o.retry.at)) || (o.reschedule?.reason === 'requested' && due(o.reschedule.at)),
  );
}

/**
 * Settled is a set of facts, not a silence: no request of the operator in flight, every write
 * seen by the mirror, every committed change of an observed resource through the operator's
 * watches (or held or dropped by a perturbation), no run in progress or waiting, and no retry or
 * reschedule due within the horizon; all of it on a few polls in a row.
 */
async function settled(run: SettlingRun): Promise<boolean> {
  const { proxy, mirror } = run;
  const incarnation = run.operator.incarnation;
  if (!incarnation) return true;
  if (proxy.inFlight > 0 || !mirror.caughtUp() || proxy.pendingDeliveries(incarnation) > 0 || dueRuns(run).length > 0) return false;
  return (await run.operator.runsOwed()) === 0;
}

/** Which facts of `settled` did not hold: what a settle failure names. */
async function unsettledFacts(run: SettlingRun): Promise<string> {
  const { proxy, mirror } = run;
  const incarnation = run.operator.incarnation;
  if (!incarnation) return 'no operator';
  const due = dueRuns(run);
  const facts = [
    proxy.inFlight > 0 ? `${proxy.inFlight} requests in flight` : '',
    mirror.caughtUp() ? '' : 'writes not yet seen by the mirror',
    proxy.pendingDeliveries(incarnation) > 0 ? `${proxy.pendingDeliveries(incarnation)} watch events not delivered` : '',
    due.length > 0 ? `due within the horizon: ${due.map(([key, o]) => `${key} (${o.retry ? 'retry' : 'reschedule'})`).join(', ')}` : '',
    `${await run.operator.runsOwed()} runs in progress or queued`,
  ];
  return facts.filter(Boolean).join(', ');
}
