/**
 * One run: a fresh server, the operator behind the perturbing proxy, the workload step by step
 * with a wait for quiescence after each, the perturbations at their triggers, and the oracles.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { checkInput, checkInvariants, checkStatusTruth, judgeEnd } from './oracles.js';
import type { InjectedAnswer, ProxyHooks } from './proxy.js';
import { Run } from './run-state.js';
import { RunFailure } from './verdict.js';
import { quiesce } from './settle.js';
import { readState, snapshot, type Snapshot } from './state.js';
import type { Action, ExploreOptions, Oracle, Perturbation, RunPlan } from './types.js';
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

/** Runs `plan`; with `reference` (the same actions' clean end state) the end state is compared with it. */
export async function executeRun(options: ExploreOptions, plan: RunPlan, reference?: RunOutcome): Promise<RunOutcome> {
  const started = Date.now();
  const run = await Run.open(options, plan, reference, proxyHooks);
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

/** Each step: its watch windows open, the action, the wait for quiescence, the windows that end, the oracles, then a stale view. */
async function playPlan(run: Run): Promise<void> {
  for (const [index, action] of run.plan.actions.entries()) {
    if (run.verdict.failed) return;
    openWatchWindows(run, index);
    const { code, applied } = await performAction(run, action, index);
    await quiesce(run, `after step ${index}`);
    await closeWatchWindows(run, index);
    await checkStatusTruth(run, `after step ${index}`);
    await checkInvariants(run, 'settled', `once step ${index} settled`);
    const objects = await recordStep(run, applied);
    checkInput(run, action, code, objects, index);
    await staleViewsAfter(run, index);
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

// ---- perturbations --------------------------------------------------------------------------

/** What the proxy asks at each write of the operator: a failed answer to inject, a crash after it committed. */
function proxyHooks(run: Run): ProxyHooks {
  const { log } = run;
  const crashes = new Set(run.plan.perturbations.flatMap((p) => (p.type === 'crash' ? [p.afterWrite] : [])));
  const fails = new Map(run.plan.perturbations.flatMap((p) => (p.type === 'fail' ? [[p.write, p.status] as const] : [])));
  return {
    beforeWrite: (n, method, path): InjectedAnswer | undefined => {
      let status = fails.get(n);
      if (status === undefined) return undefined;
      // A create or delete gets 409 only for what exists (or a failed precondition): a made-up one would lie.
      if (status === 409 && (method === 'POST' || method === 'DELETE')) status = 500;
      log.push(`fail write #${n} ${method} ${path} with ${status}`);
      return status === 'timeout' ? 'timeout' : { status };
    },
    afterWrite: async (n, method, path) => {
      await checkInvariants(run, 'every-write', `after write #${n} ${method} ${path}`);
      if (!crashes.has(n)) return undefined;
      crashes.delete(n);
      void run.operator.crashAndRestart(`crash after write #${n} ${method} ${path}; restart`);
      return 'crash';
    },
  };
}

type WatchWindow = Extract<Perturbation, { fromStep: number }>;

const isWatchWindow = (p: Perturbation): p is WatchWindow => p.type === 'gap' || p.type === 'coalesce';

/** The gaps and coalesce windows that start at step `index`: the watches drop or hold what comes. */
function openWatchWindows(run: Run, index: number): void {
  for (const w of run.plan.perturbations.filter((p): p is WatchWindow => isWatchWindow(p) && p.fromStep === index)) {
    run.proxy.watchMode = w.type === 'gap' ? 'drop' : 'hold';
    run.proxy.watchOnly = w.watch;
    run.log.push(
      `${w.type} watch events of steps ${w.fromStep}..${w.fromStep + w.steps - 1}${w.watch ? ` on the watch ${w.watch} only` : ''}`,
    );
  }
}

/** The windows whose last step was `index`: a gap's watches expire (the informers relist), a coalesce's held events arrive at once. */
async function closeWatchWindows(run: Run, index: number): Promise<void> {
  const { proxy, log } = run;
  for (const w of run.plan.perturbations.filter((p): p is WatchWindow => isWatchWindow(p) && p.fromStep + p.steps - 1 === index)) {
    const incarnation = run.operator.incarnation;
    proxy.watchMode = 'pass';
    proxy.watchOnly = undefined;
    if (incarnation && w.type === 'gap') proxy.expire(incarnation, w.watch);
    if (incarnation && w.type === 'coalesce') await proxy.release(incarnation);
    log.push(w.type === 'gap' ? `watches expire: relist (${proxy.eventsDropped} events dropped)` : 'held watch events delivered at once');
    await quiesce(run, `after the ${w.type} ending at step ${index}`);
  }
}

/** The stale views planned after step `index`: a restart seeing the cluster as at an earlier step, then catching up. */
async function staleViewsAfter(run: Run, index: number): Promise<void> {
  for (const p of run.plan.perturbations) {
    if (p.type !== 'stale' || p.afterStep !== index) continue;
    const view = run.views[p.view.step];
    if (!view) continue;
    const rvAt = p.view.at === 'applied' ? view.applied : view.settled;
    await run.operator.crashAndRestart(
      `crash after step ${index}; restart seeing the cluster as at step ${p.view.step} ${p.view.at} (revision ${rvAt})`,
      rvAt,
    );
    await quiesce(run, 'on the stale view');
    const incarnation = run.operator.incarnation;
    if (incarnation && incarnation.staleRv !== undefined) {
      run.log.push('the stale view catches up');
      await run.proxy.release(incarnation);
    }
    await quiesce(run, 'after catching up');
  }
}
