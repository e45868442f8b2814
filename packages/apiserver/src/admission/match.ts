/**
 * Which webhooks a request reaches, as the real server decides: rules (apiGroups, apiVersions,
 * resources with `*` and `resource/subresource`, operations, scope), matchPolicy Equivalent (a
 * rule for another served version of the same resource), namespaceSelector, objectSelector
 * (the new or the old object's labels) and matchConditions (CEL; an error counts against the
 * failurePolicy).
 */
import type { CelValue } from '@bufbuild/cel';
import { CelCostExceeded, compileExpression, MATCH_CONDITIONS_COST_BUDGET, toCel, withCelBudget } from '../grammar/cel.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { labelSelectorFromObject, matchesLabelSelector } from '../grammar/label-selector.js';
import { labelsOf } from '../base/meta.js';
import type { ResourceType } from '../api/registry.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The request as rules see it. */
export interface RuleAttributes {
  operation: Operation;
  type: ResourceType;
  version: string;
  subresource: string;
  namespaced: boolean;
}

const list = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const has = (values: string[], v: string): boolean => values.includes('*') || values.includes(v);

function resourceMatches(resources: string[], plural: string, subresource: string): boolean {
  const wanted = subresource ? `${plural}/${subresource}` : plural;
  return resources.some((r) => {
    if (r === '*/*' || r === wanted) return true;
    const [res, sub = ''] = r.split('/');
    if (subresource === '') return r === '*' || (sub === '' && res === plural);
    return (res === '*' && sub === subresource) || (res === plural && sub === '*');
  });
}

/** Whether one rule (RuleWithOperations) covers the request at `version`. */
export function ruleMatches(rule: JsonValue, a: RuleAttributes, version: string): boolean {
  if (!isJsonObject(rule)) return false;
  if (!has(list(rule.operations), a.operation)) return false;
  if (!has(list(rule.apiGroups), a.type.group)) return false;
  if (!has(list(rule.apiVersions), version)) return false;
  if (!resourceMatches(list(rule.resources), a.type.plural, a.subresource)) return false;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  return scope === '*' || (scope === 'Namespaced') === a.namespaced;
}

/**
 * The version a webhook is called at: the request's when a rule names it; with matchPolicy
 * Equivalent, another served version of the resource a rule names; undefined when none.
 */
export function matchedVersion(rules: JsonValue | undefined, matchPolicy: JsonValue | undefined, a: RuleAttributes): string | undefined {
  const all = Array.isArray(rules) ? rules : [];
  if (all.some((r) => ruleMatches(r, a, a.version))) return a.version;
  if (matchPolicy === 'Exact') return undefined;
  return a.type.versions.filter((v) => v.served && v.name !== a.version).find((v) => all.some((r) => ruleMatches(r, a, v.name)))?.name;
}

/** Whether a label selector field (absent: everything) selects these labels; a broken one selects nothing. */
export function selects(selector: JsonValue | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return true;
  try {
    return matchesLabelSelector(labelSelectorFromObject(selector), labels);
  } catch {
    return false;
  }
}

/** objectSelector: the new or the old object's labels. */
export function objectSelected(
  selector: JsonValue | undefined,
  object: JsonObject | undefined,
  oldObject: JsonObject | undefined,
): boolean {
  return [object, oldObject].some((o) => o !== undefined && selects(selector, labelsOf(o)));
}

/** The outcome of a webhook's matchConditions: all true, one false, or an error. */
export type ConditionsOutcome = { matched: true } | { matched: false } | { error: string };

/**
 * Evaluates matchConditions in order; a false one stops (so skips later errors), as the real
 * server does. They are metered as the real server meters them: each by the per-call limit, all
 * of one webhook's by MATCH_CONDITIONS_COST_BUDGET; a spent budget is an error (the webhook's
 * failurePolicy decides), never a long evaluation.
 */
export function evaluateConditions(conditions: JsonValue | undefined, variables: Record<string, JsonValue | undefined>): ConditionsOutcome {
  const all = Array.isArray(conditions) ? conditions : [];
  if (all.length === 0) return { matched: true };
  return withCelBudget(() => evaluateMetered(all, variables), MATCH_CONDITIONS_COST_BUDGET);
}

function evaluateMetered(all: JsonValue[], variables: Record<string, JsonValue | undefined>): ConditionsOutcome {
  const bindings: Record<string, CelValue> = {};
  for (const [k, v] of Object.entries(variables)) bindings[k] = v === undefined ? null : toCel(v, undefined);
  const errors: string[] = [];
  for (const c of all) {
    if (!isJsonObject(c) || typeof c.expression !== 'string') continue;
    const compiled = compileExpression(c.expression, Object.keys(variables));
    if (!compiled.ok) {
      errors.push(`compilation failed: ${compiled.error}`);
      continue;
    }
    let v: ReturnType<typeof compiled.expression.evaluate>;
    try {
      v = compiled.expression.evaluate(bindings);
    } catch (err) {
      if (!(err instanceof CelCostExceeded)) throw err;
      if (err.scope === 'request') {
        errors.push('validation failed due to running out of cost budget, no further validation rules will be run');
        break;
      }
      errors.push(`expression '${String(c.name)}' resulted in error: ${err.message}`);
      continue;
    }
    if (v instanceof Error) errors.push(`expression '${String(c.name)}' resulted in error: ${v.message}`);
    else if (v === false) return { matched: false };
    else if (v !== true) errors.push(`expression '${String(c.name)}' resulted in error: must evaluate to bool`);
  }
  return errors.length ? { error: errors.join(', ') } : { matched: true };
}
