/**
 * The built-in ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, as in Kubernetes
 * 1.30+): defaults, and validation that compiles its CEL so a policy that cannot run is refused.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldNotSupported, fieldRequired } from '../../base/errors.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import type { ResourceType } from '../registry.js';
import { builtin } from './builtin.js';
import { setDefault } from './defaults.js';
import { defaultMatchResources, expressionCauses, matchResourcesCauses, namedExpressionsCauses } from './admission-policy-rules.js';

const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

function specCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const validations = list(spec.validations);
  if (validations.length === 0 && list(spec.auditAnnotations).length === 0) {
    causes.push(fieldRequired('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  }
  validations.forEach((v, i) => {
    const at = `spec.validations[${i}]`;
    const o: JsonObject = isJsonObject(v) ? v : {};
    causes.push(...expressionCauses(`${at}.expression`, o.expression));
    causes.push(...expressionCauses(`${at}.messageExpression`, o.messageExpression, false));
    if (o.reason !== undefined && !REASONS.includes(String(o.reason))) causes.push(fieldNotSupported(`${at}.reason`, o.reason, REASONS));
  });
  causes.push(...matchResourcesCauses('spec.matchConstraints', spec.matchConstraints, true));
  causes.push(...namedExpressionsCauses('spec.matchConditions', spec.matchConditions));
  causes.push(...namedExpressionsCauses('spec.variables', spec.variables));
  if (!['Fail', 'Ignore'].includes(String(spec.failurePolicy)))
    causes.push(fieldNotSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.paramKind !== undefined && spec.paramKind !== null) {
    const pk = isJsonObject(spec.paramKind) ? spec.paramKind : {};
    if (typeof pk.apiVersion !== 'string' || pk.apiVersion === '') causes.push(fieldRequired('spec.paramKind.apiVersion', ''));
    if (typeof pk.kind !== 'string' || pk.kind === '') causes.push(fieldRequired('spec.paramKind.kind', ''));
  }
  return causes;
}

export function validatingAdmissionPolicyType(): ResourceType {
  return builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicies',
    kind: 'ValidatingAdmissionPolicy',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    status: true,
    strategy: {
      defaults(obj) {
        if (!isJsonObject(obj.spec)) return;
        setDefault(obj.spec, 'failurePolicy', 'Fail');
        defaultMatchResources(obj.spec.matchConstraints);
      },
      validate: (obj) => specCauses(isJsonObject(obj.spec) ? obj.spec : {}),
    },
  });
}
