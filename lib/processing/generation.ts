/** The generation filter of primary updates as an RxJS operator. */
import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import { generationGrew, type ResourceEvent } from '../core/index.js';

export interface GenerationFilterOptions<T = unknown> {
  /** True when `object` should carry our finalizer but does not; such updates always pass. */
  readonly finalizerNeeded?: (object: T) => boolean;
}

/**
 * EP6 for one primary update: true if the change needs a run — the generation increased, the
 * old object had no generation, the object was just marked for deletion, or the finalizer is
 * needed and missing. Works on any object with Kubernetes-style `metadata`; when the objects
 * cannot be compared (missing), the update passes.
 */
export function isGenerationChange<T>(
  oldObject: T | undefined,
  newObject: T | undefined,
  options: GenerationFilterOptions<T> = {},
): boolean {
  if (oldObject === undefined || newObject === undefined) return true;
  return options.finalizerNeeded?.(newObject) === true || generationGrew(oldObject, newObject);
}

/**
 * Drops primary `modified` events that do not change the generation (EP6: status- and
 * metadata-only updates do not trigger a run). Adds, deletes, triggers and events of other
 * sources pass.
 */
export function generationChanged<T>(options: GenerationFilterOptions<T> = {}): MonoTypeOperatorFunction<ResourceEvent<T>> {
  return filter((event) => !event.primary || event.action !== 'modified' || isGenerationChange(event.oldObject, event.object, options));
}
