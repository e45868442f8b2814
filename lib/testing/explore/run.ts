/**
 * One run: a fresh server, the operator behind the perturbing proxy, the workload step by step
 * with a wait for quiescence after each, the perturbations at their triggers, and the oracles.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { checkInput, checkInvariants, checkStatusTruth, judgeEnd } from './oracles.js';
import { PERTURBATIONS, type PerturbationKind, type PlannedPerturbation } from './perturbations/index.js';
import type { ProxyHooks } from '../fault-proxy.js';
import { Run, type PlayedPlan } from './run-state.js';
import { RunFailure } from './verdict.js';
import { quiesce } from './settle.js';
import { readState, snapshot, type Snapshot } from './state.js';
import type { Action, ExploreOptions, Oracle } from './types.js';
import { describeAction, performStep } from './workload.js';

export interface RunOutcome {
  readonly failed: boolean;
  readonly oracle?: Oracle;
  readonly message?: string;
  readonly log: string[];
  readonly wallMs: number;
  readonly writes: number;
  readonly end: Snapshot;
  readonly eventsDropped: number;
  /** Per step, how the server answered the action (`200`, `404`, `200 deleting`): the reference's must match. */
  readonly steps: readonly string[];
  /** The keys of the watches the operator opened (collection and selectors): per-watch perturbations pick from them. */
  readonly watches: readonly string[];
  /** The step whose answer differed from the reference's: the workload meant something else, the end states are not compared. */
  readonly diverged: number | undefined;
}

/**
 * Runs `plan`; with `reference` (the same actions' clean end state) the end state is compared with
 * it. `kinds` are the perturbation kinds its perturbations are of.
 */
export async function executeRun(
  options: ExploreOptions,
  plan: PlayedPlan,
  reference?: RunOutcome,
  kinds: readonly PerturbationKind<PlannedPerturbation>[] = PERTURBATIONS,
): Promise<RunOutcome> {
  const started = Date.now();
  const run = await Run.open(options, plan, reference, kinds, proxyHooks);
  try {
    await run.operator.start();
    await quiesce(run, 'at start');
    await playPlan(run);
    if (!run.verdict.failed) {
      // A longer silence before the end state is read: a late reaction here would be a false difference.
      await quiesce(run, 'at the end');
      await judgeEnd(run);
    }
  } catch (err) {
    if (!(err instanceof RunFailure)) throw err;
    run.verdict.fail(err.oracle, err.message);
  } finally {
    await run.close();
  }
  return outcomeOf(run, started);
}

/** Each step: the perturbations that start with it, the action, quiescence, those that end with it, the oracles, those that follow it. */
async function playPlan(run: Run): Promise<void> {
  for (const [index, action] of run.plan.actions.entries()) {
    if (run.verdict.failed) return;
    run.perturbations.onStepStart(index);
    const { code, applied } = await performAction(run, action, index);
    await quiesce(run, `after step ${index}`);
    await run.perturbations.onStepEnd(index);
    await checkStatusTruth(run, `after step ${index}`);
    await checkInvariants(run, 'settled', `once step ${index} settled`);
    const objects = await recordStep(run, applied);
    checkInput(run, action, code, objects, index);
    await run.perturbations.afterStep(index);
  }
}

/** Makes step `index`, records its answer (and whether it diverged from the reference's); the revision it was applied at. */
async function performAction(run: Run, action: Action, index: number): Promise<{ code: number; applied: number }> {
  const { log, mirror, steps } = run;
  const { code, rv, deleting, written } = await performStep(run.clients, action);
  for (const w of written) mirror.expect(w.resource, w.method, w.object);
  if (action.op === 'run') await mirror.expectCurrent(run.admin);
  steps.push(`${code}${deleting ? ' deleting' : ''}`);
  const expected = run.reference?.steps[index];
  if (expected !== undefined && expected !== steps[index] && run.diverged === undefined) {
    run.diverged = index;
    log.push(
      `step ${index} was answered ${steps[index]}, in the reference run ${expected}: the operator's pace changed what the workload did, so the end states are not compared`,
    );
  }
  log.push(`step ${index}: ${describeAction(action)} → ${code}`);
  if (action.op === 'apply' && action.input && action.input.revertOf === undefined)
    log[log.length - 1] += ` (${action.input.kind} ${action.input.field}=${JSON.stringify(action.input.value)})`;
  return { code, applied: rv ?? run.server.stats().resourceVersion };
}

/** The settled step's view (for a later stale view of it) and its snapshot; the objects it saw. */
async function recordStep(run: Run, applied: number): Promise<readonly KubernetesObject[]> {
  run.views.push({ applied, settled: run.server.stats().resourceVersion });
  const state = await readState(run.admin, run.options.observe);
  run.snapshots.push(snapshot(state.objects, run.options.volatile, run.mirror.generatedNames()));
  return state.objects;
}

function outcomeOf(run: Run, started: number): RunOutcome {
  const { failure } = run.verdict;
  return {
    failed: failure !== undefined,
    oracle: failure?.oracle,
    message: failure?.message,
    log: run.log,
    wallMs: Date.now() - started,
    writes: run.proxy.writes,
    end: run.end,
    eventsDropped: run.proxy.eventsDropped,
    watches: [...run.proxy.watchKeys].sort(),
    steps: run.steps,
    diverged: run.diverged,
  };
}

/** At each write of the operator: the failed answer a perturbation injects; once committed, the invariants, then a crash there. */
function proxyHooks(run: Run): ProxyHooks {
  return {
    beforeWrite: (n, method, path) => run.perturbations.beforeWrite({ n, method, path }),
    afterWrite: async (n, method, path) => {
      await checkInvariants(run, 'every-write', `after write #${n} ${method} ${path}`);
      return run.perturbations.onWrite({ n, method, path });
    },
  };
}
