/**
 * The types auth/ serves: rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding, with the real server's defaulting and validation (pkg/apis/rbac/validation),
 * and the review kinds that are answered, never stored (SelfSubjectAccessReview,
 * SelfSubjectRulesReview, SubjectAccessReview, SelfSubjectReview).
 */
import type { StatusCause } from '../base/errors.js';
import { fieldInvalid, fieldRequired } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { builtin, column } from '../api/builtins/index.js';
import { readMeta } from '../base/meta.js';
import type { ResourceType, Strategy } from '../api/registry.js';
import { dns1123Subdomain, pathSegmentName } from '../api/validation.js';
import { RBAC_GROUP, roleRefOf } from './rbac.js';

function notSupported(field: string, value: JsonValue | undefined, supported: string[]): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(value ?? '')}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
    field,
  };
}

const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

function validateRule(rule: JsonValue, namespaced: boolean, at: string): StatusCause[] {
  if (!isJsonObject(rule)) return [fieldInvalid(at, rule, 'must be an object')];
  const causes: StatusCause[] = [];
  if (list(rule.verbs).length === 0) causes.push(fieldRequired(`${at}.verbs`, 'verbs must contain at least one value'));
  const urls = list(rule.nonResourceURLs);
  if (urls.length > 0) {
    if (namespaced) causes.push(fieldInvalid(`${at}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (list(rule.apiGroups).length || list(rule.resources).length || list(rule.resourceNames).length) {
      causes.push(fieldInvalid(`${at}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return causes;
  }
  if (list(rule.apiGroups).length === 0) causes.push(fieldRequired(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
  if (list(rule.resources).length === 0) causes.push(fieldRequired(`${at}.resources`, 'resource rules must supply at least one resource'));
  return causes;
}

function validateRules(obj: JsonObject, namespaced: boolean): StatusCause[] {
  return list(obj.rules).flatMap((r, i) => validateRule(r, namespaced, `rules[${i}]`));
}

function validateSubject(s: JsonValue, namespaced: boolean, at: string): StatusCause[] {
  if (!isJsonObject(s)) return [fieldInvalid(at, s, 'must be an object')];
  const causes: StatusCause[] = [];
  const name = typeof s.name === 'string' ? s.name : '';
  if (name === '') causes.push(fieldRequired(`${at}.name`, ''));
  const apiGroup = typeof s.apiGroup === 'string' ? s.apiGroup : '';
  switch (s.kind) {
    case 'ServiceAccount':
      if (name !== '') for (const e of dns1123Subdomain(name)) causes.push(fieldInvalid(`${at}.name`, name, e));
      if (apiGroup !== '') causes.push(notSupported(`${at}.apiGroup`, apiGroup, ['']));
      if (!namespaced && !(typeof s.namespace === 'string' && s.namespace !== '')) causes.push(fieldRequired(`${at}.namespace`, ''));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_GROUP) causes.push(notSupported(`${at}.apiGroup`, apiGroup, [RBAC_GROUP]));
      break;
    default:
      causes.push(notSupported(`${at}.kind`, s.kind, ['ServiceAccount', 'User', 'Group']));
  }
  return causes;
}

function validateBinding(obj: JsonObject, old: JsonObject | undefined, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const ref = roleRefOf(obj);
  if (ref.apiGroup !== RBAC_GROUP) causes.push(notSupported('roleRef.apiGroup', ref.apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind)) causes.push(notSupported('roleRef.kind', ref.kind, kinds));
  if (ref.name === '') causes.push(fieldRequired('roleRef.name', ''));
  else for (const e of pathSegmentName(ref.name)) causes.push(fieldInvalid('roleRef.name', ref.name, e));
  list(obj.subjects).forEach((s, i) => causes.push(...validateSubject(s, namespaced, `subjects[${i}]`)));
  if (old && !deepEqual(obj.roleRef ?? null, old.roleRef ?? null))
    causes.push(fieldInvalid('roleRef', obj.roleRef ?? null, 'cannot change roleRef'));
  return causes;
}

/** v1 defaulting: roleRef and User/Group subjects get the RBAC API group when it is left out. */
function defaultBinding(obj: JsonObject): void {
  if (isJsonObject(obj.roleRef) && (obj.roleRef.apiGroup === undefined || obj.roleRef.apiGroup === '')) obj.roleRef.apiGroup = RBAC_GROUP;
  for (const s of list(obj.subjects)) {
    if (isJsonObject(s) && (s.apiGroup === undefined || s.apiGroup === '') && (s.kind === 'User' || s.kind === 'Group'))
      s.apiGroup = RBAC_GROUP;
  }
}

const roleStrategy = (namespaced: boolean): Strategy => ({ validate: (obj) => validateRules(obj, namespaced) });
const bindingStrategy = (namespaced: boolean): Strategy => ({
  defaults: defaultBinding,
  validate: (obj, old) => validateBinding(obj, old, namespaced),
});

function subjectNames(obj: JsonObject, kind: string): string {
  const names = list(obj.subjects)
    .filter(isJsonObject)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name)}` : String(s.name)));
  return names.join(', ');
}

const createdAt = column('Created At', 'date', (o) => String(readMeta(o).creationTimestamp ?? ''));
const bindingColumns = [
  column('Role', 'string', (o) => `${roleRefOf(o).kind}/${roleRefOf(o).name}`),
  column('Users', 'string', (o) => subjectNames(o, 'User'), 1),
  column('Groups', 'string', (o) => subjectNames(o, 'Group'), 1),
  column('ServiceAccounts', 'string', (o) => subjectNames(o, 'ServiceAccount'), 1),
];

export function rbacTypes(): ResourceType[] {
  const rbac = { group: RBAC_GROUP, version: 'v1', nameRule: 'path' as const };
  return [
    builtin({ ...rbac, plural: 'roles', kind: 'Role', namespaced: true, strategy: roleStrategy(true), age: false, columns: [createdAt] }),
    builtin({
      ...rbac,
      plural: 'clusterroles',
      kind: 'ClusterRole',
      namespaced: false,
      strategy: roleStrategy(false),
      age: false,
      columns: [createdAt],
    }),
    builtin({
      ...rbac,
      plural: 'rolebindings',
      kind: 'RoleBinding',
      namespaced: true,
      strategy: bindingStrategy(true),
      columns: bindingColumns,
    }),
    builtin({
      ...rbac,
      plural: 'clusterrolebindings',
      kind: 'ClusterRoleBinding',
      namespaced: false,
      strategy: bindingStrategy(false),
      columns: bindingColumns,
    }),
  ];
}

/** Kinds that are only created, answered from the request and never stored (reviews). */
export const REVIEW_VERBS = ['create'] as const;

export function reviewTypes(): ResourceType[] {
  const review = (group: string, plural: string, kind: string, namespaced = false): ResourceType => ({
    ...builtin({ group, version: 'v1', plural, kind, namespaced }),
    verbs: REVIEW_VERBS,
  });
  return [
    review('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview'),
    review('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'),
    review('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview'),
    review('authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true),
    review('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview'),
  ];
}
