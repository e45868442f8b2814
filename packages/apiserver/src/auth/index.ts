/**
 * Authentication and authorization (RBAC) of the embedded server: see auth.ts.
 */
export { Auth, forbiddenError, type AuthOptions } from './auth.js';
export { ClusterRoleAggregator } from './aggregation.js';
export { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap.js';
export { CLUSTER_ROLE_BINDINGS_KEY, CLUSTER_ROLES_KEY, type Attributes } from './rbac.js';
export { rbacTypes, reviewTypes } from './types.js';
export { serviceAccountUser, type UserInfo } from './user.js';
