/**
 * Name, label and annotation validation with the real server's messages. Each validator returns
 * the error details (empty when valid) so callers can gather all problems into one 422.
 */
import type { StatusCause } from '../base/errors.js';
import { fieldInvalid } from '../base/errors.js';
import type { JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { labelKeyProblem, labelValueProblem } from '../grammar/label-selector.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

export function dns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return errs;
}

export function dns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) {
    errs.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errs;
}

export function dns1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(value)) {
    errs.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errs;
}

/** Every object name must be usable as one URL path segment. */
export function pathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (value.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

export function validateName(rule: NameRule, value: string): string[] {
  const segment = pathSegmentName(value);
  if (segment.length) return segment;
  switch (rule) {
    case 'subdomain':
      return dns1123Subdomain(value);
    case 'label':
      return dns1123Label(value);
    case 'dns1035':
      return dns1035Label(value);
    case 'path':
      return [];
  }
}

export function validateLabels(labels: JsonValue | undefined, field: string): StatusCause[] {
  if (labels === undefined || labels === null) return [];
  if (!isJsonObject(labels)) return [fieldInvalid(field, labels, 'must be a map of strings')];
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) causes.push(fieldInvalid(field, k, keyProblem));
    if (typeof v !== 'string') {
      causes.push(fieldInvalid(`${field}.${k}`, v, 'must be a string'));
      continue;
    }
    const valueProblem = labelValueProblem(v);
    if (valueProblem) causes.push(fieldInvalid(field, v, valueProblem));
  }
  return causes;
}

export function validateAnnotations(annotations: JsonValue | undefined, field: string): StatusCause[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isJsonObject(annotations)) return [fieldInvalid(field, annotations, 'must be a map of strings')];
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(annotations)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) causes.push(fieldInvalid(field, k, keyProblem));
    if (typeof v !== 'string') causes.push(fieldInvalid(`${field}.${k}`, v, 'must be a string'));
  }
  return causes;
}
