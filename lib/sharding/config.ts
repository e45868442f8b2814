/** Sharding options of a controller, validated and resolved. */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  ConfigurationError,
  describeValue,
  isRecord,
  requireKnownKeys,
  requireNamespaceName,
  requirePositiveDuration,
} from '../core/index.js';
import { LEADER_ELECTION_DEFAULTS, LEADER_JITTER_FACTOR } from '../leader/index.js';

/** Sharding of one controller across replicas (off unless given). */
export interface ShardingOptions {
  /** How members are counted: 'auto' (the default and only mode) — every live member Lease is one. */
  readonly replicas?: 'auto';
  /** Namespace of the member Leases (default: the operator's leader-election namespace, else the operator's own namespace). */
  readonly namespace?: string;
  /** Unique per replica (default `<hostname>_<uuid>`). */
  readonly identity?: string;
  /** How long a member Lease is valid after its last renewal (default 15000 ms, as for the leader Lease). */
  readonly leaseDurationMs?: number;
  /** A member that has not renewed for this long stops running anything (default 10000 ms; < leaseDurationMs). */
  readonly renewDeadlineMs?: number;
  /** Pause between renewals (default 2000 ms). */
  readonly retryPeriodMs?: number;
}

const SHARDING_OPTIONS = {
  replicas: true,
  namespace: true,
  identity: true,
  leaseDurationMs: true,
  renewDeadlineMs: true,
  retryPeriodMs: true,
} as const satisfies Record<keyof ShardingOptions, true>;

export interface ShardingConfig {
  /** The sharded controller's name: its members' Leases are grouped by it. */
  readonly group: string;
  readonly namespace: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * A controller's sharding options: the Operator's with the controller's own over them; undefined
 * when neither asks for sharding or the controller says `false`. Each must be an object (checked
 * before merging, since spreading `true` or a string would shard with the defaults unasked).
 */
export function controllerShardingOptions(operator: unknown, own: unknown): ShardingOptions | undefined {
  if (operator !== undefined && !isRecord(operator)) {
    throw new ConfigurationError('sharding', `the Operator's option must be an object of ShardingOptions, got ${describeValue(operator)}`);
  }
  if (own !== undefined && own !== false && !isRecord(own)) {
    throw new ConfigurationError(
      'sharding',
      `the controller's option must be an object of ShardingOptions or false, got ${describeValue(own)}`,
    );
  }
  requireKnownKeys('sharding', operator, SHARDING_OPTIONS);
  requireKnownKeys('sharding', own, SHARDING_OPTIONS);
  if (own === false || (operator === undefined && own === undefined)) return undefined;
  return { ...operator, ...own };
}

/** Validates the options with the leader Lease's rules; every error names the option. */
export function shardingConfig(group: string, options: ShardingOptions, defaultNamespace = 'default'): ShardingConfig {
  if (!isRecord(options)) throw new ConfigurationError('sharding', `must be an object, got ${describeValue(options)}`);
  requireKnownKeys('sharding', options, SHARDING_OPTIONS);
  if (typeof group !== 'string' || group.length > 63 || !LABEL_VALUE.test(group) || group === '') {
    throw new ConfigurationError(
      'sharding',
      `the controller name ${JSON.stringify(group)} must be a valid label value (at most 63 alphanumerics, '-', '_', '.') to group member Leases`,
    );
  }
  const text = (option: string, value: unknown): string => {
    if (typeof value !== 'string' || value.trim() === '')
      throw new ConfigurationError(option, `must be a non-empty string, got ${describeValue(value)}`);
    return value;
  };
  if (options.replicas !== undefined && options.replicas !== 'auto') {
    throw new ConfigurationError(
      'sharding.replicas',
      `must be 'auto' (members are the replicas whose member Lease is live), got ${describeValue(options.replicas)}`,
    );
  }
  const leaseDurationMs = requirePositiveDuration(
    'sharding.leaseDurationMs',
    options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
  );
  const renewDeadlineMs = requirePositiveDuration(
    'sharding.renewDeadlineMs',
    options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
  );
  const retryPeriodMs = requirePositiveDuration('sharding.retryPeriodMs', options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs);
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new ConfigurationError(
      'sharding.renewDeadlineMs',
      `must be less than leaseDurationMs (${renewDeadlineMs} >= ${leaseDurationMs}), or a member could run resources after its lease expired`,
    );
  }
  if (renewDeadlineMs <= LEADER_JITTER_FACTOR * retryPeriodMs) {
    throw new ConfigurationError(
      'sharding.renewDeadlineMs',
      `must be greater than ${LEADER_JITTER_FACTOR} × retryPeriodMs (${renewDeadlineMs} <= ${LEADER_JITTER_FACTOR * retryPeriodMs}), or one failed renewal ends membership`,
    );
  }
  return Object.freeze({
    group,
    namespace: requireNamespaceName('sharding.namespace', options.namespace ?? defaultNamespace),
    identity: text('sharding.identity', options.identity ?? `${hostname()}_${randomUUID()}`),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
  });
}
