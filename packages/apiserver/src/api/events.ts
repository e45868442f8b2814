/**
 * Events, served as the real server serves them: core `v1` Events and `events.k8s.io/v1` Events
 * are two views of the same stored objects (stored in the core form), converted field by field
 * as Kubernetes' events/v1 conversion does; `events.k8s.io/v1` writes are validated as strictly
 * as the real server validates them; `kubectl get events` gets the real printer's columns.
 */
import { fieldInvalid, fieldRequired, type StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { age } from '../base/meta.js';
import type { PrinterColumn, Strategy } from './registry.js';

export const CORE_EVENT = 'v1';
export const EVENTS_V1 = 'events.k8s.io/v1';

/** events.k8s.io/v1 field → core v1 field (the rest have one name in both). */
const RENAMED: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

/** An Event in the form a client of `apiVersion` reads, from either form; undefined for other conversions. */
export function convertEvent(obj: JsonObject, apiVersion: string): JsonObject | undefined {
  if (obj.kind !== 'Event') return undefined;
  const from = obj.apiVersion;
  const pairs =
    from === EVENTS_V1 && apiVersion === CORE_EVENT
      ? RENAMED
      : from === CORE_EVENT && apiVersion === EVENTS_V1
        ? RENAMED.map(([a, b]) => [b, a] as const)
        : undefined;
  if (!pairs) return undefined;
  const out: JsonObject = { ...obj, apiVersion };
  for (const [source, target] of pairs) {
    delete out[source];
    if (obj[source] !== undefined) out[target] = obj[source];
  }
  return out;
}

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LIMIT = { reportingInstance: 128, action: 128, reason: 128 } as const;
const NOTE_LIMIT = 1024;

/**
 * ValidateEventCreate/Update for `events.k8s.io/v1` (pkg/apis/core/validation/events.go): the
 * reporting fields, action, reason and eventTime are required, the deprecated fields stay unset,
 * a series counts at least 2.
 */
export const eventsV1Strategy: Strategy = {
  validate(obj) {
    const causes: StatusCause[] = [];
    const text = (field: string): string => (typeof obj[field] === 'string' ? obj[field] : '');
    const controller = text('reportingController');
    if (!controller) causes.push(fieldRequired('reportingController', ''));
    else if (!QUALIFIED_NAME.test(controller) || (controller.split('/').pop() ?? '').length > 63) {
      causes.push(
        fieldInvalid(
          'reportingController',
          controller,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    }
    for (const field of ['reportingInstance', 'action', 'reason'] as const) {
      const value = text(field);
      if (!value) causes.push(fieldRequired(field, ''));
      else if (value.length > LIMIT[field]) causes.push(fieldInvalid(field, '', `can have at most ${LIMIT[field]} characters`));
    }
    if (Buffer.byteLength(text('note')) > NOTE_LIMIT) causes.push(fieldInvalid('note', '', `can have at most ${NOTE_LIMIT} characters`));
    if (!text('eventTime')) causes.push(fieldRequired('eventTime', ''));
    if (obj.type !== 'Normal' && obj.type !== 'Warning')
      causes.push(fieldInvalid('type', '', `has invalid value: ${typeof obj.type === 'string' ? obj.type : ''}`));
    for (const [field, label] of [
      ['deprecatedFirstTimestamp', 'firstTimestamp'],
      ['deprecatedLastTimestamp', 'lastTimestamp'],
      ['deprecatedCount', 'count'],
      ['deprecatedSource', 'source'],
    ] as const) {
      const value = obj[field];
      const set = isJsonObject(value)
        ? Object.values(value).some((v) => v !== '' && v !== null)
        : value !== undefined && value !== null && value !== 0 && value !== '';
      if (set) causes.push(fieldInvalid(label, '', 'needs to be unset'));
    }
    const series = obj.series;
    if (series !== undefined && series !== null) {
      const count = isJsonObject(series) ? series.count : undefined;
      if (typeof count !== 'number' || count < 2) causes.push(fieldInvalid('series.count', '', 'should be at least 2'));
      if (!isJsonObject(series) || typeof series.lastObservedTime !== 'string' || series.lastObservedTime === '') {
        causes.push(fieldRequired('series.lastObservedTime', ''));
      }
    }
    return causes;
  },
};

/** The core form of an Event of either view (the columns read the core fields). */
function core(o: JsonObject): JsonObject {
  return convertEvent(o, CORE_EVENT) ?? o;
}

const field = (o: JsonObject, ...path: string[]): JsonValue | undefined => {
  let cur: JsonValue | undefined = o;
  for (const key of path) cur = isJsonObject(cur) ? cur[key] : undefined;
  return cur;
};
const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

function firstSeen(o: JsonObject): string {
  return age(field(o, 'firstTimestamp') ?? field(o, 'eventTime'));
}

function lastSeen(o: JsonObject): string {
  const series = field(o, 'series', 'lastObservedTime');
  if (series !== undefined) return age(series);
  return field(o, 'lastTimestamp') !== undefined ? age(field(o, 'lastTimestamp')) : firstSeen(o);
}

function count(o: JsonObject): number {
  const series = field(o, 'series', 'count');
  if (typeof series === 'number') return series;
  const legacy = field(o, 'count');
  return typeof legacy === 'number' && legacy > 0 ? legacy : 1; // singleton events of the new API have no count
}

function source(o: JsonObject): string {
  const component = str(field(o, 'source', 'component')) || str(o.reportingComponent);
  const host = str(field(o, 'source', 'host')) || str(o.reportingInstance);
  return host ? `${component}, ${host}` : component;
}

function target(o: JsonObject): string {
  const kind = str(field(o, 'involvedObject', 'kind')).toLowerCase();
  const name = str(field(o, 'involvedObject', 'name'));
  return name ? `${kind}/${name}` : kind;
}

const column = (name: string, cell: (o: JsonObject) => string | number, priority = 0, type = 'string'): PrinterColumn => ({
  name,
  type,
  priority,
  cell: (o) => cell(core(o)),
  ...(name === 'Name' ? { format: 'name' } : {}),
});

/** The real server's event printer: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE (and more with -o wide). */
export const EVENT_COLUMNS: PrinterColumn[] = [
  column('Last Seen', lastSeen),
  column('Type', (o) => str(o.type)),
  column('Reason', (o) => str(o.reason)),
  column('Object', target),
  column('Subobject', (o) => str(field(o, 'involvedObject', 'fieldPath')), 1),
  column('Source', source, 1),
  column('Message', (o) => str(o.message).trim()),
  column('First Seen', firstSeen, 1),
  column('Count', count, 1, 'integer'),
  column('Name', (o) => str(field(o, 'metadata', 'name')), 1),
];
