/**
 * Label and field selectors of list, watch and deletecollection requests, compiled once per
 * request into a predicate over stored objects.
 */
import { badRequest } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';
import { isJsonObject } from './json.js';
import { labelsOf } from './meta.js';
import type { ResourceType, VersionInfo } from './registry.js';
import { matchesFieldSelector, matchesLabelSelector, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

export interface ObjectFilter {
  readonly matches: (obj: JsonObject) => boolean;
  readonly isEverything: boolean;
}

const EVERYTHING: ObjectFilter = { matches: () => true, isEverything: true };

/** The field paths a field selector may use for this type. */
export function selectableFields(type: ResourceType, version: VersionInfo): string[] {
  const fields = ['metadata.name'];
  if (type.namespaced) fields.push('metadata.namespace');
  return [...fields, ...version.selectableFields];
}

function fieldText(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** The values of the selectable fields of an object (missing ones are empty, like the real server). */
export function fieldValues(obj: JsonObject, fields: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of fields) {
    let cur: JsonValue | undefined = obj;
    for (const key of field.split('.')) cur = isJsonObject(cur) ? cur[key] : undefined;
    // Events select on `source`, meaning source.component.
    if (field === 'source' && isJsonObject(cur)) cur = cur.component;
    out[field] = fieldText(cur);
  }
  return out;
}

export function compileFilter(
  type: ResourceType,
  version: VersionInfo,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ObjectFilter {
  const labelText = labelSelector?.trim() ?? '';
  const fieldText = fieldSelector?.trim() ?? '';
  if (!labelText && !fieldText) return EVERYTHING;
  const allowed = selectableFields(type, version);
  try {
    const labels = labelText ? parseLabelSelector(labelText) : undefined;
    const fieldSel = fieldText ? parseFieldSelector(fieldText, allowed) : undefined;
    return {
      isEverything: false,
      matches: (obj) =>
        (labels === undefined || matchesLabelSelector(labels, labelsOf(obj))) &&
        (fieldSel === undefined || matchesFieldSelector(fieldSel, fieldValues(obj, allowed))),
    };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}
