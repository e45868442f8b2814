/** Whether an operator is working, read from its own metrics: what replay and the explorer settle on. */
import type { Registry } from 'prom-client';

/** Runs in progress and resources waiting for a run, over all the controllers of the operator whose metrics `registry` holds. */
export async function runsOwed(registry: Registry): Promise<number> {
  let owed = 0;
  for (const name of ['rxkube_reconciliations_active', 'rxkube_reconciliations_queued']) {
    const metric = registry.getSingleMetric(name);
    if (metric) for (const v of (await metric.get()).values) owed += v.value;
  }
  return owed;
}
