/**
 * Bounds on what clients can pin in the server's memory, after the real server's max-in-flight
 * filter, request timeout and priority and fairness. A request is in flight from its arrival
 * until its answer is written out; a client that asks for a large list and never reads holds its
 * answer in the socket buffer.
 *
 * - At most `maxInFlight` requests in flight (watches, long-running, not counted), and the answers
 *   in flight hold at most `maxPendingBytes` not yet written.
 * - Both are shared fairly between users: a user may hold at most its share of each, the budget
 *   divided by the users holding or waiting plus one (room is always left for one more user), so
 *   one client that never reads cannot starve the others. A request beyond its user's share waits
 *   in that user's queue (at most `maxQueuedPerUser`, for at most `queueWaitMs`); the queues are
 *   served in turn as room frees. A request that cannot wait is answered 429 TooManyRequests
 *   with Retry-After: 1, as the real server answers.
 * - An answer the client has not read within `writeTimeoutMs` after the handler ended it is cut
 *   (the connection closed), freeing what it held.
 * - The probes (`/healthz`, `/livez`, `/readyz`) are outside every limit, as the real server's
 *   `probes` flow schema is exempt: a loaded server still answers its liveness checks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../base/errors.js';
import { parsePath, requestUrl, verbOf } from './http.js';

export interface FlowControlOptions {
  maxInFlight: number;
  maxPendingBytes: number;
  writeTimeoutMs: number;
  /** How long a request may wait for its user's share; 0: no waiting, 429 at once. */
  queueWaitMs: number;
  /** Requests one user may have waiting; beyond, 429 at once. */
  maxQueuedPerUser: number;
}

export const FLOW_CONTROL_DEFAULTS: FlowControlOptions = {
  maxInFlight: 400,
  maxPendingBytes: 256 * 1024 * 1024,
  writeTimeoutMs: 60_000,
  queueWaitMs: 15_000,
  maxQueuedPerUser: 50,
};

/** How often waiting requests are looked at again: unread answers drain without an event. */
const DISPATCH_POLL_MS = 50;

function tooManyRequests(): ApiError {
  return new ApiError(
    429,
    'TooManyRequests',
    'Too many requests, please try again later.',
    { retryAfterSeconds: 1 },
    { 'retry-after': '1' },
  );
}

/**
 * Whether a request is a watch: long-running, outside the in-flight bound as in the real server.
 * Decided as the router decides how to serve it (the same path and query parsing), so a list
 * cannot pass for a watch (`?watch=false&watch=true`, `?watch=TRUE`) and escape the bounds.
 */
export function isLongRunning(req: IncomingMessage): boolean {
  let url: URL;
  try {
    url = requestUrl(req.url ?? '/');
  } catch {
    return false;
  }
  const info = parsePath(url.pathname.replace(/\/+$/, '') || '/');
  return info.kind === 'resource' && verbOf(req.method ?? 'GET', info.request, url.searchParams) === 'watch';
}

/** Whether a request is a health probe, which no limit may refuse. */
export function isProbe(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && /^\/(?:healthz|livez|readyz)\/?(?:\?|$)/.test(req.url ?? '');
}

interface Waiter {
  readonly res: ServerResponse;
  readonly admitted: () => void;
  readonly timer: NodeJS.Timeout | undefined;
}

/** One user's requests: those holding a share and those waiting for one. */
interface Flow {
  readonly user: string;
  readonly held: Set<ServerResponse>;
  readonly waiting: Waiter[];
}

const unread = (res: ServerResponse): number => (res.socket?.writableLength ?? 0) + res.writableLength;

export class FlowControl {
  private readonly flows = new Map<string, Flow>();
  private inFlight = 0;
  private poll: NodeJS.Timeout | undefined;

  constructor(private readonly options: FlowControlOptions) {}

  /** Bytes answered but not yet taken by the clients of the requests in flight. */
  pendingBytes(): number {
    let sum = 0;
    for (const flow of this.flows.values()) sum += this.bytesOf(flow);
    return sum;
  }

  /**
   * Admits a request of `user` (resolves when it may run; rejects with the 429 when it cannot
   * wait) and watches its answer: counted until written out, cut when its client does not read it
   * in time. Probes and watches are admitted at once, uncounted.
   */
  admit(req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
    if (isProbe(req)) return Promise.resolve();
    if (isLongRunning(req)) {
      // Uncounted, but a watch the server ended (timed out, or cut for not keeping up) holds what
      // its client has not read like any answer: cut after writeTimeoutMs too, never kept forever.
      this.cutWhenUnread(res);
      return Promise.resolve();
    }
    const flow = this.flowOf(user);
    if (flow.waiting.length === 0 && this.fits(flow)) {
      this.hold(flow, res);
      return Promise.resolve();
    }
    if (this.options.queueWaitMs <= 0 || flow.waiting.length >= this.options.maxQueuedPerUser) {
      this.forgetIfIdle(flow);
      return Promise.reject(tooManyRequests());
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        const i = flow.waiting.indexOf(waiter);
        if (i >= 0) flow.waiting.splice(i, 1);
        if (waiter.timer) clearTimeout(waiter.timer);
        this.forgetIfIdle(flow);
      };
      const timer = setTimeout(() => {
        leave();
        reject(tooManyRequests());
      }, this.options.queueWaitMs);
      timer.unref();
      const waiter: Waiter = {
        res,
        timer,
        admitted: () => {
          leave();
          res.off('close', leave);
          this.hold(flow, res);
          resolve();
        },
      };
      // A client that goes away while waiting is simply forgotten: there is no one to answer.
      res.once('close', leave);
      flow.waiting.push(waiter);
      this.schedulePoll();
    });
  }

  private flowOf(user: string): Flow {
    let flow = this.flows.get(user);
    if (!flow) this.flows.set(user, (flow = { user, held: new Set(), waiting: [] }));
    return flow;
  }

  private forgetIfIdle(flow: Flow): void {
    if (flow.held.size === 0 && flow.waiting.length === 0 && this.flows.get(flow.user) === flow) this.flows.delete(flow.user);
  }

  private bytesOf(flow: Flow): number {
    let sum = 0;
    for (const res of flow.held) sum += unread(res);
    return sum;
  }

  /** Whether `flow` may take one more request: within the server's bound and its user's share. */
  private fits(flow: Flow): boolean {
    if (this.inFlight >= this.options.maxInFlight) return false;
    let users = 0;
    for (const f of this.flows.values()) if (f === flow || f.held.size > 0 || f.waiting.length > 0) users++;
    const share = (budget: number): number => budget / (users + 1);
    return flow.held.size < Math.max(1, share(this.options.maxInFlight)) && this.bytesOf(flow) < share(this.options.maxPendingBytes);
  }

  private hold(flow: Flow, res: ServerResponse): void {
    flow.held.add(res);
    this.inFlight++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      flow.held.delete(res);
      this.inFlight--;
      this.forgetIfIdle(flow);
      this.dispatch();
    };
    res.once('finish', release);
    res.once('close', release);
    this.cutWhenUnread(res);
  }

  /** Closes the connection of an answer its client has not read within writeTimeoutMs of its end. */
  private cutWhenUnread(res: ServerResponse): void {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => clearTimeout(timer);
    res.once('finish', done);
    res.once('close', done);
    // `prefinish`: the handler has ended the answer; from here only the client's reading is awaited.
    res.once('prefinish', () => {
      if (res.writableFinished) return;
      timer = setTimeout(() => res.destroy(), this.options.writeTimeoutMs);
      timer.unref();
    });
  }

  /** Admits waiting requests while they fit, one per user in turn. */
  private dispatch(): void {
    let progress = true;
    while (progress) {
      progress = false;
      for (const flow of [...this.flows.values()]) {
        const next = flow.waiting[0];
        if (next && this.fits(flow)) {
          next.admitted();
          progress = true;
        }
      }
    }
  }

  private schedulePoll(): void {
    if (this.poll) return;
    this.poll = setInterval(() => {
      this.dispatch();
      let waiting = false;
      for (const flow of this.flows.values()) waiting ||= flow.waiting.length > 0;
      if (!waiting && this.poll) {
        clearInterval(this.poll);
        this.poll = undefined;
      }
    }, DISPATCH_POLL_MS);
    this.poll.unref();
  }
}
