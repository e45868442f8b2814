/**
 * Paging a list with `limit` and `continue`: the token a page ends with, and the snapshots a
 * paged list reads from so that every page is at the first page's resourceVersion, until etcd's
 * compaction (or the TTL) expires them as the real server's 410 does.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, badRequest } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { nameOf, namespaceOf } from '../base/meta.js';

interface ListSnapshot {
  rv: number;
  items: JsonObject[];
  createdAt: number;
  /** The list it was taken for (resource, version, namespace, selectors): a token serves only that. */
  scope: string;
}

const MAX_SNAPSHOTS = 64;

/** A continue token's resourceVersion meaning "at the latest version", as the real server's -1. */
export const LATEST = -1;

/** Where a page ended: a kept snapshot and the offset in it, or (rv LATEST) the last key returned. */
export interface ContinueToken {
  id: string;
  rv: number;
  offset: number;
  /** The key (namespace/name) of the last item returned. */
  after: string;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', ...token })).toString('base64url');
}

/** The store's key order, which lists follow. */
export function keyOf(obj: JsonObject): string {
  return `${namespaceOf(obj)}/${nameOf(obj)}`;
}

/**
 * The real server's answer to a continue token below the compaction point: 410 Expired, and in
 * the Status's metadata a token that continues after the last key at the latest version.
 */
class ExpiredContinueError extends ApiError {
  constructor(readonly continueToken: string) {
    super(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
        'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
        'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  }

  override toStatus(): JsonObject {
    return { ...super.toStatus(), metadata: { continue: this.continueToken } };
  }
}

export function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isJsonObject(parsed) && typeof parsed.id === 'string' && typeof parsed.offset === 'number' && typeof parsed.rv === 'number') {
      return { id: parsed.id, rv: parsed.rv, offset: parsed.offset, after: typeof parsed.after === 'string' ? parsed.after : '' };
    }
  } catch {
    // fall through to the error below
  }
  throw badRequest(`continue key is not valid: ${JSON.stringify(token)}`);
}

/** The snapshots of the lists being paged, the oldest dropped past a bound. */
export class ListSnapshots {
  private readonly kept = new Map<string, ListSnapshot>();

  constructor(private readonly ttlMs: number) {}

  /** Keeps `items` at `rv` for the pages after the first; returns the snapshot's id. */
  keep(rv: number, items: JsonObject[], scope: string): string {
    // Random, not a sequence: a token is never a guessable handle to another client's list.
    const id = randomBytes(16).toString('base64url');
    this.kept.set(id, { rv, items, createdAt: Date.now(), scope });
    while (this.kept.size > MAX_SNAPSHOTS) {
      const oldest = this.kept.keys().next().value as string;
      this.kept.delete(oldest);
    }
    return id;
  }

  /** The snapshot a token continues; 410 Expired (with a token to go on at the latest version) once it is gone. */
  resume(token: ContinueToken, compactedResourceVersion: number, scope: string): ListSnapshot {
    const snap = this.kept.get(token.id);
    // Like the real server's key prefix in its tokens: a token continues the list it came from
    // only, so one allowed to list one thing cannot page through another's snapshot.
    if (snap && snap.scope !== scope)
      throw badRequest('continue key is not valid: it continues a list of another resource, namespace or selector');
    if (snap && !(Number.isInteger(token.offset) && token.offset > 0 && token.offset <= snap.items.length)) {
      throw badRequest(`continue key is not valid: offset ${token.offset} is not within the list`);
    }
    // etcd refuses a read *below* its compaction point only: a list taken exactly at it still pages.
    if (!snap || snap.rv < compactedResourceVersion || Date.now() - snap.createdAt > this.ttlMs) {
      this.kept.delete(token.id);
      throw new ExpiredContinueError(encodeContinue({ id: '', rv: LATEST, offset: 0, after: token.after }));
    }
    return snap;
  }

  /** Forgets a snapshot whose last page was read. */
  delete(id: string): void {
    this.kept.delete(id);
  }
}
