/** Only the serialization part of reconcileEach, as an RxJS operator. */
import type { OperatorFunction } from 'rxjs';
import type { ReconcileOutcome, ResourceEvent } from '../core/index.js';
import type { ReconcileOptions, RunFn } from './options.js';
import { reconcileEach } from './reconcile-each.js';

export type SerializeOptions = Pick<
  ReconcileOptions,
  'scheduler' | 'maxConcurrentReconciliations' | 'maxConcurrency' | 'primaries' | 'exists' | 'active$' | 'probe'
>;

/**
 * Only the serialization part of `reconcileEach`: one run per resource at a time, bounded
 * concurrency with FIFO fairness, events during a run coalesced into one follow-up (EP1, EP2,
 * EP4, EP5). No retries and no max-interval timer; a `rescheduleAfter` result is still honoured.
 */
export function serializeByResource<T = unknown>(
  run: RunFn,
  options: SerializeOptions = {},
): OperatorFunction<ResourceEvent<T>, ReconcileOutcome> {
  return reconcileEach<T>(run, { ...options, retry: false, maxReconciliationInterval: 0 });
}
