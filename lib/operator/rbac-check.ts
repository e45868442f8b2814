/**
 * The operator's own RBAC, checked when it starts: one SelfSubjectAccessReview per verb of every
 * rule its controllers need (what `operatorManifests` grants them), in each namespace it works in.
 * What it may not do is logged as a warning naming the resource, the verb and the rule to add, and
 * fails the `rbac` readiness check until a later check finds it granted.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/index.js';
import type { HealthCheckResult, Logger } from '../observe/index.js';
import {
  controllerRules,
  EVENTS,
  LEASES,
  mergeRules,
  rbacScope,
  type PolicyRule,
  type ResolvedControllerConfig,
} from '../controller/index.js';

/** One thing the operator must be allowed to do: a verb on a resource, in a namespace ('' is the cluster scope). */
export interface RbacNeed {
  readonly group: string;
  /** A plural, `<plural>/<subresource>` for a subresource. */
  readonly resource: string;
  readonly verb: string;
  readonly namespace: string;
}

/** What the check needs to know of the operator: its controllers and where its leader Lease lives. */
export interface RbacNeedsOf {
  readonly controllers: readonly ResolvedControllerConfig<KubernetesObject>[];
  readonly leaseNamespace?: string | undefined;
}

/**
 * What the operator needs, as the generated manifests grant it: the rules of every controller and
 * the Events, at the cluster scope when a controller watches all namespaces or a cluster-scoped
 * kind (a ClusterRole), else in each watched namespace (Roles); the leader Lease in its namespace.
 */
export function rbacNeeds({ controllers, leaseNamespace }: RbacNeedsOf): RbacNeed[] {
  const rules = mergeRules([...controllers.flatMap(controllerRules), EVENTS]);
  const scope = rbacScope(controllers);
  const watched = scope.clusterWide ? [''] : scope.namespaces;
  const needs = (rule: PolicyRule, namespaces: readonly string[]) =>
    namespaces.flatMap((namespace) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.flatMap((resource) => rule.verbs.map((verb) => ({ group, resource, verb, namespace }))),
      ),
    );
  return [...rules.flatMap((rule) => needs(rule, watched)), ...(leaseNamespace === undefined ? [] : needs(LEASES, [leaseNamespace]))];
}

const SSAR = {
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SelfSubjectAccessReview',
  plural: 'selfsubjectaccessreviews',
  namespaced: false,
} as const;
/** Reviews in flight at once: a few dozen in all, without a burst on the API server. */
const CONCURRENCY = 8;
/** While something is missing, readiness asks again at most this often (a binding applied after the operator started). */
const RECHECK_MS = 30_000;

interface AccessReview extends KubernetesObject {
  spec?: { resourceAttributes?: Record<string, string> };
  status?: { allowed?: boolean; reason?: string };
}

/** The rule that grants `need`, as it goes into a Role's `rules`. */
function ruleFor(need: RbacNeed): PolicyRule {
  return { apiGroups: [need.group], resources: [need.resource], verbs: [need.verb] };
}

/**
 * Checks `needs` with SelfSubjectAccessReviews. Not a failure of the start: controller-runtime
 * does not check at all, an authorizer other than RBAC may answer differently from a review, and
 * a binding may be applied just after the operator; a pod that fails to start would bury the
 * message in restarts. So it warns, once per missing verb, and keeps /readyz failing, naming each
 * missing rule, until a later check finds it granted.
 */
export class RbacCheck {
  private missing: readonly RbacNeed[] = [];
  private checkedAt = 0;
  private running: Promise<void> | undefined;
  private readonly warned = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly needs: readonly RbacNeed[],
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reviews every need (never throws: a review that fails is logged, and counts as allowed). */
  async run(): Promise<readonly RbacNeed[]> {
    await this.review(this.needs);
    return this.missing;
  }

  /** /readyz: ok when nothing is missing; asks again for what was missing, at most every 30 s. */
  async readiness(): Promise<HealthCheckResult> {
    if (this.missing.length > 0 && this.now() - this.checkedAt >= RECHECK_MS) await this.review(this.missing);
    if (this.missing.length === 0) return { ok: true };
    return { ok: false, reason: `RBAC: ${this.missing.map(describeNeed).join('; ')}` };
  }

  private review(needs: readonly RbacNeed[]): Promise<void> {
    this.running ??= this.reviewAll(needs).finally(() => (this.running = undefined));
    return this.running;
  }

  private async reviewAll(needs: readonly RbacNeed[]): Promise<void> {
    const reviews = this.client.resource<AccessReview>(SSAR);
    const denied: RbacNeed[] = [];
    let failure: unknown;
    const queue = [...needs];
    const worker = async () => {
      for (let need = queue.shift(); need !== undefined; need = queue.shift()) {
        const [resource, subresource] = need.resource.split('/') as [string, string | undefined];
        const attributes = {
          verb: need.verb,
          group: need.group,
          resource,
          ...(subresource === undefined ? {} : { subresource }),
          ...(need.namespace === '' ? {} : { namespace: need.namespace }),
        };
        try {
          const answer = await reviews.create({ apiVersion: SSAR.apiVersion, kind: SSAR.kind, spec: { resourceAttributes: attributes } });
          if (answer.status?.allowed !== true) denied.push(need);
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, needs.length) }, worker));
    this.checkedAt = this.now();
    if (failure !== undefined)
      this.logger.warn({ err: failure }, "could not check the operator's RBAC with SelfSubjectAccessReviews; going on unchecked");
    const stillMissing = new Set(denied.map(keyOf));
    const checked = new Set(needs.map(keyOf));
    this.missing = [...this.missing.filter((n) => !checked.has(keyOf(n))), ...denied];
    for (const need of denied) {
      if (this.warned.has(keyOf(need))) continue;
      this.warned.add(keyOf(need));
      this.logger.warn({ rbac: { ...need, rule: ruleFor(need) } }, `RBAC: ${describeNeed(need)}`);
    }
    for (const need of needs)
      if (!stillMissing.has(keyOf(need)) && this.warned.delete(keyOf(need)))
        this.logger.info({ rbac: need }, `RBAC: now allowed to ${need.verb} ${need.resource}`);
  }
}

const keyOf = (n: RbacNeed) => `${n.verb} ${n.group} ${n.resource} ${n.namespace}`;

/** `cannot patch resource "configmaps" in API group "" in the namespace "default": add the rule {...}` */
function describeNeed(need: RbacNeed): string {
  const scope = need.namespace === '' ? 'at the cluster scope' : `in the namespace "${need.namespace}"`;
  const rule = ruleFor(need);
  return `cannot ${need.verb} resource "${need.resource}" in API group "${need.group}" ${scope}: add the rule { apiGroups: ['${rule.apiGroups[0]}'], resources: ['${rule.resources[0]}'], verbs: ['${need.verb}'] } to the operator's ${need.namespace === '' ? 'ClusterRole' : 'Role'}`;
}
