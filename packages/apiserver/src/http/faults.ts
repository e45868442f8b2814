/**
 * Fault injection for tests: answer chosen requests with an error status or a delay, drop,
 * stall or silence open watches, compact history. Every fault is removable; `clear()` removes them all.
 */
import { ApiError, reasonForCode } from '../base/errors.js';
import type { Verb } from './http.js';
import type { Store } from '../storage/store.js';
import type { Watch, WatchHub } from '../api/watch.js';

/** Which requests a fault applies to. Every given field must match. */
export interface RequestMatch {
  verb?: Verb | Verb[];
  /** `configmaps`, `deployments.apps`, `deployments/status` or `deployments.apps/status`. */
  resource?: string;
  namespace?: string;
  name?: string;
  /** A substring of the request path, or a pattern tested against it. */
  path?: string | RegExp;
}

export interface RequestFaultSpec extends RequestMatch {
  /** Answer with this HTTP status and a matching Status body (409, 410, 429, 500, 503, ...). */
  status?: number;
  message?: string;
  /** Seconds to put in Retry-After (429 and 503 get 1 by default). */
  retryAfterSeconds?: number;
  /** Wait this long before answering (or before failing, with `status`). */
  delayMs?: number;
  /** Affect only the next `count` matching requests, then remove itself. */
  count?: number;
  /** Let the first `skip` matching requests pass unaffected (e.g. the second page of a list). */
  skip?: number;
  /** Affect each matching request with this probability (0..1]. */
  fraction?: number;
}

export interface WatchMatch {
  resource?: string;
  namespace?: string;
  path?: string | RegExp;
}

export interface Fault {
  readonly description: string;
  /** How many requests (or watches) it has affected. */
  readonly hits: number;
  remove(): void;
}

export interface RequestDescription {
  verb: Verb;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path: string;
  /** The client's User-Agent header, as an audit log has it. */
  userAgent?: string;
  /** A watch-list (`sendInitialEvents=true`): a watch that streams a list first; matched by `verb: 'list'` too. */
  streamsList?: boolean;
}

export interface FaultOutcome {
  delayMs: number;
  error?: ApiError;
}

interface RequestFault extends Fault {
  spec: RequestFaultSpec;
  hits: number;
  /** Matching requests seen, skipped ones included. */
  seen: number;
}

function matchesPath(pattern: string | RegExp | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? path.includes(pattern) : pattern.test(path);
}

function matchesResource(pattern: string | undefined, group: string, resource: string, subresource?: string): boolean {
  if (pattern === undefined) return true;
  const [base = '', sub] = pattern.split('/');
  if (sub !== undefined && sub !== subresource) return false;
  return base === resource || base === `${resource}.${group}`;
}

/** True when every field given in `match` matches the request. */
export function requestMatches(match: RequestMatch, req: RequestDescription): boolean {
  const verbs = match.verb === undefined ? undefined : Array.isArray(match.verb) ? match.verb : [match.verb];
  // A watch-list is the list a client asked for, streamed: a fault or count aimed at lists meets it too.
  if (verbs && !verbs.includes(req.verb) && !(req.streamsList === true && verbs.includes('list'))) return false;
  if (!matchesResource(match.resource, req.group, req.resource, req.subresource)) return false;
  if (match.namespace !== undefined && match.namespace !== req.namespace) return false;
  if (match.name !== undefined && match.name !== req.name) return false;
  return matchesPath(match.path, req.path);
}

/**
 * The faults a test injects into a running server (`ApiServer.faults`): each is removable, and
 * `clear()` removes them all.
 */
export interface Faults {
  /** Answers matching requests with `spec.status` (and/or delays them by `spec.delayMs`). */
  failRequests(spec: RequestFaultSpec): Fault;
  /** Adds latency to matching requests. */
  delayRequests(spec: RequestMatch & { delayMs: number; count?: number; skip?: number; fraction?: number }): Fault;
  /** Closes the open watches that match; returns how many. `abrupt` resets their connections. */
  dropWatches(match?: WatchMatch, options?: { abrupt?: boolean }): number;
  /**
   * Holds the open watches that match silent for `forMs`: no events, no bookmarks, no close at
   * their timeoutSeconds — a watch a client must find dead by itself. Afterwards (or on
   * `remove()`) they send what they held, and close if their timeout passed meanwhile.
   */
  silenceWatches(match: WatchMatch & { forMs: number }): Fault;
  /**
   * Stops sending on the open watches that match, keeping them open until the fault is removed
   * or their timeoutSeconds closes them; `remove()` resumes them.
   */
  stallWatches(match?: WatchMatch): Fault;
  /** Forgets all history up to now: watches resuming from an older resourceVersion, and continues of lists taken before now, get 410. */
  compact(): void;
  /** Removes every fault: request faults end, silenced and stalled watches send again. */
  clear(): void;
  /** The request faults in force. */
  readonly active: Fault[];
}

/** The server's side of the faults: it evaluates each request against them. */
export class FaultInjector implements Faults {
  private readonly requestFaults = new Set<RequestFault>();
  private readonly stalls = new Set<{ watches: Watch[] }>();

  constructor(
    private readonly store: Store,
    private readonly hub: WatchHub,
    private readonly random: () => number = Math.random,
  ) {}

  failRequests(spec: RequestFaultSpec): Fault {
    checkRequestFault('faults.failRequests', spec);
    if (spec.status === undefined && spec.delayMs === undefined) {
      throw new TypeError('faults.failRequests: give a status (e.g. 500) or a delayMs');
    }
    if (spec.status !== undefined && (!Number.isInteger(spec.status) || spec.status < 400 || spec.status > 599)) {
      throw new TypeError(`faults.failRequests: status must be an HTTP error code (400-599), got ${spec.status}`);
    }
    if (spec.fraction !== undefined && !(spec.fraction > 0 && spec.fraction <= 1)) {
      throw new TypeError(`faults.failRequests: fraction must be in (0, 1], got ${spec.fraction}`);
    }
    if (spec.count !== undefined && !(Number.isInteger(spec.count) && spec.count > 0)) {
      throw new TypeError(`faults.failRequests: count must be a positive integer, got ${spec.count}`);
    }
    if (spec.skip !== undefined && !(Number.isInteger(spec.skip) && spec.skip >= 0)) {
      throw new TypeError(`faults.failRequests: skip must be a non-negative integer, got ${spec.skip}`);
    }
    const fault: RequestFault = {
      spec,
      hits: 0,
      seen: 0,
      description: `${spec.status ?? 'delay'} for ${describe(spec)}`,
      remove: () => {
        this.requestFaults.delete(fault);
      },
    };
    this.requestFaults.add(fault);
    return fault;
  }

  delayRequests(spec: RequestMatch & { delayMs: number; count?: number; skip?: number; fraction?: number }): Fault {
    if (!(spec.delayMs >= 0)) throw new TypeError(`faults.delayRequests: delayMs must be >= 0, got ${spec.delayMs}`);
    return this.failRequests(spec);
  }

  dropWatches(match: WatchMatch = {}, options: { abrupt?: boolean } = {}): number {
    checkMatch('faults.dropWatches', match, WATCH_MATCH_KEYS);
    const watches = this.matchingWatches(match);
    for (const w of watches) w.close(options.abrupt ?? false);
    return watches.length;
  }

  silenceWatches(match: WatchMatch & { forMs: number }): Fault {
    if (!(Number.isFinite(match.forMs) && match.forMs > 0)) {
      throw new TypeError(`faults.silenceWatches: forMs must be a positive number of milliseconds, got ${match.forMs}`);
    }
    checkMatch('faults.silenceWatches', match, [...WATCH_MATCH_KEYS, 'forMs']);
    const watches = this.matchingWatches(match);
    for (const w of watches) w.silence(match.forMs);
    return {
      description: `silence ${watches.length} watches for ${match.forMs} ms`,
      hits: watches.length,
      remove: () => {
        for (const w of watches) w.unsilence();
      },
    };
  }

  stallWatches(match: WatchMatch = {}): Fault {
    checkMatch('faults.stallWatches', match, WATCH_MATCH_KEYS);
    const watches = this.matchingWatches(match);
    for (const w of watches) w.stall();
    const entry = { watches };
    this.stalls.add(entry);
    return {
      description: `stall ${watches.length} watches`,
      hits: watches.length,
      remove: () => {
        if (!this.stalls.delete(entry)) return;
        for (const w of watches) w.resume();
      },
    };
  }

  compact(): void {
    this.store.compact();
  }

  clear(): void {
    this.requestFaults.clear();
    for (const w of this.hub.watches()) w.unsilence();
    for (const s of [...this.stalls]) {
      this.stalls.delete(s);
      for (const w of s.watches) w.resume();
    }
  }

  get active(): Fault[] {
    return [...this.requestFaults];
  }

  private matchingWatches(match: WatchMatch): Watch[] {
    return this.hub.watches().filter((w) => {
      const { type, namespace, path } = w.spec;
      return (
        !w.isClosed &&
        matchesResource(match.resource, type.group, type.plural) &&
        (match.namespace === undefined || namespace === match.namespace) &&
        matchesPath(match.path, path)
      );
    });
  }

  /** The delay and error (if any) injected into a request. */
  evaluate(req: RequestDescription): FaultOutcome {
    let delayMs = 0;
    let error: ApiError | undefined;
    for (const fault of [...this.requestFaults]) {
      const s = fault.spec;
      if (!requestMatches(s, req)) continue;
      if (++fault.seen <= (s.skip ?? 0)) continue;
      if (s.fraction !== undefined && this.random() >= s.fraction) continue;
      fault.hits++;
      if (s.count !== undefined && fault.hits >= s.count) fault.remove();
      delayMs += s.delayMs ?? 0;
      if (s.status !== undefined && !error) error = faultError(s, req);
    }
    return { delayMs, error };
  }
}

function describe(m: RequestMatch): string {
  const parts = [
    m.verb && `verb=${String(m.verb)}`,
    m.resource && `resource=${m.resource}`,
    m.namespace && `namespace=${m.namespace}`,
    m.name && `name=${m.name}`,
    m.path && `path=${String(m.path)}`,
  ];
  return parts.filter(Boolean).join(' ') || 'all requests';
}

function faultError(s: RequestFaultSpec, req: RequestDescription): ApiError {
  const code = s.status as number;
  const reason = reasonForCode(code);
  const retryAfter = s.retryAfterSeconds ?? (code === 429 || code === 503 ? 1 : undefined);
  const headers: Record<string, string> = retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {};
  const message = s.message ?? `injected fault: ${reason} (${code}) for ${req.verb} ${req.path}`;
  return new ApiError(
    code,
    reason,
    message,
    { name: req.name, group: req.group, kind: req.resource, retryAfterSeconds: retryAfter },
    headers,
  );
}

const VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const WATCH_MATCH_KEYS = ['resource', 'namespace', 'path'] as const;
export const REQUEST_MATCH_KEYS = ['verb', 'resource', 'namespace', 'name', 'path'] as const;
const REQUEST_FAULT_KEYS = [
  ...REQUEST_MATCH_KEYS,
  'skip',
  'status',
  'message',
  'retryAfterSeconds',
  'delayMs',
  'count',
  'fraction',
] as const;

/**
 * A fault that matched nothing, or everything, by mistake would make a test pass or fail for the
 * wrong reason (a RegExp as `resource` once made every request fail with 500): wrong types and
 * unknown fields are rejected when the fault is added.
 */
export function checkMatch(where: string, match: object, known: readonly string[]): void {
  if (match === null || typeof match !== 'object') throw new TypeError(`${where}: expected an object, got ${String(match)}`);
  const fields = match as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!known.includes(key)) throw new TypeError(`${where}: unknown field '${key}' (known: ${known.join(', ')})`);
  }
  for (const key of ['resource', 'namespace', 'name', 'message'] as const) {
    const value = fields[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new TypeError(
        `${where}: ${key} must be a non-empty string, got ${describeValue(value)}${key === 'resource' ? " (e.g. 'configmaps', 'deployments.apps/status'; use path for a RegExp)" : ''}`,
      );
    }
  }
  const path = fields['path'];
  if (path !== undefined && !(typeof path === 'string' || path instanceof RegExp)) {
    throw new TypeError(`${where}: path must be a string or a RegExp, got ${describeValue(path)}`);
  }
  const verbs = fields['verb'] === undefined ? [] : Array.isArray(fields['verb']) ? (fields['verb'] as unknown[]) : [fields['verb']];
  for (const verb of verbs) {
    if (!VERBS.includes(verb as Verb))
      throw new TypeError(`${where}: verb must be one of ${VERBS.join(', ')} (or an array of them), got ${describeValue(verb)}`);
  }
}

function checkRequestFault(where: string, spec: RequestFaultSpec): void {
  checkMatch(where, spec, REQUEST_FAULT_KEYS);
  if (spec.delayMs !== undefined && !(typeof spec.delayMs === 'number' && Number.isFinite(spec.delayMs) && spec.delayMs >= 0)) {
    throw new TypeError(`${where}: delayMs must be a finite number >= 0, got ${describeValue(spec.delayMs)}`);
  }
  if (spec.retryAfterSeconds !== undefined && !(Number.isInteger(spec.retryAfterSeconds) && spec.retryAfterSeconds >= 0)) {
    throw new TypeError(`${where}: retryAfterSeconds must be an integer >= 0, got ${describeValue(spec.retryAfterSeconds)}`);
  }
}

function describeValue(value: unknown): string {
  if (value instanceof RegExp) return `the RegExp ${String(value)}`;
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
