/** The generation filter of primary updates as an RxJS operator. */
import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import { updateNeedsRun, type ResourceEvent } from '../core/index.js';

export interface GenerationFilterOptions<T = unknown> {
  /** True when `object` should carry our finalizer but does not; such updates always pass. */
  readonly finalizerNeeded?: (object: T) => boolean;
}

/**
 * Drops primary `modified` events that do not change the generation (EP6: status- and
 * metadata-only updates do not trigger a run). Adds, deletes, triggers and events of other
 * sources pass.
 */
export function generationChanged<T>(options: GenerationFilterOptions<T> = {}): MonoTypeOperatorFunction<ResourceEvent<T>> {
  return filter(
    (event) => !event.primary || event.action !== 'modified' || updateNeedsRun(event.oldObject, event.object, options.finalizerNeeded),
  );
}
