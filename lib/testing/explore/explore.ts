/**
 * The explorer: a clean reference run per workload, then runs under perturbations chosen from the
 * seed, the oracles of `executeRun`, shrinking of a failure, and `replay`.
 */
import { ConfigurationError } from '../../core/index.js';
import { kindOf, PERTURBATIONS, type CoverageTally, type ReferenceFacts } from './perturbations/index.js';
import { seededRandom } from './random.js';
import { executeRun, type RunOutcome } from './run.js';
import type {
  Action,
  Coverage,
  ExploreOptions,
  ExploreResult,
  Failure,
  Perturbation,
  PerturbationType,
  RunVerdict,
  RunPlan,
} from './types.js';

/** Runs the operator under perturbations until a run fails or the budget is spent; the failure is shrunk. */
export async function explore(options: ExploreOptions): Promise<ExploreResult> {
  checkOptions(options);
  const started = Date.now();
  const first = options.seed ?? 1;
  const maxRuns = options.budget?.runs ?? 120;
  const timeMs = options.budget?.timeMs ?? 600_000;
  const session = new Session(options);
  const progress = progressWriter(options.progress);
  let seedsTried = 0;
  for (let k = 0; k < maxRuns; k++) {
    if (Date.now() - started >= timeMs) {
      progress(
        `explore: the time cap of ${timeMs} ms cut the exploration short after ${k} of ${maxRuns} seeds | ${describeCoverage(session.coverage())}`,
        true,
      );
      return {
        failure: undefined,
        coverage: session.coverage(),
        wallMs: Date.now() - started,
        seedsTried: k,
        cutShort: { byTimeMs: timeMs, seedsTried: k, seedsBudgeted: maxRuns },
      };
    }
    seedsTried = k + 1;
    const seed = first + k;
    const { plan, outcome } = await session.runSeed(seed);
    progress(
      `explore: run ${k + 1}/${maxRuns} seed ${seed} ${describePerturbations(plan.perturbations)} ${outcome.failed ? `FAILED (${outcome.oracle})` : 'ok'} ${(outcome.wallMs / 1000).toFixed(1)} s | ${describeCoverage(session.coverage())}`,
    );
    if (outcome.failed && !(await session.confirms(plan, outcome))) {
      progress(`explore: seed ${seed} failed once but not again: not reported (a timing this explorer does not control)`);
      continue;
    }
    if (outcome.failed) {
      const foundAfterMs = Date.now() - started;
      const foundAfterRuns = k + 1;
      const shrunk = await session.shrink(plan, outcome, options.budget?.shrinkRuns ?? 40, progress);
      progress(
        `explore: seed ${seed} fails (${outcome.oracle}); shrunk to ${shrunk.plan.actions.length} steps and ${shrunk.plan.perturbations.length} perturbations in ${shrunk.runs} runs`,
        true,
      );
      const failure: Failure = {
        seed,
        oracle: shrunk.outcome.oracle ?? outcome.oracle ?? 'end-state',
        message: shrunk.outcome.message ?? outcome.message ?? '',
        plan: shrunk.plan,
        trace: shrunk.plan,
        log: shrunk.outcome.log,
        found: verdictOf(plan, outcome),
        foundAfterRuns,
        foundAfterMs,
        shrinkRuns: shrunk.runs,
      };
      return { failure, coverage: session.coverage(), wallMs: Date.now() - started, seedsTried };
    }
  }
  progress(`explore: no failure in ${session.runs} runs | ${describeCoverage(session.coverage())}`, true);
  return { failure: undefined, coverage: session.coverage(), wallMs: Date.now() - started, seedsTried };
}

/**
 * Re-runs a seed as `explore` ran it, or a plan (a failure's shrunk one) as it stands: the same
 * actions and perturbations at the same points of the operator's requests, against a fresh server.
 */
export async function rerun(options: ExploreOptions, what: number | RunPlan): Promise<RunVerdict> {
  checkOptions(options);
  const session = new Session(options);
  const { plan, outcome } = typeof what === 'number' ? await session.runSeed(what) : { plan: what, outcome: await session.runPlan(what) };
  return verdictOf(plan, outcome);
}

/** @deprecated Renamed `rerun` (`replayTrace` replays a recorded trace); this alias goes in the next release. */
export const replay: (options: ExploreOptions, what: number | RunPlan) => Promise<RunVerdict> = rerun;

function verdictOf(plan: RunPlan, outcome: RunOutcome): RunVerdict {
  return {
    failed: outcome.failed,
    oracle: outcome.oracle,
    message: outcome.message,
    log: outcome.log,
    plan,
    trace: plan,
    wallMs: outcome.wallMs,
  };
}

/** A failure as text: what broke, the seed, the shrunk plan and its log. */
export function formatFailure(failure: Failure): string {
  return [
    `${failure.oracle}: ${failure.message}`,
    `seed ${failure.seed} (rerun(options, ${failure.seed})); found after ${failure.foundAfterRuns} runs, ${(failure.foundAfterMs / 1000).toFixed(1)} s`,
    `minimal plan (${failure.plan.actions.length} steps, perturbations: ${describePerturbations(failure.plan.perturbations)}):`,
    ...failure.log.map((line) => `  ${line}`),
  ].join('\n');
}

class Session {
  private readonly references = new Map<string, RunOutcome>();
  runs = 0;
  referenceRuns = 0;
  private readonly tally: CoverageTally = { crashPoints: new Set(), staleViews: 0, gaps: 0, coalesced: 0, failedRequests: 0 };
  private dropped = 0;
  /** The generated cases tried, each once however many seeds picked it. */
  private readonly inputCases = new Set<string>();
  private candidates = 0;
  private diverged = 0;
  private unconfirmed = 0;

  constructor(private readonly options: ExploreOptions) {}

  coverage(): Coverage {
    return {
      runs: this.runs,
      referenceRuns: this.referenceRuns,
      crashPoints: [...this.tally.crashPoints].sort((a, b) => a - b),
      staleViews: this.tally.staleViews,
      gaps: this.tally.gaps,
      coalesced: this.tally.coalesced,
      eventsDropped: this.dropped,
      failedRequests: this.tally.failedRequests,
      inputCases: this.inputCases.size,
      candidates: this.candidates,
      diverged: this.diverged,
      unconfirmed: this.unconfirmed,
    };
  }

  /**
   * Whether `plan` fails the same oracle again: a finding is reported only when it reproduces
   * (as Sieve re-runs a test plan), since the operator runs in real time.
   */
  async confirms(plan: RunPlan, outcome: RunOutcome): Promise<boolean> {
    const again = plan.perturbations.length === 0 ? await executeRun(this.options, plan) : await this.runPlan(plan);
    if (again.failed && again.oracle === outcome.oracle) return true;
    this.unconfirmed++;
    return false;
  }

  async reference(actions: readonly Action[]): Promise<RunOutcome> {
    const key = JSON.stringify(actions);
    let found = this.references.get(key);
    if (!found) {
      found = await executeRun(this.options, { seed: 0, actions, perturbations: [] });
      this.referenceRuns++;
      this.references.set(key, found);
    }
    return found;
  }

  /** The plan seed `seed` stands for, and its run. */
  async runSeed(seed: number): Promise<{ plan: RunPlan; outcome: RunOutcome }> {
    const workload = this.options.workload;
    const actions = 'generate' in workload ? workload.generate(seededRandom(seed), seed) : workload;
    const reference = await this.reference(actions);
    if (reference.failed || actions.some((a) => a.op === 'apply' && a.input)) {
      // Generated input is itself the perturbation; a failing clean run needs none.
      for (const a of actions)
        if (a.op === 'apply' && a.input && a.input.revertOf === undefined)
          this.inputCases.add(JSON.stringify([a.input.field, a.input.value]));
      return { plan: { seed, actions, perturbations: [] }, outcome: reference };
    }
    const candidates = enumerate(reference, actions.length, this.options.perturbations);
    this.candidates = Math.max(this.candidates, candidates.length);
    if (candidates.length === 0)
      throw new ConfigurationError('perturbations', 'leaves nothing to try for this workload (no writes, no steps)');
    const random = seededRandom(seed);
    const perturbations = [candidates[seed % candidates.length]];
    if (random.next() < 0.2) {
      const extra = random.pick(candidates);
      if (!perturbations.includes(extra)) perturbations.push(extra);
    }
    const plan: RunPlan = { seed, actions, perturbations };
    return { plan, outcome: await this.runPlan(plan) };
  }

  async runPlan(plan: RunPlan): Promise<RunOutcome> {
    const reference = await this.reference(plan.actions);
    if (plan.perturbations.length === 0) return reference;
    const outcome = await executeRun(this.options, plan, reference);
    this.runs++;
    for (const p of plan.perturbations) kindOf(PERTURBATIONS, p).count(p, this.tally);
    this.dropped += outcome.eventsDropped;
    if (outcome.diverged !== undefined) this.diverged++;
    return outcome;
  }

  /** Delta debugging: drop perturbations, then chunks of steps, keeping each removal that still fails the same oracle. */
  async shrink(
    plan: RunPlan,
    outcome: RunOutcome,
    maxRuns: number,
    progress: (line: string) => void,
  ): Promise<{ plan: RunPlan; outcome: RunOutcome; runs: number }> {
    let best = plan;
    let bestOutcome = outcome;
    let runs = 0;
    const stillFails = async (candidate: RunPlan): Promise<boolean> => {
      if (runs >= maxRuns) return false;
      const before = this.runs + this.referenceRuns;
      const result = await this.runPlan(candidate);
      runs += this.runs + this.referenceRuns - before;
      progress(
        `shrink: ${candidate.actions.length} steps, ${describePerturbations(candidate.perturbations)} → ${result.failed ? `fails (${result.oracle})` : 'passes'}`,
      );
      if (result.failed && result.oracle === outcome.oracle) {
        best = candidate;
        bestOutcome = result;
        return true;
      }
      return false;
    };
    for (let i = best.perturbations.length - 1; i >= 0 && best.perturbations.length > 1; i--) {
      await stillFails({ ...best, perturbations: best.perturbations.filter((_, j) => j !== i) });
    }
    for (
      let size = Math.max(1, Math.floor(best.actions.length / 2));
      size >= 1;
      size = size === 1 ? 0 : Math.max(1, Math.floor(size / 2))
    ) {
      for (let start = best.actions.length - size; start >= 0; start--) {
        const removed = new Set(Array.from({ length: size }, (_, k) => start + k));
        const candidate = withoutSteps(best, removed);
        if (candidate && candidate.actions.length > 0) await stillFails(candidate);
        if (runs >= maxRuns) break;
      }
      if (runs >= maxRuns) break;
    }
    // The shrunk plan must fail again on its own, or the found one is kept.
    if (best !== plan && !(await this.confirms(best, bestOutcome))) return { plan, outcome, runs: runs + 1 };
    return { plan: best, outcome: bestOutcome, runs: runs + 1 };
  }
}

/** `plan` without the steps in `removed`, step indices renumbered; undefined when a perturbation or revert points at a removed step. */
function withoutSteps(plan: RunPlan, removed: ReadonlySet<number>): RunPlan | undefined {
  const renumber = (i: number): number | undefined => (removed.has(i) ? undefined : i - [...removed].filter((r) => r < i).length);
  const perturbations: Perturbation[] = [];
  for (const p of plan.perturbations) {
    const kept = kindOf(PERTURBATIONS, p).withoutSteps(p, renumber);
    if (kept === undefined) return undefined;
    perturbations.push(kept);
  }
  const actions: Action[] = [];
  for (const [i, a] of plan.actions.entries()) {
    if (removed.has(i)) continue;
    if (a.op === 'apply' && a.input?.revertOf !== undefined) {
      const revertOf = renumber(a.input.revertOf);
      if (revertOf === undefined) return undefined;
      actions.push({ ...a, input: { ...a.input, revertOf } });
    } else actions.push(a);
  }
  return { seed: plan.seed, actions, perturbations };
}

/** Every perturbation worth a run for this workload, the kinds interleaved so that a small budget tries each. */
function enumerate(reference: ReferenceFacts, steps: number, types: readonly PerturbationType[] | undefined): Perturbation[] {
  const byType = PERTURBATIONS.filter((kind) => !types || types.includes(kind.type)).map((kind) => kind.candidates(reference, steps));
  const merged: Perturbation[] = [];
  for (let i = 0; byType.some((l) => i < l.length); i++) for (const list of byType) if (i < list.length) merged.push(list[i]);
  return merged;
}

function describePerturbations(perturbations: readonly Perturbation[]): string {
  if (perturbations.length === 0) return 'none';
  return perturbations.map((p) => kindOf(PERTURBATIONS, p).describe(p)).join('+');
}

function describeCoverage(c: Coverage): string {
  return `crash points ${c.crashPoints.length}, stale views ${c.staleViews}, gaps ${c.gaps} (${c.eventsDropped} events dropped), coalesced ${c.coalesced}, failed requests ${c.failedRequests}, inputs ${c.inputCases}`;
}

function progressWriter(progress: ExploreOptions['progress']): (line: string, final?: boolean) => void {
  if (!progress) return () => undefined;
  if (typeof progress === 'function') return (line) => progress(line);
  const tty = process.stderr.isTTY;
  return (line, final) => {
    if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns || 120) - 1)}${final ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  };
}

function checkOptions(options: ExploreOptions): void {
  if (typeof options.setup !== 'function')
    throw new ConfigurationError('setup', 'must be the function that registers your controllers on an Operator');
  if (options.resetExternal !== undefined && typeof options.resetExternal !== 'function')
    throw new ConfigurationError('resetExternal', 'must be a function that resets the state outside the cluster');
  if (!Array.isArray(options.observe) || options.observe.length === 0)
    throw new ConfigurationError('observe', 'must list the resource types to compare (your primaries and what the operator makes)');
  const w = options.workload as unknown;
  if (!Array.isArray(w) && !(w && typeof (w as { generate?: unknown }).generate === 'function'))
    throw new ConfigurationError('workload', 'must be a list of actions or { generate(random, seed) }');
  for (const [i, invariant] of (options.invariants ?? []).entries()) {
    if (typeof invariant?.check !== 'function') throw new ConfigurationError(`invariants[${i}]`, 'must have a check(state) function');
    if (invariant.when !== undefined && invariant.when !== 'every-write' && invariant.when !== 'settled')
      throw new ConfigurationError(`invariants[${i}].when`, `must be 'every-write' or 'settled', got ${JSON.stringify(invariant.when)}`);
  }
  for (const [i, path] of (options.volatile ?? []).entries()) {
    const ok =
      typeof path === 'string' ? path.length > 0 : Array.isArray(path) && path.length > 0 && path.every((k) => typeof k === 'string');
    if (!ok) throw new ConfigurationError(`volatile[${i}]`, 'must be a dotted path or a non-empty list of keys');
  }
  const known = PERTURBATIONS.map((kind) => kind.type);
  for (const t of options.perturbations ?? [])
    if (!known.includes(t))
      throw new ConfigurationError('perturbations', `unknown perturbation '${String(t)}' (known: ${known.join(', ')})`);
  for (const key of ['horizonMs', 'settleTimeoutMs', 'maxWritesPerStep'] as const) {
    const v = options[key];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0))
      throw new ConfigurationError(key, `must be a non-negative integer, got ${String(v)}`);
  }
  const budget = options.budget ?? {};
  for (const key of ['runs', 'timeMs', 'shrinkRuns'] as const) {
    const v = budget[key];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0))
      throw new ConfigurationError(`budget.${key}`, `must be a non-negative integer, got ${String(v)}`);
  }
}
