/**
 * The default ClusterRoles and ClusterRoleBindings the real server creates at start (bootstrap
 * policy), trimmed to the resources this server serves: cluster-admin for system:masters,
 * discovery, basic-user (the self reviews) and public-info for everyone, and the user-facing
 * admin / edit / view, aggregated from the `aggregate-to-*` roles like the real ones.
 */
import type { JsonObject } from '../base/json.js';
import { aggregatedRules } from './aggregation.js';
import type { PolicyRule } from './rbac.js';
import { RBAC_GROUP } from './rbac.js';
import { SYSTEM_AUTHENTICATED, SYSTEM_MASTERS, SYSTEM_UNAUTHENTICATED } from './user.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

const BOOTSTRAP_META = {
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
};

function clusterRole(
  name: string,
  rules: PolicyRule[],
  extra: { labels?: Record<string, string>; aggregateFrom?: string } = {},
): JsonObject {
  const role: JsonObject = {
    metadata: { name, labels: { ...BOOTSTRAP_META.labels, ...extra.labels }, annotations: { ...BOOTSTRAP_META.annotations } },
    rules: rules.map((r) => ({ ...r })),
  };
  if (extra.aggregateFrom) {
    role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/${extra.aggregateFrom}`]: 'true' } }] };
  }
  return role;
}

function binding(name: string, role: string, groups: string[]): JsonObject {
  return {
    metadata: { name, labels: { ...BOOTSTRAP_META.labels }, annotations: { ...BOOTSTRAP_META.annotations } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
  };
}

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });
const aggregateTo = (name: string): { labels: Record<string, string> } => ({
  labels: { [`rbac.authorization.k8s.io/aggregate-to-${name}`]: 'true' },
});

/** The default ClusterRoles, the aggregated ones already aggregated (so nothing is rewritten at start). */
export function bootstrapClusterRoles(): JsonObject[] {
  const roles = defaultClusterRoles();
  // view feeds edit feeds admin: three passes reach the fixed point.
  for (let pass = 0; pass < 3; pass++) {
    for (const role of roles) {
      const rules = aggregatedRules(role, roles);
      if (rules) role.rules = rules;
    }
  }
  return roles;
}

function defaultClusterRoles(): JsonObject[] {
  return [
    clusterRole('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    clusterRole('system:discovery', [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:public-info-viewer', [
      { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    ]),
    clusterRole('admin', [], { aggregateFrom: 'aggregate-to-admin' }),
    clusterRole('edit', [], { aggregateFrom: 'aggregate-to-edit', ...aggregateTo('admin') }),
    clusterRole('view', [], { aggregateFrom: 'aggregate-to-view', ...aggregateTo('edit') }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        rule([...READ, ...WRITE], [RBAC_GROUP], ['rolebindings', 'roles']),
        rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      ],
      aggregateTo('admin'),
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'pods', 'secrets', 'services', 'serviceaccounts']),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule([...READ], [''], ['secrets']),
        rule(
          WRITE,
          ['apps'],
          ['deployments', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'],
        ),
        rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
        rule(WRITE, ['networking.k8s.io'], ['ingresses']),
        rule(WRITE, ['coordination.k8s.io'], ['leases']),
      ],
      aggregateTo('edit'),
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(
          READ,
          [''],
          [
            'configmaps',
            'endpoints',
            'events',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'pods',
            'pods/status',
            'serviceaccounts',
            'services',
            'services/status',
          ],
        ),
        rule(READ, [''], ['namespaces', 'namespaces/status']),
        rule(READ, ['discovery.k8s.io'], ['endpointslices']),
        rule(
          READ,
          ['apps'],
          [
            'controllerrevisions',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'statefulsets',
            'statefulsets/scale',
            'statefulsets/status',
          ],
        ),
        rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
        rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status']),
        rule(READ, ['coordination.k8s.io'], ['leases']),
      ],
      aggregateTo('view'),
    ),
  ];
}

export function bootstrapClusterRoleBindings(): JsonObject[] {
  return [
    binding('cluster-admin', 'cluster-admin', [SYSTEM_MASTERS]),
    binding('system:discovery', 'system:discovery', [SYSTEM_AUTHENTICATED]),
    binding('system:basic-user', 'system:basic-user', [SYSTEM_AUTHENTICATED]),
    binding('system:public-info-viewer', 'system:public-info-viewer', [SYSTEM_AUTHENTICATED, SYSTEM_UNAUTHENTICATED]),
  ];
}
