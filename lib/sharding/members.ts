/**
 * Who is a live member (SH1), judged like leader election judges a lease: a member Lease is live
 * until it has not changed for its full duration on *this* replica's clock, never by the
 * timestamps another replica wrote (clock skew).
 */
import type { V1Lease } from '@kubernetes/client-node';

/** The annotation on a member Lease naming the view its holder has drained for (SH3). */
export const SHARD_VIEW_ANNOTATION = 'rxkube.io/shard-view';
/** The label that groups the member Leases of one sharded controller. */
export const SHARD_GROUP_LABEL = 'rxkube.io/shard-group';

export interface MemberObservation {
  readonly identity: string;
  /** The view id the member acknowledged ('' for none). */
  readonly ack: string;
  readonly durationMs: number;
  /** Identifies one renewal; a new value means the member is alive. */
  readonly record: string;
  /** When this replica first saw `record`. */
  readonly at: number;
}

export type Members = ReadonlyMap<string, MemberObservation>;

function timeMs(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const ms = new Date(value as string | number | Date).getTime();
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The observations after seeing `leases` (every member Lease of the group, as listed or cached)
 * at `now`: a changed record restarts its member's clock; a Lease that is gone, or released (no
 * holder), is no member.
 */
export function observeLeases(previous: Members, leases: Iterable<V1Lease>, now: number): Map<string, MemberObservation> {
  const next = new Map<string, MemberObservation>();
  for (const lease of leases) {
    const identity = lease.spec?.holderIdentity ?? '';
    if (identity === '' || lease.metadata?.deletionTimestamp) continue;
    const ack = lease.metadata?.annotations?.[SHARD_VIEW_ANNOTATION] ?? '';
    const durationMs = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    const record = JSON.stringify([timeMs(lease.spec?.renewTime), durationMs, ack, lease.metadata?.resourceVersion ?? '']);
    const seen = previous.get(identity);
    next.set(identity, seen?.record === record ? seen : { identity, ack, durationMs, record, at: now });
  }
  return next;
}

/** The members whose Lease has changed within its duration. */
export function liveMembers(members: Members, now: number): string[] {
  return [...members.values()].filter((m) => m.at + m.durationMs > now).map((m) => m.identity);
}

/** When the next live member expires, if any (to re-judge the view at that moment). */
export function nextExpiry(members: Members, now: number): number | undefined {
  let next: number | undefined;
  for (const m of members.values()) {
    const expiry = m.at + m.durationMs;
    if (expiry > now && (next === undefined || expiry < next)) next = expiry;
  }
  return next;
}

/** member → acknowledged view id, for the live members. */
export function acksOf(members: Members, now: number): Map<string, string> {
  const acks = new Map<string, string>();
  for (const m of members.values()) if (m.at + m.durationMs > now) acks.set(m.identity, m.ack);
  return acks;
}
