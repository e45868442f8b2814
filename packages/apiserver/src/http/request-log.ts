/**
 * What the server was asked: resource requests counted by verb and resource, and listeners told
 * of each one — so that a test can count the writes an operator makes. Requests are counted as
 * they arrive, before injected faults answer them; one RBAC refuses is counted too (so a test can
 * list the 403s a client met), and a server-side apply or PUT refused the `create` it needs to
 * create an object is counted as that create as well.
 */
import { checkMatch, REQUEST_MATCH_KEYS, requestMatches, type RequestDescription, type RequestMatch } from './faults.js';

const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** `verb resource[.group][/subresource]`, e.g. `patch widgets.sample.rxkube.dev/status`, `create configmaps`. */
export function requestKey(req: RequestDescription): string {
  const resource = req.group === '' ? req.resource : `${req.resource}.${req.group}`;
  return `${req.verb} ${resource}${req.subresource === undefined ? '' : `/${req.subresource}`}`;
}

export class RequestLog {
  /** One entry per distinct (verb, resource, namespace, name): bounded by the objects touched. */
  private readonly seen = new Map<string, { readonly request: RequestDescription; count: number }>();
  private readonly listeners = new Set<(request: RequestDescription) => void>();

  /** Called by the server for every resource request. */
  record(request: RequestDescription): void {
    const key = `${requestKey(request)}\0${request.namespace ?? ''}\0${request.name ?? ''}\0${request.userAgent ?? ''}\0${request.streamsList === true}`;
    const entry = this.seen.get(key);
    if (entry) entry.count++;
    else this.seen.set(key, { request, count: 1 });
    for (const listener of [...this.listeners]) listener(request);
  }

  /**
   * Every distinct request (verb, resource, namespace, name and user agent) with how often it
   * came: what an RBAC check compares with a Role.
   */
  entries(): { readonly request: RequestDescription; readonly count: number }[] {
    return [...this.seen.values()].map(({ request, count }) => ({ request, count }));
  }

  /** Request counts by `verb resource` (see `requestKey`), e.g. `{ 'create configmaps': 2 }`. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { request, count } of this.seen.values()) {
      const key = requestKey(request);
      out[key] = (out[key] ?? 0) + count;
    }
    return out;
  }

  /** How many requests matched (the fields of a fault's match; none = every request). */
  count(match: RequestMatch = {}): number {
    checkMatch('requests.count', match, REQUEST_MATCH_KEYS);
    let n = 0;
    for (const { request, count } of this.seen.values()) if (requestMatches(match, request)) n += count;
    return n;
  }

  /** How many writes (create, update, patch, delete, deletecollection) matched. */
  writes(match: Omit<RequestMatch, 'verb'> = {}): number {
    return this.count({ ...match, verb: [...WRITE_VERBS] as RequestMatch['verb'] });
  }

  /** Calls `listener` for every resource request from now on; returns what removes it. */
  onRequest(listener: (request: RequestDescription) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('requests.onRequest: listener must be a function');
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the counts (listeners stay). */
  reset(): void {
    this.seen.clear();
  }
}
