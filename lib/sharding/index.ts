// The sharding layer's entry: a controller's sharding options and the Shard that runs its share.
export { controllerShardingOptions, shardingConfig, type ShardingOptions } from './config.js';
export { Shard, type ShardStatus } from './shard.js';
