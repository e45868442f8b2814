/** What a perturbation kind is: how it is planned, shown, shrunk and counted, and the hooks by which it acts on a run. */
import type { FaultProxy, Incarnation, InjectedAnswer } from '../../fault-proxy.js';

/** The fields every planned perturbation has: its kind's name. */
export interface PlannedPerturbation {
  readonly type: string;
}

/** A write of the operator as the proxy sees it: its number over the run (Events not counted), method and path. */
export interface OperatorWrite {
  readonly n: number;
  readonly method: string;
  readonly path: string;
}

/** What the clean run of a workload showed: what candidates are enumerated from. */
export interface ReferenceFacts {
  /** The operator's writes over the run. */
  readonly writes: number;
  /** The keys of the watches the operator opened (collection and selectors). */
  readonly watches: readonly string[];
}

/** The counters of `Coverage` that perturbations add to. */
export interface CoverageTally {
  readonly crashPoints: Set<number>;
  staleViews: number;
  gaps: number;
  coalesced: number;
  failedRequests: number;
}

/** What a run lets a perturbation do. */
export interface RunControl {
  /** The run's log: what a perturbation did goes in, in the words a failure shows. */
  readonly log: string[];
  /** The proxy's watch modes (how the operator's watches deliver), and its release and expiry of an incarnation's watches. */
  readonly proxy: Pick<FaultProxy, 'watchMode' | 'watchOnly' | 'eventsDropped' | 'release' | 'expire'>;
  /** The operator's running incarnation, and its crash and restart (on the cluster as at revision `staleRv` when given). */
  readonly operator: {
    readonly incarnation: Incarnation | undefined;
    crashAndRestart(why: string, staleRv?: number): Promise<void>;
  };
  /** Per step settled so far, the revisions at which its action was applied and at which it settled. */
  readonly views: readonly { readonly applied: number; readonly settled: number }[];
  /** Waits until the run has settled again; `step` names the moment in a settle failure. */
  settle(step: string): Promise<void>;
}

/** The hooks by which one planned perturbation acts on a run; each is optional. */
export interface PerturbationHooks {
  /** Before the write is forwarded: an answer to give instead, without reaching the server (or `timeout`: forwarded, then 504). */
  beforeWrite?(write: OperatorWrite): InjectedAnswer | undefined;
  /** After the write committed, before the operator hears the answer: `crash` kills the incarnation there. */
  onWrite?(write: OperatorWrite): 'crash' | undefined;
  /** Before the action of step `step`. */
  onStepStart?(step: number): void;
  /** Once step `step` settled, before the oracles judge it. */
  onStepEnd?(step: number): Promise<void>;
  /** Once step `step` was judged and its view recorded: for what replaces the operator's view from here on. */
  afterStep?(step: number): Promise<void>;
}

/**
 * A kind of perturbation, in one module: a new kind is this interface implemented once and added
 * to the list in `index.ts` (and, for `explore`'s public plans, to the `Perturbation` union).
 */
export interface PerturbationKind<P extends PlannedPerturbation> {
  readonly type: P['type'];
  /** Every perturbation of this kind worth a run, for a workload of `steps` steps whose clean run showed `reference`. */
  candidates(reference: ReferenceFacts, steps: number): P[];
  /** A short name for progress lines and failures (`crash@write3`). */
  describe(p: P): string;
  /**
   * `p` in a plan that lost some steps, `renumber` giving a kept step's new index (undefined for
   * a removed one); undefined when `p` loses its point.
   */
  withoutSteps(p: P, renumber: (step: number) => number | undefined): P | undefined;
  /** Adds a run with `p` to the coverage. */
  count(p: P, coverage: CoverageTally): void;
  /** The hooks by which `p` acts on one run. */
  arm(p: P, run: RunControl): PerturbationHooks;
}
