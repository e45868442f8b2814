/**
 * RBAC proven against what an operator did: the requests it made (the embedded server's request
 * log) compared with the rules it was given — every request covered, every rule used.
 */
import type { RequestDescription } from '@rxkube/apiserver';
import type { PolicyRule } from '../../index.js';

/** What `rbacUsage` found: requests the rules do not allow, and verbs no request used. */
export interface RbacUsage {
  /** Requests no rule allows, as `verb resource[.group][/subresource] in <namespace>` (a 403 under these rules). */
  readonly uncovered: readonly string[];
  /** Verbs of a rule no request used, as `verb resource[.group][/subresource]`. */
  readonly unused: readonly string[];
}

const label = (group: string, resource: string, verb: string) =>
  `${verb} ${group === '' ? resource : resource.replace(/^([^/]+)/, `$1.${group}`)}`;
const resourceOf = (r: RequestDescription) => (r.subresource === undefined ? r.resource : `${r.resource}/${r.subresource}`);
const allows = (rule: PolicyRule, r: RequestDescription, verb = r.verb) =>
  (rule.apiGroups.includes('*') || rule.apiGroups.includes(r.group)) &&
  (rule.resources.includes('*') || rule.resources.includes(resourceOf(r))) &&
  (rule.verbs.includes('*') || rule.verbs.includes(verb));

/** Options of `rbacUsage`. */
export interface RbacUsageOptions {
  /**
   * Only the requests with this User-Agent (a string: exactly; a RegExp: matching), e.g. the
   * operator's own, `operator.client.userAgent` (`rxkube/<version> (<name>)`): the test's
   * requests are not the operator's.
   */
  readonly userAgent?: string | RegExp | undefined;
}

/** Requests every authenticated user may make (the default `system:basic-user` ClusterRole): no Role needs them. */
const SELF_REVIEWS = new Set(['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews']);

/**
 * Compares `rules` with `requests`: the embedded server's request log as it gives it,
 * `server.requests.entries()`, or the requests themselves; `options.userAgent` keeps only the
 * operator's. Two verbs have no request of their own: `create` counts as used by a `patch` of
 * the resource (a server-side apply creates with PATCH, and Kubernetes authorizes that as create),
 * and `update` of `<resource>/finalizers` is never asked for directly (Kubernetes checks it when a
 * write sets `blockOwnerDeletion` on an owner reference), so it counts as used when the primary is
 * patched. The self reviews (an operator's start-up RBAC check) are every user's and never uncovered.
 */
export function rbacUsage(
  rules: readonly PolicyRule[],
  log: Iterable<RequestDescription | { readonly request: RequestDescription }>,
  options: RbacUsageOptions = {},
): RbacUsage {
  const { userAgent } = options;
  const requests = [...log]
    .map((entry) => ('request' in entry ? entry.request : entry))
    .filter(
      (r) => userAgent === undefined || (typeof userAgent === 'string' ? r.userAgent === userAgent : userAgent.test(r.userAgent ?? '')),
    )
    .filter((r) => !(r.group === 'authorization.k8s.io' || r.group === 'authentication.k8s.io') || !SELF_REVIEWS.has(r.resource));
  const uncovered = new Set<string>();
  for (const r of requests) {
    if (!rules.some((rule) => allows(rule, r))) uncovered.add(`${label(r.group, resourceOf(r), r.verb)} in ${r.namespace ?? '(cluster)'}`);
  }
  const unused: string[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const [plural, subresource] = resource.split('/') as [string, string | undefined];
        const on = (r: RequestDescription, verb: string, sub = subresource) =>
          r.group === group && r.resource === plural && r.subresource === sub && r.verb === verb;
        for (const verb of rule.verbs) {
          const used =
            requests.some((r) => on(r, verb)) ||
            (verb === 'create' && requests.some((r) => on(r, 'patch'))) ||
            (verb === 'update' && subresource === 'finalizers' && requests.some((r) => on(r, 'patch', undefined)));
          if (!used) unused.push(label(group, resource, verb));
        }
      }
    }
  }
  return { uncovered: [...uncovered].sort(), unused };
}
