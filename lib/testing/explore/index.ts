/**
 * Exploration of a user's operator under the faults real clusters produce (stale views,
 * crash-restarts, missed and coalesced watch events, failing requests, bad input), each failure
 * replayable from its seed. Needs the embedded server: it is not part of the marble helpers.
 */
export { explore, formatFailure, replay, rerun } from './explore.js';
export { schemaWorkload, type GeneratedCase, type SchemaWorkloadOptions } from './schema.js';
export { seededRandom, type Random } from './random.js';
export type {
  Action,
  Actor,
  ClusterState,
  Coverage,
  ExploreBudget,
  ExploreOptions,
  ExploreResult,
  Failure,
  InputCase,
  Invariant,
  Oracle,
  Perturbation,
  PerturbationType,
  RunPlan,
  RunVerdict,
  Selection,
  Target,
  Trace,
  VolatilePath,
  Workload,
  WorkloadObject,
} from './types.js';
