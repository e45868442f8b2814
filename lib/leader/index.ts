export { abortAfter } from './deadline.js';
export { kubeLeaseClient, watchLease, type LeaseClient } from './lease-client.js';
export {
  createLeaderElector,
  LEADER_ELECTION_DEFAULTS,
  LEADER_JITTER_FACTOR,
  leaderElectionConfig,
  LeaderElector,
  type LeaderElectionConfig,
  type LeaderElectionOptions,
} from './elector.js';
