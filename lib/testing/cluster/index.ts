/**
 * `rxkube/testing/cluster`: an operator's integration tests against the embedded API server
 * (`@rxkube/apiserver`, an optional peer dependency: install it as a dev dependency). It exports
 * its own names only: the `Operator`, the client and the types of their configuration that its
 * signatures use are imported from `rxkube`.
 *
 * @module rxkube/testing/cluster
 */
export { startTestCluster, type ServiceAccountIdentity, type TestCluster, type TestClusterOptions } from './cluster.js';
export { rbacUsage, type RbacUsage, type RbacUsageOptions } from './rbac.js';
export {
  explore,
  formatFailure,
  replay,
  rerun,
  schemaWorkload,
  seededRandom,
  type Action,
  type Actor,
  type ClusterState,
  type Coverage,
  type ExploreBudget,
  type ExploreOptions,
  type ExploreResult,
  type Failure,
  type GeneratedCase,
  type InputCase,
  type Invariant,
  type Oracle,
  type Perturbation,
  type PerturbationType,
  type Random,
  type RunPlan,
  type RunVerdict,
  type SchemaWorkloadOptions,
  type Selection,
  type Target,
  type Trace,
  type VolatilePath,
  type Workload,
  type WorkloadObject,
} from '../explore/index.js';
