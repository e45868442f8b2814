/**
 * The ClusterRole aggregation controller: a ClusterRole with an `aggregationRule` has as rules the
 * rules of every other ClusterRole its selectors match (in name order, without repeats), kept up
 * to date as those change, like the real clusterrole-aggregation controller.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { labelSelectorFromObject, matchesLabelSelector, SelectorError } from '../grammar/label-selector.js';
import { labelsOf, nameOf } from '../base/meta.js';
import type { Store } from '../storage/store.js';
import { WorkQueue } from '../base/work-queue.js';
import { CLUSTER_ROLES_KEY } from './rbac.js';

function selectorsOf(role: JsonObject): JsonValue[] | undefined {
  const rule = role.aggregationRule;
  return isJsonObject(rule) && Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : undefined;
}

function matchesAny(selectors: JsonValue[], labels: Record<string, string>): boolean {
  return selectors.some((s) => {
    if (!isJsonObject(s)) return false;
    try {
      const parsed = labelSelectorFromObject(s);
      return parsed.requirements.length > 0 && matchesLabelSelector(parsed, labels);
    } catch (err) {
      if (err instanceof SelectorError) return false;
      throw err;
    }
  });
}

/**
 * The rules an aggregating ClusterRole gets from `roles` (all ClusterRoles): those of the others
 * its selectors match, in name order, without repeats; undefined for a role without aggregationRule.
 */
export function aggregatedRules(role: JsonObject, roles: readonly JsonObject[]): JsonValue[] | undefined {
  const selectors = selectorsOf(role);
  if (!selectors) return undefined;
  const rules: JsonValue[] = [];
  const sources = roles
    .filter((r) => nameOf(r) !== nameOf(role) && matchesAny(selectors, labelsOf(r)))
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  for (const source of sources) {
    for (const r of Array.isArray(source.rules) ? source.rules : []) if (!rules.some((x) => deepEqual(x, r))) rules.push(r);
  }
  return rules;
}

export class ClusterRoleAggregator {
  private readonly queue = new WorkQueue('clusterrole aggregation controller', (name) => this.aggregate(name));
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
  ) {
    this.unsubscribe = store.onEvent((e) => {
      if (e.resource === CLUSTER_ROLES_KEY) this.enqueueAll();
    });
  }

  /** Aggregates every aggregating ClusterRole now (at start, so the defaults are ready at once). */
  syncAll(): void {
    for (const role of this.store.list(CLUSTER_ROLES_KEY)) if (selectorsOf(role)) this.aggregate(nameOf(role));
  }

  private enqueueAll(): void {
    for (const role of this.store.list(CLUSTER_ROLES_KEY)) if (selectorsOf(role)) this.queue.add(nameOf(role));
  }

  private aggregate(name: string): void {
    const role = this.store.get(CLUSTER_ROLES_KEY, '', name);
    const rules = role && aggregatedRules(role, this.store.list(CLUSTER_ROLES_KEY));
    if (!role || !rules || deepEqual(role.rules ?? [], rules)) return;
    this.writes.mutate(
      CLUSTER_ROLES_KEY,
      '',
      name,
      (obj) => {
        obj.rules = rules;
      },
      { manager: 'clusterrole-aggregation-controller' },
    );
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}
