/**
 * Kubernetes field selectors, parsed and matched the way the API server does
 * (k8s.io/apimachinery pkg/fields), and the fields each kind can be selected by.
 *
 * Field selectors: comma-separated `field=value`, `field==value`, `field!=value`. In values `\,`,
 * `\=` and `\\` escape; an unescaped `,` or `=` in a value is an error. Empty terms are skipped.
 * A field absent from the object's field set reads as "" (so `spec.nodeName=` matches unscheduled
 * pods). Unlike the Go parser, whitespace around a field name is trimmed; values are taken verbatim.
 */
import { isJsonObject } from '../base/json.js';
import { SelectorError } from './label-selector.js';

export type FieldOperator = 'Equals' | 'NotEquals';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/**
 * Parses a field selector, accepting only fields in `allowedFields` (e.g. metadata.name,
 * metadata.namespace, status.phase). Throws SelectorError naming the unsupported field or the
 * term that cannot be understood.
 */
export function parseFieldSelector(text: string, allowedFields: readonly string[]): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',')) {
    if (term.trim() === '') continue;
    const split = splitTerm(term);
    if (!split)
      throw new SelectorError(
        `invalid field selector ${JSON.stringify(text)}: can't understand ${JSON.stringify(term)} (expected field=value, field==value or field!=value)`,
      );
    const field = split.field.trim();
    if (!allowedFields.includes(field)) {
      throw new SelectorError(
        `field label not supported: ${field}` + (allowedFields.length ? ` (supported: ${allowedFields.join(', ')})` : ''),
      );
    }
    let value: string;
    try {
      value = unescapeFieldValue(split.value);
    } catch (err) {
      throw new SelectorError(`invalid field selector ${JSON.stringify(text)}: in ${JSON.stringify(term)}: ${(err as Error).message}`);
    }
    requirements.push({ field, operator: split.operator, value });
  }
  return { requirements };
}

export function matchesFieldSelector(selector: FieldSelector, fields: Record<string, string>): boolean {
  return selector.requirements.every(({ field, operator, value }) => {
    const actual = Object.prototype.hasOwnProperty.call(fields, field) ? fields[field] : '';
    return operator === 'Equals' ? actual === value : actual !== value;
  });
}

/** Escapes a value for use in a field selector (`\`, `,` and `=`). */
export function escapeFieldSelectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (ch) => '\\' + ch);
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text[i + 1];
      i++;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function splitTerm(term: string): { field: string; operator: FieldOperator; value: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const rest = term.slice(i);
    if (rest.startsWith('!=')) return { field: term.slice(0, i), operator: 'NotEquals', value: term.slice(i + 2) };
    if (rest.startsWith('==')) return { field: term.slice(0, i), operator: 'Equals', value: term.slice(i + 2) };
    if (rest.startsWith('=')) return { field: term.slice(0, i), operator: 'Equals', value: term.slice(i + 1) };
  }
  return undefined;
}

function unescapeFieldValue(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\\') {
      const next = raw[i + 1];
      if (next === undefined) throw new Error('a value cannot end with a single "\\"');
      if (next !== '\\' && next !== ',' && next !== '=') throw new Error(`invalid escape sequence "\\${next}"`);
      out += next;
      i++;
    } else if (ch === ',' || ch === '=') {
      throw new Error(`unescaped "${ch}" in a value (write "\\${ch}")`);
    } else {
      out += ch;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Which fields each kind can be selected by (as the Kubernetes API server allows them)

const EVENT_FIELDS: Readonly<Record<string, string>> = {
  'involvedObject.kind': 'involvedObject.kind',
  'involvedObject.namespace': 'involvedObject.namespace',
  'involvedObject.name': 'involvedObject.name',
  'involvedObject.uid': 'involvedObject.uid',
  'involvedObject.apiVersion': 'involvedObject.apiVersion',
  'involvedObject.resourceVersion': 'involvedObject.resourceVersion',
  'involvedObject.fieldPath': 'involvedObject.fieldPath',
  reason: 'reason',
  reportingComponent: 'reportingComponent',
  source: 'source.component',
  type: 'type',
};

/** Field label → where its value lives in the object (dotted path), per "group/kind". */
const KIND_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/Pod': {
    'spec.nodeName': 'spec.nodeName',
    'spec.restartPolicy': 'spec.restartPolicy',
    'spec.schedulerName': 'spec.schedulerName',
    'spec.serviceAccountName': 'spec.serviceAccountName',
    'spec.hostNetwork': 'spec.hostNetwork',
    'status.phase': 'status.phase',
    'status.podIP': 'status.podIP',
    'status.nominatedNodeName': 'status.nominatedNodeName',
  },
  '/Secret': { type: 'type' },
  '/Namespace': { 'status.phase': 'status.phase' },
  '/Event': EVENT_FIELDS,
  'events.k8s.io/Event': {
    'regarding.kind': 'regarding.kind',
    'regarding.namespace': 'regarding.namespace',
    'regarding.name': 'regarding.name',
    'regarding.uid': 'regarding.uid',
    'regarding.apiVersion': 'regarding.apiVersion',
    'regarding.resourceVersion': 'regarding.resourceVersion',
    'regarding.fieldPath': 'regarding.fieldPath',
    reason: 'reason',
    reportingController: 'reportingController',
    type: 'type',
  },
  'apps/ReplicaSet': { 'status.replicas': 'status.replicas' },
  'batch/Job': { 'status.successful': 'status.successful' },
};

/** The field labels a field selector may use for this kind: metadata.name, metadata.namespace and the kind's own. */
export function selectableFields(group: string, kind: string): string[] {
  return ['metadata.name', 'metadata.namespace', ...Object.keys(KIND_FIELDS[`${group}/${kind}`] ?? {})];
}

/**
 * The values of those fields for one object, as strings (booleans and numbers as Kubernetes
 * prints them). Absent fields are left out, so they read as "" when matched. A cluster-scoped
 * object has metadata.namespace "".
 */
export function selectableFieldValues(object: unknown, group: string, kind: string): Record<string, string> {
  const out: Record<string, string> = {};
  const read = (path: string): unknown =>
    path.split('.').reduce<unknown>((node, step) => (isJsonObject(node) ? node[step] : undefined), object);
  const put = (label: string, value: unknown) => {
    if (typeof value === 'string') out[label] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[label] = String(value);
  };
  put('metadata.name', read('metadata.name'));
  put('metadata.namespace', read('metadata.namespace') ?? '');
  for (const [label, path] of Object.entries(KIND_FIELDS[`${group}/${kind}`] ?? {})) put(label, read(path));
  return out;
}
