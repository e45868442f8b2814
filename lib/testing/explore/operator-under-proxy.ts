/** The operator under exploration, one incarnation at a time behind the fault proxy: started, crashed, restarted (maybe on a stale view). */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Operator } from '../../operator/index.js';
import type { ReconcileOutcome } from '../../core/index.js';
import { GenericRetry } from '../../processing/index.js';
import { harnessOperator } from '../harness.js';
import { runsOwed } from '../idle.js';
import type { FaultProxy, Incarnation } from '../fault-proxy.js';
import type { Verdict } from './verdict.js';
import type { ExploreOptions } from './types.js';

/** Controllers without a retry policy of their own retry quickly, so that a failing run settles in milliseconds. */
const QUICK_RETRY = GenericRetry.defaults().withInitialMs(20).withFactor(2).withMaxAttempts(3);

/**
 * Writes of the operator on a stale view after which it catches up, as a lagging watch cache
 * does: a bounded lag, not one that lasts until the operator settles (an operator that retries a
 * conflict on its stale copy would never settle).
 */
const STALE_VIEW_WRITES = 5;
/** Runs of the operator on a stale view after which it catches up: an operator that waits for its cache (rescheduling, not writing) sees the newer state too. */
const STALE_VIEW_RUNS = 5;

interface Running {
  readonly operator: Operator;
  readonly incarnation: Incarnation;
  /** The operator's metrics: runs in progress and waiting are read from them. */
  readonly registry: Registry;
}

export class OperatorUnderProxy {
  /** Per controller and resource (`name ns/name`), the outcome of the current incarnation's last run of it. */
  readonly outcomes = new Map<string, ReconcileOutcome>();
  /** Per key of `outcomes`: the primary's kind, and how many runs of it ended over the run. */
  readonly primaries = new Map<string, { kind: string; runs: number }>();
  private current: Running | undefined;
  private restarting: Promise<void> | undefined;
  private readonly dead: Operator[] = [];

  constructor(
    private readonly proxy: FaultProxy,
    private readonly kubeConfig: () => KubeConfig,
    private readonly options: Pick<ExploreOptions, 'setup'>,
    private readonly log: string[],
    private readonly verdict: Verdict,
  ) {}

  /** The incarnation running now (during a restart, the one that died). */
  get incarnation(): Incarnation | undefined {
    return this.current?.incarnation;
  }

  async start(): Promise<void> {
    this.current = await this.launch();
  }

  /** Kills the running incarnation where it stands and starts a fresh one, on the cluster as at revision `staleRv` when given. */
  crashAndRestart(why: string, staleRv?: number): Promise<void> {
    const old = this.current;
    if (old) {
      this.proxy.kill(old.incarnation);
      this.dead.push(old.operator);
      void old.operator.stop().catch(() => undefined);
    }
    this.log.push(why);
    this.outcomes.clear();
    this.restarting = this.launch(staleRv).then(
      (running) => {
        this.current = running;
        this.restarting = undefined;
      },
      (err: unknown) => {
        this.restarting = undefined;
        this.verdict.fail('settle', `the restarted operator did not start: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    return this.restarting;
  }

  /** Resolves once a restart under way has started its operator (or failed to). */
  async restarted(): Promise<void> {
    if (this.restarting) await this.restarting;
  }

  /** Runs in progress and resources waiting for a run in the running incarnation. */
  runsOwed(): Promise<number> {
    return this.current ? runsOwed(this.current.registry) : Promise.resolve(0);
  }

  async stop(): Promise<void> {
    const operators = [...(this.current ? [this.current.operator] : []), ...this.dead];
    await Promise.all(operators.map((o) => o.stop().catch(() => undefined)));
  }

  private async launch(staleRv?: number): Promise<Running> {
    const { incarnation, url } = this.proxy.incarnation(staleRv, STALE_VIEW_WRITES);
    let staleRuns = 0;
    const kubeConfig = this.kubeConfig();
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
          if (incarnation.staleRv !== undefined && ++staleRuns >= STALE_VIEW_RUNS) {
            this.log.push(`the stale view catches up after ${staleRuns} runs of the operator on it`);
            void this.proxy.release(incarnation);
          }
          const key = `${controller.name} ${outcome.id.namespace ?? ''}/${outcome.id.name}`;
          this.outcomes.set(key, outcome);
          const seen = this.primaries.get(key);
          this.primaries.set(key, { kind: config.resource.kind, runs: (seen?.runs ?? 0) + 1 });
        }),
    });
    await this.options.setup(operator);
    await operator.start();
    return { operator, incarnation, registry };
  }
}
