/**
 * RBAC escalation prevention, after the real server's policy-based storage of the RBAC kinds
 * (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased and
 * pkg/registry/rbac/validation): a user may write a Role or ClusterRole only with rules it already
 * holds (or the `escalate` verb on it), and a binding only to a role whose rules it already holds
 * (or the `bind` verb on that role). system:masters is never checked.
 */
import { ApiError, forbidden, notFound } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { nameOf } from '../base/meta.js';
import type { MissingRole, PolicyRule, RbacAuthorizer } from './rbac.js';
import { FULL_AUTHORITY, policyRules, RBAC_GROUP, roleRefOf } from './rbac.js';
import type { UserInfo } from './user.js';
import { SYSTEM_MASTERS } from './user.js';

/** A check of an object about to be written (`old`: the stored one, on update); throws to refuse the write. */
export type WriteCheck = (obj: JsonObject, old: JsonObject | undefined) => void;

/** The write a check is for: what the request's path names. */
export interface RbacWrite {
  group: string;
  resource: string;
  /** '' for cluster scope. */
  namespace: string;
  /** Absent on create (POST). */
  name?: string;
}

const has = (set: readonly string[] | undefined, value: string): boolean => (set ?? []).includes(value);
const hasAll = (set: readonly string[] | undefined, values: readonly string[] | undefined): boolean =>
  (values ?? []).every((v) => has(set, v));

/**
 * BreakdownRule: one rule per group, resource, verb and resource name (or per URL and verb), one at
 * a time: their number is the product of the rule's lists, millions for a rule of a few kilobytes.
 */
function* breakdownRule(rule: PolicyRule): Generator<PolicyRule> {
  const names = rule.resourceNames ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        if (names.length === 0) yield { apiGroups: [group], resources: [resource], verbs: [verb] };
        for (const name of names) yield { apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] };
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) yield { nonResourceURLs: [url], verbs: [verb] };
}

/** resourceCoversAll: `*`, the resources themselves, or `*\/sub` for a subresource. */
function resourcesCover(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  return (wanted ?? []).every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
}

const urlCovers = (owner: string, path: string): boolean =>
  owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')));

/** ruleCovers: whether `owner` allows everything the broken-down `sub` allows. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const urls = (sub.nonResourceURLs ?? []).every((path) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, path)));
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const names = ownerNames.length === 0 || (subNames.length > 0 && hasAll(ownerNames, subNames));
  return verbs && groups && resourcesCover(owner.resources, sub.resources) && names && urls;
}

/**
 * Covers: the broken-down rules of `servant` that no rule of `owner` covers (none: covered), the
 * first `limit` of them. A servant rule one owner rule covers whole is not broken down (each of its
 * pieces is covered by that rule), so a wide rule its author holds costs one comparison per owner rule.
 */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[], limit = Infinity): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of servant) {
    if (owner.some((o) => ruleCovers(o, rule))) continue;
    for (const sub of breakdownRule(rule)) {
      if (owner.some((o) => ruleCovers(o, sub))) continue;
      if (out.length >= limit) return out;
      out.push(sub);
    }
  }
  return out;
}

/** The most rules a refusal names (the real server names all: a hostile rule would make a message of megabytes). */
const MAX_NAMED_RULES = 100;

/** CompactRules: rules of one group and one resource (no names, no URLs) merged by their verbs. */
function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple =
      !rule.resourceNames?.length && !rule.nonResourceURLs?.length && rule.apiGroups?.length === 1 && rule.resources?.length === 1;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups, rule.resources]);
    const existing = simple.get(key);
    if (existing) existing.verbs.push(...rule.verbs);
    else simple.set(key, { apiGroups: rule.apiGroups, resources: rule.resources, verbs: [...rule.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
const goQuoted = (list: readonly string[]): string => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${goQuoted(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${goQuoted(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoted(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${goQuoted(rule.resourceNames)}`);
  if (rule.verbs.length) parts.push(`Verbs:${goQuoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** How the registry's rule resolver names a missing role: `clusterroles.rbac.authorization.k8s.io "x" not found`. */
const registryNotFound = (m: MissingRole): string => `${m.kind.toLowerCase()}s.${RBAC_GROUP} ${JSON.stringify(m.name)} not found`;

/** utilerrors.Aggregate's text: one message as is, several (without repeats) in brackets. */
function aggregateText(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

/**
 * ConfirmNoEscalation: why `user` may not grant `rules` in `namespace` (the rules it lacks, in the
 * real server's words), or undefined when it holds them all.
 */
export function escalationReason(
  authorizer: RbacAuthorizer,
  user: UserInfo,
  namespace: string,
  rules: readonly PolicyRule[],
): string | undefined {
  const held = authorizer.rulesFor(user, namespace);
  const missing = uncoveredRules(held.rules, rules, MAX_NAMED_RULES + 1);
  if (missing.length === 0) return undefined;
  const more = missing.length > MAX_NAMED_RULES ? '\n(and more, not listed)' : '';
  const described = [...new Set(compactRules(missing.slice(0, MAX_NAMED_RULES)).map(compactString))].sort();
  const why = `user ${JSON.stringify(user.username)} (groups=${goQuoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${described.join('\n')}${more}`;
  return held.missing.length ? `${why}; resolution errors: [${aggregateText(held.missing.map(registryNotFound))}]` : why;
}

/** IsOnlyMutatingGCFields: an update that changes only owner references and finalizers is never checked. */
function onlyGcFieldsChange(obj: JsonObject, old: JsonObject): boolean {
  const rest = (o: JsonObject): JsonObject => {
    const meta = isJsonObject(o.metadata) ? { ...o.metadata } : {};
    for (const key of ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion']) delete meta[key];
    return { ...o, metadata: meta };
  };
  return deepEqual(rest(obj), rest(old));
}

const hasAggregationRule = (role: JsonObject | undefined): boolean => {
  const rule = role?.aggregationRule;
  return isJsonObject(rule) && Array.isArray(rule.clusterRoleSelectors) && rule.clusterRoleSelectors.length > 0;
};

const ROLE_KINDS: Record<string, string> = { roles: 'Role', clusterroles: 'ClusterRole' };
const BINDING_KINDS = new Set(['rolebindings', 'clusterrolebindings']);

/**
 * The escalation check for a write of `user` to an RBAC kind; undefined when there is nothing to
 * check (another kind, system:masters, or the `escalate` verb on the role written).
 */
export function escalationCheck(authorizer: RbacAuthorizer, user: UserInfo, write: RbacWrite): WriteCheck | undefined {
  if (write.group !== RBAC_GROUP || user.groups.includes(SYSTEM_MASTERS)) return undefined;
  const gr = { group: RBAC_GROUP, plural: write.resource };
  const refuse = (obj: JsonObject, why: string): ApiError => forbidden(gr, nameOf(obj), why);
  const confirm = (obj: JsonObject, rules: readonly PolicyRule[]): void => {
    const why = escalationReason(authorizer, user, write.namespace, rules);
    if (why !== undefined) throw refuse(obj, why);
  };

  if (ROLE_KINDS[write.resource]) {
    // RoleEscalationAuthorized: `escalate` on the role (by name only where the path names it).
    const escalate = authorizer.authorize(user, {
      kind: 'resource',
      verb: 'escalate',
      group: write.group,
      resource: write.resource,
      namespace: write.namespace,
      name: write.name,
    });
    if (escalate.allowed) return undefined;
    return (obj, old) => {
      if (old && onlyGcFieldsChange(obj, old)) return;
      confirm(obj, policyRules(obj.rules));
      // An aggregationRule can gather anything (and keeps a role from being tightened): it takes every right.
      if (write.resource === 'clusterroles' && (hasAggregationRule(obj) || hasAggregationRule(old))) {
        if (escalationReason(authorizer, user, write.namespace, FULL_AUTHORITY) !== undefined)
          throw refuse(obj, 'must have cluster-admin privileges to use the aggregationRule');
      }
    };
  }
  if (!BINDING_KINDS.has(write.resource)) return undefined;
  return (obj, old) => {
    if (old && onlyGcFieldsChange(obj, old)) return;
    const ref = roleRefOf(obj);
    const plural = ref.kind === 'Role' ? 'roles' : ref.kind === 'ClusterRole' ? 'clusterroles' : undefined;
    if (plural === undefined) return; // validation refuses the kind
    // BindingAuthorized: `bind` on the role, checked in the binding's namespace.
    const bind = authorizer.authorize(user, {
      kind: 'resource',
      verb: 'bind',
      group: ref.apiGroup,
      resource: plural,
      namespace: write.namespace,
      name: ref.name,
    });
    if (bind.allowed) return;
    const rules = authorizer.roleReferenceRules(ref, write.namespace);
    if (!rules) throw notFound({ group: RBAC_GROUP, plural }, ref.name);
    confirm(obj, rules);
  };
}
