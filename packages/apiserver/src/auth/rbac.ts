/**
 * The RBAC authorizer, after the real one (plugin/pkg/auth/authorizer/rbac): a request is allowed
 * when a rule of a role bound to the user matches it. ClusterRoleBindings apply everywhere,
 * RoleBindings in their namespace; a binding names a Role (its namespace) or a ClusterRole.
 * Members of system:masters are allowed everything, as the real server's privileged group.
 */
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import type { Store } from '../storage/store.js';
import type { UserInfo } from './user.js';
import { SYSTEM_MASTERS, serviceAccountUsername } from './user.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const ROLES_KEY = `${RBAC_GROUP}/roles`;
export const CLUSTER_ROLES_KEY = `${RBAC_GROUP}/clusterroles`;
export const ROLE_BINDINGS_KEY = `${RBAC_GROUP}/rolebindings`;
export const CLUSTER_ROLE_BINDINGS_KEY = `${RBAC_GROUP}/clusterrolebindings`;

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** What a request asks to do (the real server's authorizer.Attributes). */
export type Attributes =
  | {
      kind: 'resource';
      verb: string;
      group: string;
      resource: string;
      subresource?: string;
      /** '' for cluster scope (and lists across namespaces). */
      namespace: string;
      name?: string;
    }
  | { kind: 'path'; verb: string; path: string };

/** Every right: what system:masters holds, and what setting an aggregationRule needs. */
export const FULL_AUTHORITY: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** A role a binding names that does not exist, met while visiting a user's bindings. */
export interface MissingRole {
  kind: string;
  name: string;
}

/** How the authorizer (reading through listers) names a missing role: `role.rbac.authorization.k8s.io "x" not found`. */
const listerNotFound = (m: MissingRole): string => `${m.kind.toLowerCase()}.${RBAC_GROUP} ${JSON.stringify(m.name)} not found`;

export interface Decision {
  allowed: boolean;
  /** Why (allowed by which binding), or the errors met while looking (a missing role). */
  reason: string;
}

const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function policyRules(v: JsonValue | undefined): PolicyRule[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isJsonObject).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  }));
}

const has = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((x) => x === '*' || x === value);

/** rbac helpers' ResourceMatches: `*`, the resource (with `/subresource`), or `*\/subresource`. */
function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (subresource !== undefined && r === `*/${subresource}`));
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (attrs.kind === 'path') return nonResourceURLMatches(rule, attrs.path);
  if (!has(rule.apiGroups, attrs.group) || !resourceMatches(rule, attrs.resource, attrs.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && names.includes(attrs.name));
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

function subjectsOf(binding: JsonObject): Subject[] {
  return (Array.isArray(binding.subjects) ? binding.subjects : []).filter(isJsonObject).map((s) => ({
    kind: String(s.kind ?? ''),
    name: String(s.name ?? ''),
    namespace: typeof s.namespace === 'string' && s.namespace !== '' ? s.namespace : undefined,
  }));
}

/** The subject of `binding` (in `bindingNamespace`, '' for a ClusterRoleBinding) that names `user`. */
function subjectFor(user: UserInfo, binding: JsonObject, bindingNamespace: string): Subject | undefined {
  return subjectsOf(binding).find((s) => {
    if (s.kind === 'User') return s.name === user.username;
    if (s.kind === 'Group') return user.groups.includes(s.name);
    if (s.kind === 'ServiceAccount') {
      const ns = s.namespace ?? bindingNamespace;
      return ns !== '' && serviceAccountUsername(ns, s.name) === user.username;
    }
    return false;
  });
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace ?? bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function metaString(obj: JsonObject, key: 'name' | 'namespace'): string {
  const meta = obj.metadata;
  return isJsonObject(meta) && typeof meta[key] === 'string' ? meta[key] : '';
}

/** A rule source met while visiting the bindings of a user, with a description for reasons. */
interface Visit {
  rules: PolicyRule[];
  source: string;
}

export class RbacAuthorizer {
  constructor(private readonly store: Store) {}

  authorize(user: UserInfo, attrs: Attributes): Decision {
    if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: '' };
    const missing: MissingRole[] = [];
    for (const visit of this.visits(user, attrs.kind === 'resource' ? attrs.namespace : '', missing)) {
      if (visit.rules.some((r) => ruleAllows(attrs, r))) return { allowed: true, reason: `RBAC: allowed by ${visit.source}` };
    }
    const errors = missing.map(listerNotFound);
    return { allowed: false, reason: errors.length ? `RBAC: ${errors.length > 1 ? `[${errors.join(', ')}]` : errors[0]}` : '' };
  }

  /**
   * The rules that apply to `user` in `namespace` (SelfSubjectRulesReview, escalation checks),
   * the errors met in the authorizer's words, and the missing roles behind them.
   */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[]; missing: MissingRole[] } {
    if (user.groups.includes(SYSTEM_MASTERS)) return { rules: [...FULL_AUTHORITY], errors: [], missing: [] };
    const missing: MissingRole[] = [];
    const rules = [...this.visits(user, namespace, missing)].flatMap((v) => v.rules);
    return { rules, errors: missing.map(listerNotFound), missing };
  }

  /** The rules of the role a binding in `namespace` ('' for a ClusterRoleBinding) refers to; undefined when it does not exist. */
  roleReferenceRules(ref: { kind: string; name: string }, namespace: string): PolicyRule[] | undefined {
    const role =
      ref.kind === 'Role'
        ? this.store.get(ROLES_KEY, namespace, ref.name)
        : ref.kind === 'ClusterRole'
          ? this.store.get(CLUSTER_ROLES_KEY, '', ref.name)
          : undefined;
    return role && policyRules(role.rules);
  }

  /** ClusterRoleBindings first, then (in a namespace) its RoleBindings, like the real visitor. */
  private *visits(user: UserInfo, namespace: string, missing: MissingRole[]): Generator<Visit> {
    for (const binding of this.store.list(CLUSTER_ROLE_BINDINGS_KEY)) {
      const subject = subjectFor(user, binding, '');
      if (!subject) continue;
      const ref = roleRefOf(binding);
      if (ref.kind !== 'ClusterRole') continue;
      const rules = this.roleReferenceRules(ref, '');
      if (!rules) {
        missing.push(ref);
        continue;
      }
      yield {
        rules,
        source: `ClusterRoleBinding ${JSON.stringify(metaString(binding, 'name'))} of ClusterRole ${JSON.stringify(ref.name)} to ${describeSubject(subject, '')}`,
      };
    }
    if (namespace === '') return;
    for (const binding of this.store.list(ROLE_BINDINGS_KEY, namespace)) {
      const subject = subjectFor(user, binding, namespace);
      if (!subject) continue;
      const ref = roleRefOf(binding);
      const rules = this.roleReferenceRules(ref, namespace);
      if (!rules) {
        missing.push(ref);
        continue;
      }
      yield {
        rules,
        source: `RoleBinding ${JSON.stringify(`${metaString(binding, 'name')}/${namespace}`)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, namespace)}`,
      };
    }
  }
}

export function roleRefOf(binding: JsonObject): { kind: string; name: string; apiGroup: string } {
  const ref = isJsonObject(binding.roleRef) ? binding.roleRef : {};
  return { kind: String(ref.kind ?? ''), name: String(ref.name ?? ''), apiGroup: String(ref.apiGroup ?? '') };
}
