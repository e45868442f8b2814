/**
 * Label and field selectors of list, watch and deletecollection requests, compiled once per
 * request into a predicate over stored objects.
 */
import { badRequest } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { labelsOf } from '../base/meta.js';
import { present } from './present.js';
import type { Resolved, ResourceType, VersionInfo } from './registry.js';
import { matchesFieldSelector, parseFieldSelector, selectableFields, selectableFieldValues } from '../grammar/field-selector.js';
import { matchesLabelSelector, parseLabelSelector, SelectorError } from '../grammar/label-selector.js';

export interface ObjectFilter {
  readonly matches: (obj: JsonObject) => boolean;
  readonly isEverything: boolean;
}

const EVERYTHING: ObjectFilter = { matches: () => true, isEverything: true };

/** The field labels a field selector may use: the built-in kind's (selectors.ts), or a CRD version's selectableFields. */
export function allowedFields(type: ResourceType, version: VersionInfo): string[] {
  if (!type.custom) return selectableFields(type.group, type.kind);
  return ['metadata.name', 'metadata.namespace', ...version.selectableFields];
}

function fieldText(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The selectable field values of an object (absent fields read as ""). */
function fieldValues(type: ResourceType, obj: JsonObject, fields: readonly string[]): Record<string, string> {
  if (!type.custom) return selectableFieldValues(obj, type.group, type.kind);
  const out: Record<string, string> = {};
  for (const field of fields) {
    let cur: JsonValue | undefined = obj;
    for (const key of field.split('.')) cur = isJsonObject(cur) ? cur[key] : undefined;
    const text = fieldText(cur);
    if (text !== undefined) out[field] = text;
  }
  out['metadata.namespace'] ??= '';
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
  const allowed = allowedFields(type, version);
  try {
    const labels = labelText ? parseLabelSelector(labelText) : undefined;
    const fieldSel = fieldText ? parseFieldSelector(fieldText, allowed) : undefined;
    return {
      isEverything: false,
      matches: (obj) =>
        (labels === undefined || matchesLabelSelector(labels, labelsOf(obj))) &&
        (fieldSel === undefined || matchesFieldSelector(fieldSel, fieldValues(type, obj, allowed))),
    };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

/** The selectors of a list, watch or deletecollection request. */
export interface SelectorQuery {
  labelSelector?: string;
  fieldSelector?: string;
}

/** The selectors of a request on one resource, compiled; a view of objects stored in another form selects on its own fields. */
export function compileRequestFilter(r: Resolved, query: SelectorQuery): ObjectFilter {
  const filter = compileFilter(r.type, r.version, query.labelSelector, query.fieldSelector);
  // events.k8s.io Events are stored as core Events: their selectors name the view's fields.
  if (r.type.storedAs === undefined || filter.isEverything) return filter;
  return { isEverything: false, matches: (obj) => filter.matches(present(obj, r.apiVersion)) };
}
