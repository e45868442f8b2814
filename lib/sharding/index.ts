export { controllerShardingOptions, shardingConfig, type ShardingOptions } from './config.js';
export { Shard, type ShardStatus } from './shard.js';
