/**
 * The handover rule of sharding, as pure functions over a small state (SH2, SH3).
 *
 * A view is the set of live members as one member sees it. Each member writes, on its own
 * Lease, the id of the view it has drained for: it runs nothing it does not own in that view, and
 * none of its runs of such resources is in flight. A member starts a resource it has gained only
 * once every member of its current view has written that view's id. So a resource that moves
 * from A to B is never run by both: B waits for A's acknowledgement, which A writes only after its
 * last run of the resource has settled. Resources a member keeps across views run on without a
 * pause: no other member owns them in any view the member has acknowledged.
 *
 * `runnable` is therefore "owned in the last view whose gate opened and in every view since":
 * a resource lost in an intermediate view may have been started by its new owner meanwhile, and
 * must wait for the next gate like any gained resource.
 */
import { createHash } from 'node:crypto';
import { ownerOf } from './rendezvous.js';

export interface ShardView {
  /** Stable id of the member set: the same members give the same id on every replica. */
  readonly id: string;
  /** Member identities, sorted. */
  readonly members: readonly string[];
}

export interface HandoverState {
  readonly me: string;
  /** The last view in which every member acknowledged it (the gate opened); undefined before the first. */
  readonly open: ShardView | undefined;
  /** Views seen since `open`, oldest first; the last is the current view. */
  readonly pending: readonly ShardView[];
}

export function viewOf(members: Iterable<string>): ShardView {
  const sorted = [...new Set(members)].sort();
  const id = createHash('sha256').update(sorted.join('\n')).digest('hex').slice(0, 16);
  return { id, members: sorted };
}

export function initialHandover(me: string): HandoverState {
  return { me, open: undefined, pending: [] };
}

/** The view this member currently sees. */
export function currentView(state: HandoverState): ShardView | undefined {
  return state.pending.at(-1) ?? state.open;
}

/** A newly computed view; the same member set again changes nothing. */
export function viewChanged(state: HandoverState, view: ShardView): HandoverState {
  if (currentView(state)?.id === view.id) return state;
  return { ...state, pending: [...state.pending, view] };
}

/** Whether this member may run `key` now. */
export function isRunnable(state: HandoverState, key: string): boolean {
  if (state.open === undefined || ownerOf(key, state.open.members) !== state.me) return false;
  return state.pending.every((view) => ownerOf(key, view.members) === state.me);
}

/** Whether `key` is this member's in its current view (runnable or waiting for the gate). */
export function isOwned(state: HandoverState, key: string): boolean {
  const view = currentView(state);
  return view !== undefined && ownerOf(key, view.members) === state.me;
}

/**
 * The view id this member may acknowledge: the current one, once none of `inFlight` is a key
 * it may no longer run. Undefined while a run of a resource it lost is still in flight.
 */
export function acknowledgeable(state: HandoverState, inFlight: Iterable<string>): string | undefined {
  const view = currentView(state);
  if (view === undefined || !view.members.includes(state.me)) return undefined;
  for (const key of inFlight) if (!isRunnable(state, key)) return undefined;
  return view.id;
}

/**
 * Opens the gate of the current view when every member of it has acknowledged it (`acks`:
 * member → the view id on its Lease, as the server stores it).
 */
export function acksObserved(state: HandoverState, acks: ReadonlyMap<string, string>): HandoverState {
  const view = state.pending.at(-1);
  if (view === undefined || !view.members.includes(state.me)) return state;
  if (!view.members.every((member) => acks.get(member) === view.id)) return state;
  return { ...state, open: view, pending: [] };
}
