/**
 * `status.conditions` as Kubernetes defines them (metav1.Condition, apimachinery's
 * `meta.SetStatusCondition`): one entry per `type`, and `lastTransitionTime` moves only when
 * `status` changes.
 */
import { isRecord } from './meta.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One entry of `status.conditions` (metav1.Condition). */
export interface StatusCondition {
  /** CamelCase, e.g. `Ready`, `Available`, `Degraded`; the key of the list. */
  readonly type: string;
  readonly status: ConditionStatus;
  /** Why the condition has its status now: CamelCase, machine-readable (`DeploymentNotReady`). */
  readonly reason: string;
  /** For humans; may be empty. */
  readonly message: string;
  /** When `status` last changed (RFC 3339, seconds). */
  readonly lastTransitionTime: string;
  /** The `metadata.generation` the condition was computed from. */
  readonly observedGeneration?: number;
}

/** What a controller decides; the rest (`lastTransitionTime`, `observedGeneration`) comes from the object. */
export interface StatusConditionInput {
  readonly type: string;
  /** `true`/`false` read as `'True'`/`'False'`. */
  readonly status: ConditionStatus | boolean;
  readonly reason: string;
  readonly message?: string;
}

// The patterns and limits of metav1.Condition's OpenAPI validation.
const TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_TYPE = 316;
const MAX_REASON = 1024;
const MAX_MESSAGE = 32768;

/**
 * The condition to write for `object`: `lastTransitionTime` kept from the object's current
 * condition of that type when its status is unchanged, `now` otherwise; `observedGeneration`
 * the object's `metadata.generation`. Throws a TypeError naming a `type` or `reason` that a
 * Kubernetes server would reject; a message longer than the server takes is shortened.
 *
 * With server-side apply (the default) return only your own conditions in the status: the list
 * is a map keyed by `type`, so conditions other field managers own stay.
 */
export function statusCondition(object: unknown, input: StatusConditionInput, now: Date = new Date()): StatusCondition {
  const status = conditionStatus(input.status);
  const message = truncate(input.message ?? '', MAX_MESSAGE);
  if (typeof input.type !== 'string' || input.type.length > MAX_TYPE || !TYPE.test(input.type)) {
    throw new TypeError(
      `status condition: type ${JSON.stringify(input.type)} must be a qualified name of at most ${MAX_TYPE} characters like 'Ready'`,
    );
  }
  if (typeof input.reason !== 'string' || input.reason.length > MAX_REASON || !REASON.test(input.reason)) {
    throw new TypeError(
      `status condition ${input.type}: reason ${JSON.stringify(input.reason)} must be CamelCase (letters, digits, '_', ',', ':'), like 'DeploymentReady'`,
    );
  }
  const previous = findStatusCondition(object, input.type);
  const generation = isRecord(object) && isRecord(object['metadata']) ? object['metadata']['generation'] : undefined;
  return {
    type: input.type,
    status,
    reason: input.reason,
    message,
    lastTransitionTime: previous?.status === status ? previous.lastTransitionTime : rfc3339(now),
    ...(typeof generation === 'number' ? { observedGeneration: generation } : {}),
  };
}

/**
 * `conditions` with `condition` in place of the one of its type (added when there is none),
 * keeping the earlier `lastTransitionTime` when the status did not change. For writes that
 * replace the whole list (merge patch); with server-side apply, apply only your own conditions.
 */
export function setStatusCondition(conditions: readonly StatusCondition[] | undefined, condition: StatusCondition): StatusCondition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === condition.type);
  if (index < 0) return [...list, condition];
  const previous = list[index];
  list[index] = previous.status === condition.status ? { ...condition, lastTransitionTime: previous.lastTransitionTime } : condition;
  return list;
}

/** The condition of that type in `object.status.conditions` (or in a list of conditions). */
export function findStatusCondition(objectOrConditions: unknown, type: string): StatusCondition | undefined {
  const list = Array.isArray(objectOrConditions) ? objectOrConditions : conditionsOf(objectOrConditions);
  return list.find((c): c is StatusCondition => isRecord(c) && c['type'] === type);
}

/** True when the object's condition of that type has status `True`. */
export function isStatusConditionTrue(objectOrConditions: unknown, type: string): boolean {
  return findStatusCondition(objectOrConditions, type)?.status === 'True';
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function conditionsOf(object: unknown): unknown[] {
  const status = isRecord(object) ? object['status'] : undefined;
  const conditions = isRecord(status) ? status['conditions'] : undefined;
  return Array.isArray(conditions) ? conditions : [];
}

function conditionStatus(status: StatusConditionInput['status']): ConditionStatus {
  if (status === true || status === 'True') return 'True';
  if (status === false || status === 'False') return 'False';
  if (status === 'Unknown') return 'Unknown';
  throw new TypeError(`status condition: status must be 'True', 'False', 'Unknown' or a boolean, got ${JSON.stringify(status)}`);
}

/** metav1.Time: RFC 3339 with seconds, as the API server writes it. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
