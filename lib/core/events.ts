/** The event a controller reacts to: something happened that concerns one primary resource. */
import type { ResourceID } from './resource.js';

export type EventAction = 'added' | 'modified' | 'deleted' | 'trigger';

/** Something happened that concerns the primary resource `id`. */
export interface ResourceEvent<T = unknown> {
  /** The primary resource this event is about (already mapped for secondary sources). */
  readonly id: ResourceID;
  /** Name of the source that produced the event, e.g. `primary`, `configmaps`, `webhook`. */
  readonly source: string;
  readonly action: EventAction;
  /**
   * True only for events of the primary resource's own source (EP4): only those create
   * per-resource state, and only a primary `deleted` drops it.
   */
  readonly primary: boolean;
  /**
   * True for an event derived from a list rather than a watch (the informer's initial list, a
   * relist, a newly watched namespace, a replay of the cache): it tells a state the resource may
   * have had for long, not a change that just happened. Its run waits behind the runs of fresh
   * changes (EP13).
   */
  readonly listed?: boolean;
  readonly object?: T;
  readonly oldObject?: T;
}

export interface ResourceEventOptions {
  readonly namespace?: string | undefined;
  /** Default true: an event of the primary resource (only those create per-resource state). */
  readonly primary?: boolean;
  readonly source?: string;
  /** Default false: an event of a watch, not of a list (EP13). */
  readonly listed?: boolean;
}

/**
 * A ResourceEvent without payload, for pipelines of your own and marble values:
 * `resourceEvent('a')`, `resourceEvent('a', 'deleted')`, `resourceEvent('a', 'trigger', { primary: false, source: 'webhook' })`.
 */
export function resourceEvent(name: string, action: EventAction = 'modified', options: ResourceEventOptions = {}): ResourceEvent {
  const primary = options.primary ?? true;
  return {
    id: { name, namespace: options.namespace ?? 'default' },
    source: options.source ?? (primary ? 'primary' : 'secondary'),
    action,
    primary,
    ...(options.listed ? { listed: true } : {}),
  };
}
