/**
 * `rxkube/testing/cluster`: an operator's integration tests against the embedded API server
 * (`@rxkube/apiserver`, an optional peer dependency: install it as a dev dependency).
 *
 * @module rxkube/testing/cluster
 */
export { startTestCluster, type ServiceAccountIdentity, type TestCluster, type TestClusterOptions } from './cluster.js';
export { rbacUsage, type RbacUsage } from './rbac.js';
