/**
 * The built-in Event: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { CORE_EVENT, EVENT_COLUMNS, eventsV1Strategy } from '../events.js';
import type { ResourceType } from '../registry.js';
import { type BuiltinSpec, builtin } from './builtin.js';

/** Events in either group (core v1 and events.k8s.io/v1 are the same objects). */
const EVENT = {
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  createOnUpdate: true,
  columns: EVENT_COLUMNS,
  age: false,
} as const satisfies Omit<BuiltinSpec, 'group'>;

export function coreEventType(): ResourceType {
  return builtin({ group: '', ...EVENT });
}

// The same objects through events.k8s.io/v1, as the real server serves them (api/events.ts).
export function eventsV1EventType(): ResourceType {
  return builtin({ group: 'events.k8s.io', ...EVENT, strategy: eventsV1Strategy, storedAs: { key: '/events', apiVersion: CORE_EVENT } });
}
