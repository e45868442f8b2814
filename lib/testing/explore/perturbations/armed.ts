/** The planned perturbations of one run, armed: what the run and its proxy call, each kind's hooks in the order of the plan. */
import type { InjectedAnswer } from '../../fault-proxy.js';
import { kindOf } from './index.js';
import type { OperatorWrite, PerturbationHooks, PerturbationKind, PlannedPerturbation, RunControl } from './kind.js';

export class ArmedPerturbations {
  private readonly hooks: readonly PerturbationHooks[];

  constructor(planned: readonly PlannedPerturbation[], kinds: readonly PerturbationKind<PlannedPerturbation>[], run: RunControl) {
    this.hooks = planned.map((p) => kindOf(kinds, p).arm(p, run));
  }

  /** The answer to inject instead of forwarding the write: of two planned for one write, the later in the plan. */
  beforeWrite(write: OperatorWrite): InjectedAnswer | undefined {
    for (const hooks of [...this.hooks].reverse()) {
      const answer = hooks.beforeWrite?.(write);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** After a write committed: `crash` when a perturbation kills the operator there (the first that does). */
  onWrite(write: OperatorWrite): 'crash' | undefined {
    for (const hooks of this.hooks) if (hooks.onWrite?.(write) === 'crash') return 'crash';
    return undefined;
  }

  onStepStart(step: number): void {
    for (const hooks of this.hooks) hooks.onStepStart?.(step);
  }

  async onStepEnd(step: number): Promise<void> {
    for (const hooks of this.hooks) await hooks.onStepEnd?.(step);
  }

  async afterStep(step: number): Promise<void> {
    for (const hooks of this.hooks) await hooks.afterStep?.(step);
  }
}
