// The leader layer's entry: the Lease client, the leader elector and request deadlines.
export { abortAfter } from './deadline.js';
export { kubeLeaseClient, type LeaseClient } from './lease-client.js';
export {
  createLeaderElector,
  LEADER_ELECTION_DEFAULTS,
  LEADER_JITTER_FACTOR,
  LeaderElector,
  type LeaderElectionOptions,
} from './elector.js';
