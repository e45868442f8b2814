/**
 * The RBAC an operator needs, derived from what its controllers were registered with: what
 * `operatorManifests` writes into the (Cluster)Role and what the operator checks when it starts.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { resolveDescriptor, type ResolvedDescriptor } from '../kube/index.js';
import type { SecondaryWrite } from '../sources/index.js';
import type { ResolvedControllerConfig } from './config.js';

/** One RBAC rule, as Kubernetes writes it (`rbac.authorization.k8s.io/v1` PolicyRule). */
export interface PolicyRule {
  /** `''` is the core group. */
  readonly apiGroups: readonly string[];
  /** Plurals, `<plural>/<subresource>` for a subresource. */
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

const READ = ['get', 'list', 'watch'];
export const LEASES: PolicyRule = {
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  verbs: ['get', 'create', 'update', 'watch'],
};
/** SH1: a replica lists and watches its group's member Leases, creates and renews its own, and deletes it when it stops. */
export const MEMBER_LEASES: PolicyRule = {
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
};
export const EVENTS: PolicyRule = { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

/**
 * The verbs of a secondary's declared writes. A server-side apply is a PATCH that creates the
 * object when it does not exist, and Kubernetes authorizes that as `create` too; its reads (get)
 * the source grants anyway.
 */
const WRITE_VERBS: Readonly<Record<SecondaryWrite, { readonly verbs: readonly string[]; readonly subresource?: string }>> = {
  apply: { verbs: ['create', 'patch'] },
  create: { verbs: ['create'] },
  update: { verbs: ['update'] },
  patch: { verbs: ['patch'] },
  delete: { verbs: ['delete'] },
  status: { verbs: ['update', 'patch'], subresource: 'status' },
};

/** The traits of a workflow dependent that decide its verbs; only dependents with a Kubernetes `resource`. */
interface DependentTraits {
  readonly resource?: unknown;
  readonly create?: unknown;
  readonly update?: unknown;
  readonly delete?: unknown;
  readonly garbageCollected?: unknown;
}

/**
 * The RBAC rules of one controller: the primary (get, list, watch, patch; `/status` patch;
 * `/finalizers` update with a finalizer, which also lets dependents set `blockOwnerDeletion`),
 * every secondary's reads and its declared `writes` (`apply`: create and patch), and each
 * dependent's writes by its traits — `create` (server-side apply creates with a PATCH, which Kubernetes authorizes as create too), `update` (patch),
 * `delete` (for a garbage-collected dependent only when a reconcile precondition or an activation
 * condition can delete it while the primary stays).
 */
export function controllerRules(config: ResolvedControllerConfig<KubernetesObject>): PolicyRule[] {
  const verbs = new Map<string, Set<string>>();
  const add = (d: Pick<ResolvedDescriptor, 'group' | 'plural'>, subresource: string | undefined, ...vs: string[]) => {
    const key = `${d.group}\0${d.plural}${subresource === undefined ? '' : `/${subresource}`}`;
    const set = verbs.get(key) ?? new Set<string>();
    for (const v of vs) set.add(v);
    verbs.set(key, set);
  };
  const primary = config.descriptor;
  add(primary, undefined, ...READ, 'patch');
  add(primary, 'status', 'patch');
  if (config.usesFinalizer) add(primary, 'finalizers', 'update');
  for (const secondary of config.secondaries) {
    add(secondary.descriptor, undefined, ...READ);
    for (const write of secondary.writes ?? []) add(secondary.descriptor, WRITE_VERBS[write].subresource, ...WRITE_VERBS[write].verbs);
  }
  for (const node of config.workflow?.nodes ?? []) {
    const dependent = node.dependent as DependentTraits;
    if (dependent.resource === undefined) continue; // not a Kubernetes dependent
    const descriptor = resolveDescriptor(dependent.resource as Parameters<typeof resolveDescriptor>[0]);
    add(descriptor, undefined, ...READ);
    if (typeof dependent.create === 'function') add(descriptor, undefined, 'create', 'patch');
    if (typeof dependent.update === 'function') add(descriptor, undefined, 'patch');
    // A garbage-collected dependent is deleted by its owner reference, unless a condition can turn
    // it off while the primary stays (DR1).
    const conditional = node.conditions.reconcilePrecondition !== undefined || node.conditions.activationCondition !== undefined;
    if (typeof dependent.delete === 'function' && (dependent.garbageCollected !== true || conditional))
      add(descriptor, undefined, 'delete');
  }
  return [...verbs].map(([key, set]) => {
    const [group, resource] = key.split('\0') as [string, string];
    return { apiGroups: [group], resources: [resource], verbs: sortVerbs(set) };
  });
}

const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
function sortVerbs(verbs: Iterable<string>): string[] {
  return [...new Set(verbs)].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b));
}

/** Rules of several controllers as one list: one rule per resource, verbs merged, primaries first. */
export function mergeRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, { apiGroup: string; resource: string; verbs: Set<string> }>();
  for (const rule of rules) {
    for (const apiGroup of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = `${apiGroup}\0${resource}`;
        const entry = merged.get(key) ?? { apiGroup, resource, verbs: new Set<string>() };
        for (const verb of rule.verbs) entry.verbs.add(verb);
        merged.set(key, entry);
      }
    }
  }
  return [...merged.values()].map((e) => ({ apiGroups: [e.apiGroup], resources: [e.resource], verbs: sortVerbs(e.verbs) }));
}

/**
 * Where an operator's rules apply: at the cluster scope (a ClusterRole) when a controller watches
 * all namespaces or a cluster-scoped kind, else in each namespace its controllers watch (Roles).
 */
export function rbacScope(controllers: readonly ResolvedControllerConfig<KubernetesObject>[]): {
  readonly clusterWide: boolean;
  readonly namespaces: readonly string[];
} {
  const clusterWide = controllers.some(
    (c) =>
      c.namespaces === 'all' || !c.descriptor.namespaced || c.secondaries.some((s) => s.namespaces === 'all' || !s.descriptor.namespaced),
  );
  const namespaces = [
    ...new Set(
      controllers.flatMap((c) => [
        ...(c.namespaces === 'all' ? [] : c.namespaces),
        ...c.secondaries.flatMap((s) => (s.namespaces === undefined || s.namespaces === 'all' ? [] : s.namespaces)),
      ]),
    ),
  ].sort();
  return { clusterWide, namespaces };
}
