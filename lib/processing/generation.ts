import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import type { ResourceEvent } from '../core/events.js';
import { isMarkedForDeletion } from '../core/resource.js';

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
export function isGenerationChange<T>(oldObject: T | undefined, newObject: T | undefined, options: GenerationFilterOptions<T> = {}): boolean {
  if (oldObject === undefined || newObject === undefined) return true;
  if (options.finalizerNeeded?.(newObject)) return true;
  const before = metadataOf(oldObject);
  const after = metadataOf(newObject);
  if (isMarkedForDeletion(newObject) && !isMarkedForDeletion(oldObject)) return true;
  const oldGeneration = before?.['generation'];
  const newGeneration = after?.['generation'];
  if (typeof oldGeneration !== 'number' || typeof newGeneration !== 'number') return true;
  return newGeneration > oldGeneration;
}

/**
 * Drops primary `modified` events that do not change the generation (EP6: status- and
 * metadata-only updates do not trigger a run). Adds, deletes, triggers and events of other
 * sources pass.
 */
export function generationChanged<T>(options: GenerationFilterOptions<T> = {}): MonoTypeOperatorFunction<ResourceEvent<T>> {
  return filter(
    (event) => !event.primary || event.action !== 'modified' || isGenerationChange(event.oldObject, event.object, options),
  );
}

function metadataOf(object: unknown): Record<string, unknown> | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const metadata = (object as { metadata?: unknown }).metadata;
  return typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : undefined;
}
