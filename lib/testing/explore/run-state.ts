/** The state of one run in one object: its fresh server, clients, mirror, proxy and operator, what it recorded, and its verdict. */
import { createKubeClient, installCustomResourceDefinition, type KubeClient } from '../../kube/index.js';
import { loadApiServer, type ApiServerModule } from '../cluster/apiserver.js';
import { Mirror } from './mirror.js';
import { OperatorUnderProxy } from './operator-under-proxy.js';
import { FaultProxy, type ProxyHooks, type SelectorGrammar } from '../fault-proxy.js';
import type { Snapshot } from './state.js';
import { ArmedPerturbations } from './perturbations/armed.js';
import type { PerturbationKind, PlannedPerturbation, RunControl } from './perturbations/index.js';
import { quiesce, type RunLimits } from './settle.js';
import type { Action, ExploreOptions } from './types.js';
import { Verdict } from './verdict.js';
import { actorClients, createNamespaces, type StepClients } from './workload.js';

type ApiServer = Awaited<ReturnType<ApiServerModule['startApiServer']>>;

/** The revisions at which a step's action was applied and at which the cluster settled after it: what a stale view shows. */
export interface StepView {
  readonly applied: number;
  readonly settled: number;
}

/** What a run plays: the workload's steps and the perturbations planned on them. */
export interface PlayedPlan {
  readonly seed: number;
  readonly actions: readonly Action[];
  readonly perturbations: readonly PlannedPerturbation[];
}

/** What a run is made of and what it records as it goes; `open` sets it up, `close` takes it down. */
export class Run implements RunControl {
  readonly log: string[] = [];
  readonly verdict = new Verdict();
  /** Per step, how the server answered the action (`200`, `404`, `200 deleting`). */
  readonly steps: string[] = [];
  /** The step whose answer differed from the reference's. */
  diverged: number | undefined;
  readonly views: StepView[] = [];
  /** Per step, the observed state once it settled. */
  readonly snapshots: Snapshot[] = [];
  end: Snapshot = new Map();
  readonly proxy: FaultProxy;
  readonly operator: OperatorUnderProxy;
  readonly perturbations: ArmedPerturbations;

  private constructor(
    readonly options: ExploreOptions,
    readonly plan: PlayedPlan,
    /** The same actions' clean run, when this one is compared with it. */
    readonly reference: { readonly steps: readonly string[]; readonly end: Snapshot } | undefined,
    readonly limits: RunLimits,
    readonly server: ApiServer,
    readonly admin: KubeClient,
    readonly clients: StepClients,
    readonly mirror: Mirror,
    kinds: readonly PerturbationKind<PlannedPerturbation>[],
    hooks: (run: Run) => ProxyHooks,
    selectors: SelectorGrammar,
  ) {
    this.proxy = new FaultProxy(server.url, { history: mirror, log: this.log, hooks: hooks(this), selectors });
    this.operator = new OperatorUnderProxy(this.proxy, () => server.kubeConfig(), options, this.log, this.verdict);
    this.perturbations = new ArmedPerturbations(plan.perturbations, kinds, this);
  }

  /**
   * A fresh server with the CRDs, the workload's namespaces and actors, the mirror, the proxy
   * listening and the external state reset: everything but the operator. What was opened is
   * closed again when a part fails.
   */
  static async open(
    options: ExploreOptions,
    plan: PlayedPlan,
    reference: Run['reference'],
    kinds: readonly PerturbationKind<PlannedPerturbation>[],
    hooks: (run: Run) => ProxyHooks,
  ): Promise<Run> {
    const limits: RunLimits = {
      horizonMs: options.horizonMs ?? 1000,
      settleTimeoutMs: options.settleTimeoutMs ?? 10_000,
      maxWrites: options.maxWritesPerStep ?? 200,
    };
    const apiServer = await loadApiServer();
    const server = await apiServer.startApiServer({});
    const admin = createKubeClient(server.kubeConfig());
    let mirror: Mirror | undefined;
    let run: Run | undefined;
    try {
      for (const crd of options.crds ?? []) await installCustomResourceDefinition(admin, crd, { timeoutMs: 5000 });
      await createNamespaces(admin, plan.actions);
      const clients = await actorClients(admin, () => server.kubeConfig(), plan.actions);
      mirror = await Mirror.start(server.kubeConfig(), options.observe);
      run = new Run(options, plan, reference, limits, server, admin, clients, mirror, kinds, hooks, apiServer);
      await run.proxy.listen();
      await resetExternal(options);
      return run;
    } catch (err) {
      if (run) await run.close();
      else {
        mirror?.close();
        await server.close();
      }
      throw err;
    }
  }

  settle(step: string): Promise<void> {
    return quiesce(this, step);
  }

  /** Whether the operator's view is held back or missing events: it cannot have seen the newest state. */
  viewPerturbed(): boolean {
    return this.proxy.watchMode !== 'pass' || this.operator.incarnation?.staleRv !== undefined;
  }

  async close(): Promise<void> {
    await this.operator.stop();
    this.mirror.close();
    await this.proxy.close();
    await this.server.close();
  }
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
