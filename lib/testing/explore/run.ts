/**
 * One run: a fresh server, the operator behind the perturbing proxy, the workload step by step
 * with a wait for quiescence after each, the perturbations at their triggers, and the oracles.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ReconcileOutcome } from '../../core/index.js';
import type { Registry } from 'prom-client';
import { GenericRetry } from '../../processing/index.js';
import type { Operator } from '../../operator/index.js';
import { createKubeClient, installCustomResourceDefinition } from '../../kube/index.js';
import { harnessOperator } from '../harness.js';
import { loadApiServer } from '../cluster/apiserver.js';
import { Mirror } from './mirror.js';
import { FaultProxy, type Incarnation, type InjectedAnswer } from './proxy.js';
import { diffSnapshots, readState, snapshot, type Snapshot } from './state.js';
import { STATUS_RUNS, statusLag } from './status-truth.js';
import type { Action, ExploreOptions, Oracle, Perturbation, RunPlan } from './types.js';
import { actorClients, createNamespaces, describeAction, performStep } from './workload.js';
import { runsOwed } from '../idle.js';

/** Controllers without a retry policy of their own retry quickly, so that a failing run settles in milliseconds. */
const QUICK_RETRY = GenericRetry.defaults().withInitialMs(20).withFactor(2).withMaxAttempts(3);

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

class RunFailure extends Error {
  constructor(
    readonly oracle: Oracle,
    message: string,
  ) {
    super(message);
  }
}

interface OperatorHandle {
  readonly operator: Operator;
  readonly incarnation: Incarnation;
  /** The operator's metrics: runs in progress and waiting are read from them. */
  readonly registry: Registry;
}

/**
 * Writes of the operator on a stale view after which it catches up, as a lagging watch cache
 * does: a bounded lag, not one that lasts until the operator settles (an operator that retries a
 * conflict on its stale copy would never settle).
 */
const STALE_VIEW_WRITES = 5;
/** Runs of the operator on a stale view after which it catches up: an operator that waits for its cache (rescheduling, not writing) sees the newer state too. */
const STALE_VIEW_RUNS = 5;

/** A retry this long past its time has fired or been dropped: its timer runs before any poll scheduled after it. */
const OVERDUE_MS = 50;

/** Polls in a row on which every fact held: the turns of the event loop between them let bytes already written be read. */
const SETTLED_POLLS = 3;

/** Runs `trace`; with `reference` (the same actions' clean end state) the end state is compared with it. */
export async function executeRun(options: ExploreOptions, trace: RunPlan, reference?: RunOutcome): Promise<RunOutcome> {
  const started = Date.now();
  const horizonMs = options.horizonMs ?? 1000;
  const settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
  const maxWrites = options.maxWritesPerStep ?? 200;
  const apiServer = await loadApiServer();
  const server = await apiServer.startApiServer({});
  const admin = createKubeClient(server.kubeConfig());
  const log: string[] = [];
  let failure: RunFailure | undefined;
  const fail = (oracle: Oracle, message: string): void => {
    failure ??= new RunFailure(oracle, message);
  };
  const crashes = new Set(trace.perturbations.flatMap((p) => (p.type === 'crash' ? [p.afterWrite] : [])));
  const fails = new Map(trace.perturbations.flatMap((p) => (p.type === 'fail' ? [[p.write, p.status] as const] : [])));
  let mirror: Mirror | undefined;
  let proxy: FaultProxy | undefined;
  let current: OperatorHandle | undefined;
  let restarting: Promise<void> | undefined;
  const outcomes = new Map<string, ReconcileOutcome>();
  /** Per key of `outcomes`: the primary's kind, and how many runs of it ended. */
  const primaries = new Map<string, { kind: string; runs: number }>();
  const dead: Operator[] = [];
  let end: Snapshot = new Map();
  const steps: string[] = [];
  let diverged: number | undefined;

  const checkInvariants = async (kind: 'every-write' | 'settled', when: string): Promise<void> => {
    const invariants = (options.invariants ?? []).filter((i) => (i.when ?? 'every-write') === kind);
    if (invariants.length === 0 || failure) return;
    // A settled cluster is one whose operator has seen every change: not while events are held or dropped.
    if (kind === 'settled' && (proxy?.watchMode !== 'pass' || current?.incarnation.staleRv !== undefined)) return;
    const state = await readState(admin, options.observe);
    for (const invariant of invariants) {
      const verdict = invariant.check(state);
      if (verdict === true || verdict === undefined) continue;
      fail('invariant', `invariant '${invariant.name}' broken ${when}${typeof verdict === 'string' ? `: ${verdict}` : ''}`);
    }
  };

  /**
   * After a step settled: a primary whose status lags its generation is watched while its
   * operator runs it again; `STATUS_RUNS` runs without a write to it and still lagging fail the
   * run, whenever they are due (a reschedule later than the horizon counts). An operator that
   * polls with a current status is never waited for.
   */
  const checkStatusTruth = async (step: string): Promise<void> => {
    // While watch events are held or dropped the operator cannot have seen the new generation.
    if (failure || !proxy || proxy.watchMode !== 'pass' || current?.incarnation.staleRv !== undefined) return;
    const state = await readState(admin, options.observe);
    for (const o of state.objects) {
      const lag = statusLag(o);
      const key = [...primaries.keys()].find(
        (k) => primaries.get(k)?.kind === o.kind && k.endsWith(` ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`),
      );
      if (!lag || !key) continue;
      const runsBefore = primaries.get(key)?.runs ?? 0;
      const rv = o.metadata?.resourceVersion;
      const deadline = Date.now() + settleTimeoutMs;
      for (;;) {
        const now = (await readState(admin, options.observe)).objects.find((x) => x.kind === o.kind && x.metadata?.uid === o.metadata?.uid);
        if (!now || now.metadata?.resourceVersion !== rv || !statusLag(now)) break;
        const runs = (primaries.get(key)?.runs ?? 0) - runsBefore;
        if (runs >= STATUS_RUNS) {
          fail(
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
  };

  const startOperator = async (staleRv?: number): Promise<OperatorHandle> => {
    if (!proxy) throw new Error('no proxy');
    const { incarnation, url } = proxy.incarnation(staleRv, STALE_VIEW_WRITES);
    let staleRuns = 0;
    const kubeConfig = server.kubeConfig();
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the server kubeconfig has no cluster');
    (cluster as { server: string }).server = url;
    const { operator, registry } = harnessOperator(kubeConfig, {
      stopTimeoutMs: 200,
      // The explorer runs the operator as the admin: an RBAC check at start would be requests of no use to it.
      checkRbac: false,
      adjust: (config) => (config.retry === undefined ? { ...config, retry: QUICK_RETRY } : config),
      registered: (controller, config) =>
        void controller.outcome$.subscribe((outcome) => {
          if (!incarnation.alive) return;
          if (incarnation.staleRv !== undefined && ++staleRuns >= STALE_VIEW_RUNS && proxy) {
            log.push(`the stale view catches up after ${staleRuns} runs of the operator on it`);
            void proxy.release(incarnation);
          }
          const key = `${controller.name} ${outcome.id.namespace ?? ''}/${outcome.id.name}`;
          outcomes.set(key, outcome);
          const seen = primaries.get(key);
          primaries.set(key, { kind: config.resource.kind, runs: (seen?.runs ?? 0) + 1 });
        }),
    });
    await options.setup(operator);
    await operator.start();
    return { operator, incarnation, registry };
  };

  const crashAndRestart = (why: string, staleRv?: number): Promise<void> => {
    const old = current;
    if (old && proxy) {
      proxy.kill(old.incarnation);
      dead.push(old.operator);
      void old.operator.stop().catch(() => undefined);
    }
    log.push(why);
    outcomes.clear();
    restarting = startOperator(staleRv).then(
      (handle) => {
        current = handle;
        restarting = undefined;
      },
      (err: unknown) => {
        restarting = undefined;
        fail('settle', `the restarted operator did not start: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    return restarting;
  };

  /**
   * The outcomes whose retry or requested reschedule is due within the horizon and has not
   * happened yet (a later outcome replaces it). One overdue by more than a moment has fired (its
   * run is counted in progress or queued) or was dropped with its resource: either way not due.
   */
  const dueRuns = (): [string, ReconcileOutcome][] => {
    const now = Date.now();
    const due = (at: number): boolean => at >= now - OVERDUE_MS && at <= now + horizonMs;
    return [...outcomes.entries()].filter(
      ([, o]) => (o.retry !== undefined && due(o.retry.at)) || (o.reschedule?.reason === 'requested' && due(o.reschedule.at)),
    );
  };
  const runDue = (): boolean => dueRuns().length > 0;

  /**
   * Settled is a set of facts, not a silence: no request of the operator in flight, every write
   * seen by the mirror, every committed change of an observed resource through the operator's
   * watches (or held or dropped by a perturbation), no run in progress or waiting, and no retry or
   * reschedule due within the horizon; all of it on a few polls in a row.
   */
  const settled = async (): Promise<boolean> => {
    if (!proxy || !mirror || !current) return true;
    if (proxy.inFlight > 0 || !mirror.caughtUp() || proxy.pendingDeliveries(current.incarnation) > 0 || runDue()) return false;
    return (await runsOwed(current.registry)) === 0;
  };

  /** Which facts of `settled` did not hold: what a settle failure names. */
  const unsettledFacts = async (): Promise<string> => {
    if (!proxy || !mirror || !current) return 'no operator';
    const due = dueRuns();
    const facts = [
      proxy.inFlight > 0 ? `${proxy.inFlight} requests in flight` : '',
      mirror.caughtUp() ? '' : 'writes not yet seen by the mirror',
      proxy.pendingDeliveries(current.incarnation) > 0 ? `${proxy.pendingDeliveries(current.incarnation)} watch events not delivered` : '',
      due.length > 0 ? `due within the horizon: ${due.map(([key, o]) => `${key} (${o.retry ? 'retry' : 'reschedule'})`).join(', ')}` : '',
      `${await runsOwed(current.registry)} runs in progress or queued`,
    ];
    return facts.filter(Boolean).join(', ');
  };

  const quiesce = async (step: string): Promise<void> => {
    if (!proxy) return;
    const deadline = Date.now() + settleTimeoutMs;
    const writesBefore = proxy.writes;
    for (let held = 0; ;) {
      if (failure) return;
      if (restarting) await restarting;
      held = (await settled()) ? held + 1 : 0;
      if (held >= SETTLED_POLLS) return;
      if (proxy.writes - writesBefore > maxWrites)
        throw new RunFailure(
          'settle',
          `the operator does not settle ${step}: more than ${maxWrites} writes (last: ${log.slice(-3).join('; ')})`,
        );
      if (Date.now() > deadline)
        throw new RunFailure(
          'settle',
          `the operator did not settle within ${settleTimeoutMs} ms ${step} (${proxy.writes - writesBefore} writes; ${await unsettledFacts()}; last: ${log.slice(-3).join('; ')})`,
        );
      await new Promise((resolve) => setTimeout(resolve, held > 0 ? 1 : 5));
    }
  };

  try {
    for (const crd of options.crds ?? []) await installCustomResourceDefinition(admin, crd, { timeoutMs: 5000 });
    await createNamespaces(admin, trace.actions);
    const clients = await actorClients(admin, () => server.kubeConfig(), trace.actions);
    mirror = await Mirror.start(server.kubeConfig(), options.observe);
    proxy = new FaultProxy(
      server.url,
      mirror,
      log,
      {
        beforeWrite: (n, method, path): InjectedAnswer | undefined => {
          let status = fails.get(n);
          if (status === undefined) return undefined;
          // A create or delete gets 409 only for what exists (or a failed precondition): a made-up one would lie.
          if (status === 409 && (method === 'POST' || method === 'DELETE')) status = 500;
          log.push(`fail write #${n} ${method} ${path} with ${status}`);
          return status === 'timeout' ? 'timeout' : { status };
        },
        afterWrite: async (n, method, path) => {
          await checkInvariants('every-write', `after write #${n} ${method} ${path}`);
          if (!crashes.has(n)) return undefined;
          crashes.delete(n);
          void crashAndRestart(`crash after write #${n} ${method} ${path}; restart`);
          return 'crash';
        },
      },
      apiServer,
    );
    await proxy.listen();
    await resetExternal(options);
    current = await startOperator();
    await quiesce('at start');
    const views: { applied: number; settled: number }[] = [];
    const snapshots: Snapshot[] = [];
    for (const [index, action] of trace.actions.entries()) {
      if (failure) break;
      const windows = trace.perturbations.filter(
        (p): p is Extract<Perturbation, { fromStep: number }> => (p.type === 'gap' || p.type === 'coalesce') && p.fromStep === index,
      );
      for (const w of windows) {
        proxy.watchMode = w.type === 'gap' ? 'drop' : 'hold';
        proxy.watchOnly = w.watch;
        log.push(
          `${w.type} watch events of steps ${w.fromStep}..${w.fromStep + w.steps - 1}${w.watch ? ` on the watch ${w.watch} only` : ''}`,
        );
      }
      const { code, rv, deleting, written } = await performStep(clients, action);
      for (const w of written) mirror.expect(w.resource, w.method, w.object);
      if (action.op === 'run') await mirror.expectCurrent(admin);
      steps.push(`${code}${deleting ? ' deleting' : ''}`);
      const expected = reference?.steps[index];
      if (expected !== undefined && expected !== steps[index] && diverged === undefined) {
        diverged = index;
        log.push(
          `step ${index} was answered ${steps[index]}, in the reference run ${expected}: the operator's pace changed what the workload did, so the end states are not compared`,
        );
      }
      log.push(`step ${index}: ${describeAction(action)} → ${code}`);
      if (action.op === 'apply' && action.input && action.input.revertOf === undefined)
        log[log.length - 1] += ` (${action.input.kind} ${action.input.field}=${JSON.stringify(action.input.value)})`;
      const applied = rv ?? server.stats().resourceVersion;
      await quiesce(`after step ${index}`);
      const closing = trace.perturbations.filter(
        (p): p is Extract<Perturbation, { fromStep: number }> =>
          (p.type === 'gap' || p.type === 'coalesce') && p.fromStep + p.steps - 1 === index,
      );
      for (const w of closing) {
        const incarnation = current?.incarnation;
        proxy.watchMode = 'pass';
        proxy.watchOnly = undefined;
        if (incarnation && w.type === 'gap') proxy.expire(incarnation, w.watch);
        if (incarnation && w.type === 'coalesce') await proxy.release(incarnation);
        log.push(
          w.type === 'gap' ? `watches expire: relist (${proxy.eventsDropped} events dropped)` : 'held watch events delivered at once',
        );
        await quiesce(`after the ${w.type} ending at step ${index}`);
      }
      await checkStatusTruth(`after step ${index}`);
      await checkInvariants('settled', `once step ${index} settled`);
      views.push({ applied, settled: server.stats().resourceVersion });
      const state = await readState(admin, options.observe);
      snapshots.push(snapshot(state.objects, options.volatile, mirror.generatedNames()));
      checkInput(options, action, code, state.objects, outcomes, index, snapshots, fail);
      for (const p of trace.perturbations) {
        if (p.type !== 'stale' || p.afterStep !== index) continue;
        const view = views[p.view.step];
        if (!view) continue;
        const rvAt = p.view.at === 'applied' ? view.applied : view.settled;
        await crashAndRestart(
          `crash after step ${index}; restart seeing the cluster as at step ${p.view.step} ${p.view.at} (revision ${rvAt})`,
          rvAt,
        );
        await quiesce('on the stale view');
        if (current && current.incarnation.staleRv !== undefined) {
          log.push('the stale view catches up');
          await proxy.release(current.incarnation);
        }
        await quiesce('after catching up');
      }
    }
    if (!failure) {
      // A longer silence before the end state is read: a late reaction here would be a false difference.
      await quiesce('at the end');
      await checkInvariants('settled', 'at the end');
      const state = await readState(admin, options.observe);
      end = snapshot(state.objects, options.volatile, mirror.generatedNames());
      const stuck = state.objects.filter((o) => o.metadata?.deletionTimestamp);
      if (stuck.length > 0)
        fail(
          'finalizer',
          `deleted but never removed (a finalizer left behind): ${stuck.map((o) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''} [${(o.metadata?.finalizers ?? []).join(', ')}]`).join(', ')}`,
        );
      if (reference && !failure && diverged === undefined) {
        const diff = diffSnapshots(reference.end, end);
        if (diff.length > 0) fail('end-state', `the end state differs from the reference run:\n  ${diff.join('\n  ')}`);
      }
    }
  } catch (err) {
    if (err instanceof RunFailure) fail(err.oracle, err.message);
    else throw err;
  } finally {
    await Promise.all([current?.operator.stop(), ...dead.map((o) => o.stop())].map((p) => p?.catch(() => undefined)));
    mirror?.close();
    await proxy?.close();
    await server.close();
  }
  return {
    failed: failure !== undefined,
    oracle: failure?.oracle,
    message: failure?.message,
    log,
    wallMs: Date.now() - started,
    writes: proxy?.writes ?? 0,
    end,
    eventsDropped: proxy?.eventsDropped ?? 0,
    watches: [...(proxy?.watchKeys ?? [])].sort(),
    steps,
    diverged,
  };
}

async function resetExternal(options: ExploreOptions): Promise<void> {
  try {
    await options.resetExternal?.();
  } catch (err) {
    throw new Error(
      `explore: resetExternal failed, so the run cannot start from a clean external state: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
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
function checkInput(
  options: ExploreOptions,
  action: Action,
  code: number,
  objects: readonly KubernetesObject[],
  outcomes: ReadonlyMap<string, ReconcileOutcome>,
  index: number,
  snapshots: readonly Snapshot[],
  fail: (oracle: Oracle, message: string) => void,
): void {
  if (action.op !== 'apply' || !action.input) return;
  const input = action.input;
  if (input.revertOf !== undefined) {
    const before = snapshots[input.revertOf];
    const now = snapshots[index];
    if (before && now) {
      const diff = diffSnapshots(before, now);
      if (diff.length > 0)
        fail(
          'recovery',
          `after the bad value was reverted the state is not what it was before it (step ${input.revertOf}):\n  ${diff.join('\n  ')}`,
        );
    }
    return;
  }
  if (code >= 400) return; // rejected by the server: what bad input should get
  const name = action.object.metadata?.name;
  const object = objects.find((o) => o.kind === action.resource.kind && o.metadata?.name === name);
  const failing = [...outcomes.values()].filter((o) => o.id.name === name && o.result === 'failure');
  const reported = object ? (options.reportsError ?? defaultReportsError)(object) : false;
  if (failing.length > 0 && !reported) {
    const error = failing[0]?.error;
    fail(
      'input',
      `${input.field}=${JSON.stringify(input.value)} was accepted, and the operator neither handled it nor reported it in status: its runs fail (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
