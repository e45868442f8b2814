/** The event side of a controller as a function, for users who compose its pipeline themselves. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { merge, type Observable } from 'rxjs';
import type { ResourceEvent } from '../core/index.js';
import type { Primaries } from './primaries.js';

export interface ControllerEventsOptions {
  /** Every other source's events: secondary sources' `events$`, polling, inbound, timer sources (ES3, ES5). */
  readonly sources?: readonly Observable<ResourceEvent>[];
}

/**
 * The event side of a controller: the primaries' changes (`primaries.events$`: own writes left
 * out, generation-aware, the finalizer rule) merged with every other source. Pipe it into
 * `reconcileEach(reconcilerRun(reconciler, { primaries, ... }), { primaries })` for the whole controller.
 */
export function controllerEvents<P extends KubernetesObject>(
  primaries: Primaries<P>,
  options: ControllerEventsOptions = {},
): Observable<ResourceEvent> {
  return merge(primaries.events$, ...(options.sources ?? []));
}
