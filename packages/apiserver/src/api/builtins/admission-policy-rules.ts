/**
 * What ValidatingAdmissionPolicy and its binding share: the validation of matchResources
 * (matchConstraints on the policy) and the CEL expressions, compiled when the object is written
 * so that a policy that cannot run is refused then, as the real server does.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../base/errors.js';
import { compileExpression, PER_RULE_COST_LIMIT } from '../../grammar/cel.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { setDefault } from './defaults.js';
import { selectorCauses } from './admission-webhooks.js';

/** The variables a policy's expressions may name. */
export const POLICY_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables', 'authorizer'];

const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

/** An expression that does not compile, or costs more than the real server allows. */
export function expressionCauses(at: string, expression: JsonValue | undefined, required = true): StatusCause[] {
  if (typeof expression !== 'string' || expression === '') return required ? [fieldRequired(at, '')] : [];
  const compiled = compileExpression(expression, POLICY_VARIABLES);
  if (!compiled.ok) return [fieldInvalid(at, expression, `compilation failed: ${compiled.error}`)];
  const cost = compiled.expression.estimatedCost;
  if (cost > PER_RULE_COST_LIMIT) {
    return [
      {
        reason: 'FieldValueForbidden',
        message: `Forbidden: estimated rule cost exceeds budget by factor of ${(cost / PER_RULE_COST_LIMIT).toFixed(1)}x`,
        field: at,
      },
    ];
  }
  return [];
}

function resourceRuleCauses(at: string, rule: JsonValue): StatusCause[] {
  if (!isJsonObject(rule)) return [fieldInvalid(at, rule, 'must be an object')];
  const causes: StatusCause[] = [];
  for (const f of ['operations', 'apiGroups', 'apiVersions', 'resources'])
    if (list(rule[f]).length === 0) causes.push(fieldRequired(`${at}.${f}`, ''));
  const ops = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
  list(rule.operations).forEach((op, i) => {
    if (typeof op !== 'string' || !ops.includes(op)) causes.push(fieldNotSupported(`${at}.operations[${i}]`, op, ops));
  });
  return causes;
}

export function defaultMatchResources(m: JsonValue | undefined): void {
  if (!isJsonObject(m)) return;
  setDefault(m, 'namespaceSelector', {});
  setDefault(m, 'objectSelector', {});
  setDefault(m, 'matchPolicy', 'Equivalent');
  for (const key of ['resourceRules', 'excludeResourceRules'])
    for (const r of list(m[key])) if (isJsonObject(r)) setDefault(r, 'scope', '*');
}

export function matchResourcesCauses(at: string, m: JsonValue | undefined, requireRules: boolean): StatusCause[] {
  if (!isJsonObject(m)) return requireRules ? [fieldRequired(at, '')] : [];
  const causes: StatusCause[] = [];
  if (requireRules && list(m.resourceRules).length === 0) causes.push(fieldRequired(`${at}.resourceRules`, ''));
  list(m.resourceRules).forEach((r, i) => causes.push(...resourceRuleCauses(`${at}.resourceRules[${i}]`, r)));
  list(m.excludeResourceRules).forEach((r, i) => causes.push(...resourceRuleCauses(`${at}.excludeResourceRules[${i}]`, r)));
  causes.push(
    ...selectorCauses(`${at}.namespaceSelector`, m.namespaceSelector),
    ...selectorCauses(`${at}.objectSelector`, m.objectSelector),
  );
  if (m.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(String(m.matchPolicy)))
    causes.push(fieldNotSupported(`${at}.matchPolicy`, m.matchPolicy, ['Equivalent', 'Exact']));
  return causes;
}

/** Named expressions (matchConditions, variables): names required and unique, expressions compiling. */
export function namedExpressionsCauses(at: string, items: JsonValue | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  list(items).forEach((item, i) => {
    const o: JsonObject = isJsonObject(item) ? item : {};
    if (typeof o.name !== 'string' || o.name === '') causes.push(fieldRequired(`${at}[${i}].name`, ''));
    else if (seen.has(o.name))
      causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(o.name)}`, field: `${at}[${i}].name` });
    else seen.add(o.name);
    causes.push(...expressionCauses(`${at}[${i}].expression`, o.expression));
  });
  return causes;
}
