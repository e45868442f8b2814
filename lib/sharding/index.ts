export { controllerShardingOptions, shardingConfig, type ShardingConfig, type ShardingOptions } from './config.js';
export { memberLeaseName, Shard, type ShardChange, type ShardDeps, type ShardStatus } from './shard.js';
export {
  acknowledgeable,
  acksObserved,
  currentView,
  initialHandover,
  isOwned,
  isRunnable,
  viewChanged,
  viewOf,
  type HandoverState,
  type ShardView,
} from './handover.js';
export { acksOf, liveMembers, nextExpiry, observeLeases, SHARD_GROUP_LABEL, SHARD_VIEW_ANNOTATION, type MemberObservation, type Members } from './members.js';
export { hash53, ownerOf } from './rendezvous.js';
