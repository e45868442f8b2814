import type { KubernetesObject } from '@kubernetes/client-node';
import { merge, type Observable } from 'rxjs';
import type { ResourceEvent } from '../core/index.js';
import { generationChanged } from '../processing/index.js';
import { toResourceEvents, type InformerEvent } from '../sources/index.js';
import { needsFinalizer } from './primary-writes.js';

export interface ControllerEventsOptions {
  /** The primary source's name: `ctx.cause.source` of its events (the Controller uses its own name). */
  readonly name: string;
  /** Every other source's events: secondary sources' `events$`, polling, inbound, timer sources (ES3, ES5). */
  readonly sources?: readonly Observable<ResourceEvent>[];
  /** EP6: drop primary updates that do not change the generation. Default true. */
  readonly generationAware?: boolean;
  /**
   * The finalizer the run adds (FZ1), when the reconciler uses one: an update that leaves it
   * missing passes the generation filter (EP6).
   */
  readonly finalizerName?: string;
}

/**
 * The event side of a controller: the primaries' informer events as ResourceEvents
 * (`toResourceEvents`), filtered by generation (`generationChanged`), merged with every other
 * source. Pipe it into `reconcileEach(reconcilerRun(reconciler, ...))` for the whole controller.
 */
export function controllerEvents<P extends KubernetesObject>(
  primaries: { readonly events$: Observable<InformerEvent<P>> },
  options: ControllerEventsOptions,
): Observable<ResourceEvent> {
  const { finalizerName } = options;
  const finalizer = { usesFinalizer: finalizerName !== undefined, finalizerName: finalizerName ?? '' };
  const primaryEvents$ = primaries.events$.pipe(toResourceEvents<P>(options.name));
  const filtered$ =
    options.generationAware === false ? primaryEvents$ : primaryEvents$.pipe(generationChanged<P>({ finalizerNeeded: (p) => needsFinalizer(p, finalizer) }));
  return merge(filtered$, ...(options.sources ?? []));
}
