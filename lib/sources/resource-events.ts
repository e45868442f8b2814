/** Informer events turned into the ResourceEvents of a primary, or mapped to the primaries of a secondary. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { map, mergeMap, type OperatorFunction } from 'rxjs';
import { resourceIdOf, type ResourceEvent } from '../core/index.js';
import type { InformerEvent } from '../cache/index.js';
import { mapBoth, type SecondaryToPrimaryMapper } from './mappers.js';

/** Primary informer events as ResourceEvent triggers (action = the change, primary: true). */
export function toResourceEvents<T extends KubernetesObject>(source: string): OperatorFunction<InformerEvent<T>, ResourceEvent<T>> {
  return map((event) => {
    const resourceEvent: ResourceEvent<T> = {
      id: resourceIdOf(event.object),
      source,
      action: event.type,
      primary: true,
      object: event.object,
      oldObject: event.oldObject,
    };
    // EP13: only list-derived events carry the mark (most events are a watch's).
    return event.listed ? { ...resourceEvent, listed: true } : resourceEvent;
  });
}

/**
 * ES3: secondary informer events as 'trigger' ResourceEvents of the primaries they map to.
 * A modify maps the old and the new object, so a changed owner or annotation triggers both
 * primaries. A mapper failure errors the stream; `SecondarySource` catches and reports it.
 */
export function toPrimaryTriggers<S>(
  source: string,
  mapper: SecondaryToPrimaryMapper<S>,
): OperatorFunction<InformerEvent<S>, ResourceEvent<S>> {
  return mergeMap((event) => triggersOf(source, mapper, event));
}

/** The 'trigger' events one secondary change causes (throws what the mapper throws). */
export function triggersOf<S>(source: string, mapper: SecondaryToPrimaryMapper<S>, event: InformerEvent<S>): ResourceEvent<S>[] {
  return mapBoth(mapper, event.object, event.type === 'modified' ? event.oldObject : undefined).map((id) => ({
    id,
    source,
    action: 'trigger',
    primary: false,
    object: event.object,
    oldObject: event.oldObject,
  }));
}
