/** Judging a write's answer against the newest version known: whether a change is the controller's own or someone else's. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { isMarkedForDeletion } from '../core/index.js';
import { compareResourceVersions, resourceVersionOf } from './resource-version.js';

/**
 * ES4: what one write may change on top of the version it was based on. A write without a
 * resourceVersion precondition lands on whatever the server has, so its answer can carry
 * someone else's change too; the answer is our own only if it shows nothing the write did not
 * intend (`foreignChangeIn`).
 */
export interface WriteIntent<T extends KubernetesObject = KubernetesObject> {
  /**
   * The newest version the writer knew when the write began. Leave it out only when nothing can
   * land under the write: a create, or a write whose resourceVersion precondition is this
   * version's.
   */
  readonly base?: T | undefined;
  /**
   * How the write moves `metadata.generation`: `keep` (status, metadata, or content the object
   * already has), `bump` (a spec change), `keepOrBump` (cannot tell). Default `keep`.
   */
  readonly generation?: 'keep' | 'bump' | 'keepOrBump';
  /** The write changes nothing on `base`: the answer must be `base` itself (its resourceVersion). */
  readonly unchanged?: boolean;
  /** The write is a delete: it may mark the object for deletion itself. */
  readonly deletes?: boolean;
  /** The write leaves `metadata.finalizers` alone (a status write): another list in the answer is someone else's. */
  readonly keepsFinalizers?: boolean;
}

/**
 * Why the API's answer to a write carries a change the write did not make — the generation moved
 * other than intended, the object was newly marked for deletion, the finalizers of a write that
 * keeps them changed, or a write that changed nothing answered with a new version — or undefined
 * when the answer is what the write made of its base.
 * Objects without a generation are judged by the deletion mark and `unchanged` alone.
 */
export function foreignChangeIn<T extends KubernetesObject>(answer: T, intent: WriteIntent<T> = {}): string | undefined {
  const base = intent.base;
  if (base === undefined) return undefined;
  const before = resourceVersionOf(base);
  const after = resourceVersionOf(answer);
  if (before !== undefined && before === after) return undefined; // nothing landed on the base
  if (intent.unchanged)
    return `a write that changed nothing answered with resourceVersion ${after ?? '(none)'} instead of ${before ?? '(none)'}`;
  if (!intent.deletes && !isMarkedForDeletion(base) && isMarkedForDeletion(answer)) return 'the object was marked for deletion';
  if (intent.keepsFinalizers && !sameList(base.metadata?.finalizers, answer.metadata?.finalizers)) return 'the finalizers changed';
  const from = base.metadata?.generation;
  const to = answer.metadata?.generation;
  if (typeof from !== 'number' || typeof to !== 'number') return undefined;
  const expected = intent.generation === 'bump' ? [from + 1] : intent.generation === 'keepOrBump' ? [from, from + 1] : [from];
  return expected.includes(to) ? undefined : `the generation moved from ${from} to ${to} (the write alone gives ${expected.join(' or ')})`;
}

/** The newer of two versions of one object (by resourceVersion; `a` when they cannot be ordered). */
export function newerOf<T extends KubernetesObject>(a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const x = resourceVersionOf(a);
  const y = resourceVersionOf(b);
  if (x === undefined || y === undefined) return x === undefined ? b : a;
  return (compareResourceVersions(y, x) ?? 0) > 0 ? b : a;
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((item, i) => item === y[i]);
}
