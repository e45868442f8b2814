/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, as Kubernetes 1.30+ runs them:
 * a binding applies its policy to the requests both match (matchConstraints, the binding's
 * matchResources, matchConditions), with params (paramKind + paramRef: one named object or every
 * object a selector picks), and the policy's validations are CEL over object, oldObject, request,
 * params, namespaceObject and variables. A failed validation acts as the binding says: Deny (the
 * real wording, 422 Invalid unless the validation names another reason), Warn (a Warning
 * header); Audit is accepted and has no effect here. An expression error follows failurePolicy.
 * Evaluation is metered: each expression by the per-call limit, one request's by the runtime budget.
 */
import type { CelValue } from '@bufbuild/cel';
import { CelCostExceeded, compileExpression, toCel, withCelBudget } from '../grammar/cel.js';
import { ApiError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { labelSelectorFromObject, matchesLabelSelector } from '../grammar/label-selector.js';
import { labelsOf, nameOf } from '../base/meta.js';
import type { Registry } from '../api/registry.js';
import type { Store } from '../storage/store.js';
import { matchedVersion, objectSelected, selects, type RuleAttributes } from './match.js';

export const POLICIES_KEY = 'admissionregistration.k8s.io/validatingadmissionpolicies';
export const BINDINGS_KEY = 'admissionregistration.k8s.io/validatingadmissionpolicybindings';

const VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables', 'authorizer'];
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const specOf = (o: JsonObject): JsonObject => (isJsonObject(o.spec) ? o.spec : {});

/** What a policy is evaluated on. */
export interface PolicyInput {
  rules: RuleAttributes;
  name: string;
  namespace: string;
  object: JsonObject | undefined;
  oldObject: JsonObject | undefined;
  /** The AdmissionRequest, as webhooks get it (the `request` variable). */
  request: JsonObject;
}

function rulesCover(rules: JsonValue | undefined, matchPolicy: JsonValue | undefined, input: PolicyInput): boolean {
  const named = list(rules).filter((r) => {
    const names = isJsonObject(r) ? list(r.resourceNames) : [];
    return names.length === 0 || names.includes(input.name);
  });
  return matchedVersion(named, matchPolicy, input.rules) !== undefined;
}

/** Whether matchResources (a policy's matchConstraints or a binding's) covers the request. */
function matchResourcesCover(
  m: JsonValue | undefined,
  input: PolicyInput,
  namespaceLabels: Record<string, string> | undefined,
  emptyRulesMatchAll: boolean,
): boolean {
  if (!isJsonObject(m)) return true;
  if (!(emptyRulesMatchAll && list(m.resourceRules).length === 0) && !rulesCover(m.resourceRules, m.matchPolicy, input)) return false;
  if (rulesCover(m.excludeResourceRules, m.matchPolicy, input)) return false;
  if (namespaceLabels !== undefined && !selects(m.namespaceSelector, namespaceLabels)) return false;
  return objectSelected(m.objectSelector, input.object, input.oldObject);
}

class PolicyError extends Error {}

function evaluate(expression: string, bindings: Record<string, CelValue>): CelValue {
  const compiled = compileExpression(expression, VARIABLES);
  if (!compiled.ok) throw new PolicyError(`compilation failed: ${compiled.error}`);
  const v = compiled.expression.evaluate(bindings);
  if (v instanceof Error) throw new PolicyError(`expression '${expression}' resulted in error: ${v.message}`);
  return v;
}

const REASON_CODES: Readonly<Record<string, number>> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413, Unauthorized: 401 };

export class AdmissionPolicies {
  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
  ) {}

  private bindings(): { policy: JsonObject; binding: JsonObject }[] {
    const out: { policy: JsonObject; binding: JsonObject }[] = [];
    for (const binding of this.store.list(BINDINGS_KEY)) {
      const policyName = specOf(binding).policyName;
      const policy = typeof policyName === 'string' ? this.store.get(POLICIES_KEY, '', policyName) : undefined;
      if (policy) out.push({ policy, binding });
    }
    return out;
  }

  /** Whether some bound policy's rules cover the request (before selectors): cheap. */
  mayApply(input: Pick<PolicyInput, 'rules' | 'name'>): boolean {
    const probe = { ...input, namespace: '', object: undefined, oldObject: undefined, request: {} };
    return this.bindings().some(({ policy }) => {
      const m = specOf(policy).matchConstraints;
      return isJsonObject(m) && rulesCover(m.resourceRules, m.matchPolicy, probe);
    });
  }

  /** The params objects a binding names: undefined when none are needed, [] when none are found. */
  private params(policy: JsonObject, binding: JsonObject, namespace: string): JsonObject[] | undefined {
    const kind = specOf(policy).paramKind;
    const ref = specOf(binding).paramRef;
    if (!isJsonObject(kind) || !isJsonObject(ref)) return undefined;
    const resolved = this.registry.byKind(String(kind.apiVersion), String(kind.kind));
    if (!resolved) return [];
    const ns = resolved.type.namespaced ? (typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace) : '';
    if (typeof ref.name === 'string' && ref.name !== '') {
      const found = this.store.get(resolved.type.key, ns, ref.name);
      return found ? [found] : [];
    }
    let selector;
    try {
      selector = labelSelectorFromObject(ref.selector ?? {});
    } catch {
      return [];
    }
    return this.store
      .list(resolved.type.key, resolved.type.namespaced ? ns : undefined)
      .filter((o) => matchesLabelSelector(selector, labelsOf(o)));
  }

  /** Runs the bound policies; throws the first denial, pushes warnings. */
  validate(input: PolicyInput, warnings: string[]): void {
    const nsObject = input.rules.namespaced ? this.store.get('/namespaces', '', input.namespace) : undefined;
    const namespaceLabels =
      input.rules.type.group === '' && input.rules.type.plural === 'namespaces'
        ? labelsOf(input.object ?? input.oldObject ?? {})
        : nsObject
          ? labelsOf(nsObject)
          : input.rules.namespaced
            ? {}
            : undefined;
    withCelBudget(() => {
      for (const { policy, binding } of this.bindings()) {
        const spec = specOf(policy);
        if (!matchResourcesCover(spec.matchConstraints, input, namespaceLabels, false)) continue;
        if (!matchResourcesCover(specOf(binding).matchResources, input, namespaceLabels, true)) continue;
        this.run(policy, binding, input, nsObject, warnings);
      }
    });
  }

  private run(policy: JsonObject, binding: JsonObject, input: PolicyInput, nsObject: JsonObject | undefined, warnings: string[]): void {
    const spec = specOf(policy);
    const actions = list(specOf(binding).validationActions);
    const prefix = `ValidatingAdmissionPolicy '${nameOf(policy)}' with binding '${nameOf(binding)}'`;
    const base: Record<string, CelValue> = {
      object: toCel(input.object ?? null, undefined),
      oldObject: toCel(input.oldObject ?? null, undefined),
      request: toCel(input.request, undefined),
      namespaceObject: toCel(nsObject ?? null, undefined),
      authorizer: null,
    };
    const fail = (message: string, reason: string): void => {
      if (actions.includes('Warn')) warnings.push(`Validation failed for ${prefix}: ${message}`);
      if (!actions.includes('Deny')) return;
      const text = `${prefix} denied request: ${message}`;
      const code = REASON_CODES[reason] ?? 422;
      const gr = input.rules.type.group ? `${input.rules.type.plural}.${input.rules.type.group}` : input.rules.type.plural;
      const details = { name: input.name, group: input.rules.type.group, kind: input.rules.type.plural };
      if (code === 422)
        throw new ApiError(422, 'Invalid', `${gr} "${input.name}" is invalid: : ${text}`, {
          ...details,
          causes: [{ message: text, field: '' }],
        });
      throw new ApiError(code, reason, code === 403 ? `${gr} "${input.name}" is forbidden: ${text}` : text, details);
    };
    const paramsList = this.params(policy, binding, input.namespace);
    if (paramsList !== undefined && paramsList.length === 0) {
      const ref = specOf(binding).paramRef as JsonObject;
      if (ref.parameterNotFoundAction === 'Deny')
        fail('failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction', 'Invalid');
      return;
    }
    for (const params of paramsList ?? [undefined]) {
      try {
        const bindings: Record<string, CelValue> = { ...base, params: toCel(params ?? null, undefined) };
        const conditions = list(spec.matchConditions);
        if (conditions.some((c) => isJsonObject(c) && evaluate(String(c.expression), bindings) === false)) continue;
        const variables = new Map<string, CelValue>();
        bindings.variables = variables as unknown as CelValue;
        for (const v of list(spec.variables)) if (isJsonObject(v)) variables.set(String(v.name), evaluate(String(v.expression), bindings));
        for (const validation of list(spec.validations)) {
          if (!isJsonObject(validation)) continue;
          const expression = String(validation.expression);
          const ok = evaluate(expression, bindings);
          if (ok === true) continue;
          if (ok !== false) throw new PolicyError(`expression '${expression}' resulted in error: must evaluate to bool`);
          let message =
            typeof validation.message === 'string' && validation.message !== '' ? validation.message : `failed expression: ${expression}`;
          if (typeof validation.messageExpression === 'string' && validation.messageExpression !== '') {
            try {
              const m = evaluate(validation.messageExpression, bindings);
              if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
            } catch (err) {
              if (!(err instanceof PolicyError)) throw err;
            }
          }
          fail(message, typeof validation.reason === 'string' ? validation.reason : 'Invalid');
        }
      } catch (err) {
        if (err instanceof CelCostExceeded) {
          if (spec.failurePolicy !== 'Ignore') fail('operation cancelled: actual cost limit exceeded', 'Invalid');
          continue;
        }
        if (!(err instanceof PolicyError)) throw err;
        if (spec.failurePolicy !== 'Ignore') fail(err.message, 'Invalid');
      }
    }
  }
}
