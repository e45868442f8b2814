/** The explorer's public types: workloads and their actions, plans and perturbations, options, verdicts, failures and coverage. */
import type { KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { PolicyRule } from '../../controller/index.js';
import type { Operator } from '../../operator/index.js';
import type { KubeClient, ResourceDescriptor } from '../../kube/index.js';
import type { Random } from './random.js';

/**
 * An object a workload writes: any Kubernetes object, typed or written inline (`{ metadata, spec }`)
 * without a cast.
 */
export type WorkloadObject = KubernetesObject | (KubernetesObject & { readonly [field: string]: unknown });

/**
 * Who makes an action: the admin unless `as` says otherwise. The explorer impersonates `user` and
 * grants it `rules` cluster-wide (a ClusterRole and its binding, made before the operator starts),
 * so that a request RBAC does not allow is answered 403, as on a real cluster.
 */
export interface Actor {
  /** A user name (`alice`, `system:node:node-1`) or a ServiceAccount's (`system:serviceaccount:default:other-controller`). */
  readonly user: string;
  /** What RBAC grants it (default: every verb on every resource). */
  readonly rules?: readonly PolicyRule[];
}

/**
 * The existing objects a `merge` or `delete` acts on: one by `name`, or each one (in name order)
 * that a label selector and a `generateName` prefix select (`select: { labels: { app: 'web' } }`,
 * `select: { namePrefix: 'web-run-' }`): the children an operator named itself. None selected is
 * answered 404.
 */
export type Target =
  | { readonly name: string; readonly namespace?: string; readonly select?: undefined }
  | { readonly select: Selection; readonly namespace?: string; readonly name?: undefined };

export interface Selection {
  readonly labels?: Readonly<Record<string, string>>;
  readonly namePrefix?: string;
}

/**
 * One step of a workload, made straight on the server (never through the operator's perturbed
 * connection), by the admin or by `as`. `apply` is server-side apply by the field manager
 * 'rxkube-explore' (create or update); `create` answers 409 when the object exists, and the
 * workload goes on (the trace says so). `subresource` writes the `status` (what a kubelet or
 * another controller reports) or `scale` (what an autoscaler or `kubectl scale` writes) instead of
 * the object. `run` is code for what no action says: it gets a client (the admin's, or `as`'s) and
 * its step is answered 200, or the status code of the error it throws.
 */
export type Action =
  | {
      readonly op: 'apply';
      readonly resource: ResourceDescriptor;
      readonly object: WorkloadObject;
      readonly subresource?: 'status';
      readonly as?: Actor;
      readonly input?: InputCase;
    }
  | { readonly op: 'create'; readonly resource: ResourceDescriptor; readonly object: WorkloadObject; readonly as?: Actor }
  | ({
      readonly op: 'merge';
      readonly resource: ResourceDescriptor;
      readonly patch: object;
      readonly subresource?: 'status' | 'scale';
      readonly as?: Actor;
    } & Target)
  | ({ readonly op: 'delete'; readonly resource: ResourceDescriptor; readonly as?: Actor } & Target)
  | { readonly op: 'run'; readonly name: string; run(client: KubeClient): unknown; readonly as?: Actor };

/** What a generated spec change tries (set by `schemaWorkload`), and what its revert must restore. */
export interface InputCase {
  /** `spec.replicas`. */
  readonly field: string;
  readonly value: unknown;
  /** valid: a value the schema allows; boundary: the schema's edge (minimum, maxLength, empty); invalid: one it forbids. */
  readonly kind: 'valid' | 'boundary' | 'invalid';
  /** Set on the step that puts back the good spec: the state must then equal the state after step `revertOf`. */
  readonly revertOf?: number;
}

/**
 * A field path left out of the comparison: dotted (`status.lastSeen`, a dot inside a key written
 * `\\.`) or one key per item (`['metadata', 'annotations', 'example.com/seen']`).
 */
export type VolatilePath = string | readonly string[];

/** A fixed list of actions, or one made from the run's seed (e.g. `schemaWorkload`). */
export type Workload = readonly Action[] | { readonly generate: (random: Random, seed: number) => readonly Action[] };

/** The cluster's state as the oracles see it: the observed resources, listed after a write. */
export interface ClusterState {
  list(resource: ResourceDescriptor, namespace?: string): readonly KubernetesObject[];
  get(resource: ResourceDescriptor, name: string, namespace?: string): KubernetesObject | undefined;
}

/**
 * A predicate on the cluster: a string (or false) says what is wrong. `when` says where it must
 * hold: `'every-write'` (the default) at every write the operator commits, for what may never be
 * false even for a moment (never two primaries of one shard, never a member without its claim);
 * `'settled'` after each step has settled and at the end, for what the operator converges to
 * (every member has its Pod), which its own intermediate writes may not yet satisfy.
 */
export interface Invariant {
  readonly name: string;
  readonly when?: 'every-write' | 'settled';
  check(state: ClusterState): boolean | string | undefined;
}

/**
 * A perturbation of one run. Every trigger counts the operator's own requests or the workload's
 * steps, never wall-clock time, so that a run replays the same way.
 * - crash: the operator is killed right after its `afterWrite`-th write reached the server (writes
 *   counted over the run, Events not counted); a fresh operator from `setup` starts at once.
 * - stale: after step `afterStep` settled, the operator is killed and a fresh one starts whose
 *   lists and watches show the cluster as it was at step `view.step` (`applied`: right after the
 *   action, before the operator reacted; `settled`: after it reacted), until it has settled on
 *   that view; then the held watch events arrive. GETs are quorum reads: always fresh.
 * - gap: the operator's watches deliver nothing during steps `fromStep`..`fromStep+steps-1`, then
 *   end with 410 Expired: the informers relist and see only the final state.
 * - coalesce: the operator's watch events of those steps are held and delivered at once at the end
 *   (or sooner, once the operator has made five writes while they were held: a lagging watch catches up).
 *   With `watch` (a collection and its selectors, e.g. `/api/v1/namespaces/default/configmaps?labelSelector=app`)
 *   a gap or coalesce hits that one watch only: one informer misses or merges what the others see
 *   (a member's terminating state seen by its own controller, never by the one that owns the claim).
 * - fail: the operator's `write`-th write is answered with `status` without reaching the server,
 *   or with `timeout` is committed and answered 504 (the client cannot tell it succeeded).
 */
export type Perturbation =
  | { readonly type: 'crash'; readonly afterWrite: number }
  | { readonly type: 'stale'; readonly afterStep: number; readonly view: { readonly step: number; readonly at: 'applied' | 'settled' } }
  | { readonly type: 'gap'; readonly fromStep: number; readonly steps: number; readonly watch?: string }
  | { readonly type: 'coalesce'; readonly fromStep: number; readonly steps: number; readonly watch?: string }
  | { readonly type: 'fail'; readonly write: number; readonly status: 409 | 429 | 500 | 'timeout' };

export type PerturbationType = Perturbation['type'];

/**
 * What one run of the explorer does, its plan: the seed, the workload's steps and the
 * perturbations; `rerun` runs it again as it stands (a failure's shrunk `plan` is one). Not to be
 * confused with a recorded trace of HTTP traffic (`recordTrace`, `replayTrace`).
 */
export interface RunPlan {
  readonly seed: number;
  readonly actions: readonly Action[];
  readonly perturbations: readonly Perturbation[];
}

/** @deprecated Renamed `RunPlan` (a trace is what `recordTrace` records); this alias goes in the next release. */
export type Trace = RunPlan;

export interface ExploreBudget {
  /** Seeds to try (default 120): the budget, the same on a busy machine as on an idle one. */
  readonly runs?: number;
  /** A cap on the wall time for exploring, shrinking excluded (default 10 minutes); `cutShort` in the result says when it struck. */
  readonly timeMs?: number;
  /** Runs spent shrinking a failure at most (default 40). */
  readonly shrinkRuns?: number;
}

export interface ExploreOptions {
  /** Installed on each run's fresh server before the operator starts. */
  readonly crds?: readonly V1CustomResourceDefinition[];
  /** Registers the operator's controllers: the function your `main` calls. Called again for every restart. */
  setup(operator: Operator): unknown;
  /**
   * Puts back what lives outside the cluster (a database, a cloud API's fake, a file) as it was
   * before any run: called before each run's operator starts, never on a restart within a run (a
   * crashed operator's external writes stay, as in production). Without it one run's leftovers
   * leak into the next and a seed does not replay exactly.
   */
  resetExternal?(): unknown;
  readonly workload: Workload;
  /** The resource types the oracles compare and the stale views show (primaries and what the operator makes). */
  readonly observe: readonly ResourceDescriptor[];
  readonly invariants?: readonly Invariant[];
  /** First seed (default 1); run k uses seed + k. */
  readonly seed?: number;
  readonly budget?: ExploreBudget;
  /** Which perturbations to try (default all). */
  readonly perturbations?: readonly PerturbationType[];
  /**
   * A retry or reschedule the operator has due within this long keeps a step from settling
   * (default 1000 ms); one due later does not (a periodic resync is not a reaction).
   */
  readonly horizonMs?: number;
  /** A step that has not settled after this long fails the run (default 10 s). */
  readonly settleTimeoutMs?: number;
  /** Writes within one step beyond which the operator counts as looping (default 200). */
  readonly maxWritesPerStep?: number;
  /**
   * Extra field paths left out of the comparison with the reference: dotted (`status.lastSeen`;
   * a dot inside a key written `\\.`) or one key per item (`['metadata', 'annotations', 'example.com/seen']`).
   */
  readonly volatile?: readonly VolatilePath[];
  /** For generated input: whether the object reports an error in its status (default: a condition False or an `error`/`Failed` field). */
  readonly reportsError?: (object: KubernetesObject) => boolean;
  /** Progress on a terminal: true writes to stderr; a function gets each line. Default off. */
  readonly progress?: boolean | ((line: string) => void);
}

/** Which oracle a run failed. */
export type Oracle = 'end-state' | 'invariant' | 'settle' | 'finalizer' | 'input' | 'recovery' | 'status';

export interface RunVerdict {
  readonly failed: boolean;
  readonly oracle?: Oracle;
  /** What is wrong, with the diff against the reference for `end-state`. */
  readonly message?: string;
  /** What happened, in order: steps, perturbations fired, the operator's writes (method and path). */
  readonly log: readonly string[];
  readonly plan: RunPlan;
  /** @deprecated Renamed `plan`; this alias goes in the next release. */
  readonly trace: RunPlan;
  readonly wallMs: number;
}

export interface Failure {
  /** Runs it again as it was found: `rerun(options, failure.seed)`. */
  readonly seed: number;
  readonly oracle: Oracle;
  readonly message: string;
  /** The found run's actions and perturbations, shrunk to the fewest that still fail: `rerun(options, failure.plan)`. */
  readonly plan: RunPlan;
  /** @deprecated Renamed `plan`; this alias goes in the next release. */
  readonly trace: RunPlan;
  /** The shrunk run's log. */
  readonly log: readonly string[];
  /** The run as it was found, before shrinking: what `rerun(options, failure.seed)` should say again. */
  readonly found: RunVerdict;
  /** Seeds tried and wall time until the failure was found, before shrinking. */
  readonly foundAfterRuns: number;
  readonly foundAfterMs: number;
  readonly shrinkRuns: number;
}

export interface Coverage {
  /** Perturbed runs; `referenceRuns` clean ones (one per distinct workload, generated input cases included). */
  readonly runs: number;
  readonly referenceRuns: number;
  readonly crashPoints: readonly number[];
  readonly staleViews: number;
  readonly gaps: number;
  readonly coalesced: number;
  /** Watch events the gaps dropped. */
  readonly eventsDropped: number;
  readonly failedRequests: number;
  /** Distinct generated cases tried (a field and a value), however many seeds picked each. */
  readonly inputCases: number;
  /** Candidates the explorer enumerated; `runs` of them tried. */
  readonly candidates: number;
  /** Runs whose workload steps were answered otherwise than in the reference (their end states were not compared). */
  readonly diverged: number;
  /** Failures that did not fail again when re-run: not reported. */
  readonly unconfirmed: number;
}

export interface ExploreResult {
  readonly failure: Failure | undefined;
  readonly coverage: Coverage;
  readonly wallMs: number;
  /** Seeds tried (the failing one included). */
  readonly seedsTried: number;
  /** Set when the time cap stopped the exploration before the seeds of the budget were tried. */
  readonly cutShort?: { readonly byTimeMs: number; readonly seedsTried: number; readonly seedsBudgeted: number };
}
