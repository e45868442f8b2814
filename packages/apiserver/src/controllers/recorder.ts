/**
 * Events the controllers inside the server record, as client-go's recorder writes them: core v1
 * Events regarding the object, a repeat of the same reason and message counted on the first
 * (count, lastTimestamp) — what `kubectl describe` lists under Events.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject } from '../base/json.js';
import { nameOf, namespaceOf, resourceVersionOf, timestamp, uidOf } from '../base/meta.js';
import type { SimulationClock } from './clock.js';

export const EVENTS_KEY = '/events';

export type EventType = 'Normal' | 'Warning';

export class ServerEventRecorder {
  /** uid/reason/message → the Event's name, for counting repeats. */
  private readonly series = new Map<string, string>();
  private sequence = 0;

  constructor(
    private readonly writes: InternalWrites,
    private readonly clock: SimulationClock,
  ) {}

  record(regarding: JsonObject, type: EventType, reason: string, message: string, component: string): void {
    const namespace = namespaceOf(regarding) || 'default';
    const now = timestamp(new Date(this.clock.now()));
    const seriesKey = `${uidOf(regarding)}/${reason}/${message}`;
    const existing = this.series.get(seriesKey);
    if (existing) {
      const counted = this.writes.mutate(EVENTS_KEY, namespace, existing, (e) => {
        e.count = (typeof e.count === 'number' ? e.count : 1) + 1;
        e.lastTimestamp = now;
      });
      if (counted) return;
    }
    const name = `${nameOf(regarding)}.${(this.clock.now() * 1000 + (this.sequence++ % 1000)).toString(16)}`;
    const involvedObject: JsonObject = {
      kind: String(regarding.kind),
      apiVersion: String(regarding.apiVersion),
      name: nameOf(regarding),
      uid: uidOf(regarding),
      resourceVersion: resourceVersionOf(regarding),
    };
    if (namespaceOf(regarding)) involvedObject.namespace = namespaceOf(regarding);
    const created = this.writes.createInternal(EVENTS_KEY, {
      metadata: { name, namespace },
      involvedObject,
      type,
      reason,
      message,
      source: { component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: component,
      reportingInstance: '',
    });
    if (created) this.series.set(seriesKey, name);
    if (this.series.size > 10_000) this.series.clear();
  }
}
