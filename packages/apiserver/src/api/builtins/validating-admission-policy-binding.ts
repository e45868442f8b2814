/** The built-in ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1): which policy, where, with which params and actions. */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../base/errors.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import type { ResourceType } from '../registry.js';
import { builtin } from './builtin.js';
import { defaultMatchResources, matchResourcesCauses } from './admission-policy-rules.js';

const ACTIONS = ['Audit', 'Deny', 'Warn'];
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

function specCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  if (typeof spec.policyName !== 'string' || spec.policyName === '') causes.push(fieldRequired('spec.policyName', ''));
  const actions = list(spec.validationActions);
  if (actions.length === 0) causes.push(fieldRequired('spec.validationActions', 'at least one validation action is required'));
  actions.forEach((a, i) => {
    if (typeof a !== 'string' || !ACTIONS.includes(a)) causes.push(fieldNotSupported(`spec.validationActions[${i}]`, a, ACTIONS));
  });
  if (actions.includes('Deny') && actions.includes('Warn'))
    causes.push(
      fieldInvalid(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (spec.paramRef !== undefined && spec.paramRef !== null) {
    const ref = isJsonObject(spec.paramRef) ? spec.paramRef : {};
    const hasName = typeof ref.name === 'string' && ref.name !== '';
    if (hasName === isJsonObject(ref.selector)) causes.push(fieldRequired('spec.paramRef', 'one of name or selector must be specified'));
    if (!['Allow', 'Deny'].includes(String(ref.parameterNotFoundAction)))
      causes.push(fieldNotSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction ?? '', ['Allow', 'Deny']));
  }
  causes.push(...matchResourcesCauses('spec.matchResources', spec.matchResources, false));
  return causes;
}

export function validatingAdmissionPolicyBindingType(): ResourceType {
  return builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicybindings',
    kind: 'ValidatingAdmissionPolicyBinding',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: {
      defaults(obj) {
        if (isJsonObject(obj.spec)) defaultMatchResources(obj.spec.matchResources);
      },
      validate: (obj) => specCauses(isJsonObject(obj.spec) ? obj.spec : {}),
    },
  });
}
