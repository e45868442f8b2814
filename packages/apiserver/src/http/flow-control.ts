/**
 * Bounds on what clients can pin in the server's memory, after the real server's max-in-flight
 * filter and request timeout. A request is in flight from its arrival until its answer is written
 * out; a client that asks for a large list and never reads holds its answer in the socket buffer.
 *
 * - At most `maxInFlight` requests in flight (watches, long-running, not counted), and the answers
 *   in flight together hold at most `maxPendingBytes` not yet written: beyond either, a request is
 *   answered 429 TooManyRequests with Retry-After: 1, as the real server answers.
 * - An answer the client has not read within `writeTimeoutMs` after the handler ended it is cut
 *   (the connection closed), freeing what it held.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/errors.js';

export interface FlowControlOptions {
  maxInFlight: number;
  maxPendingBytes: number;
  writeTimeoutMs: number;
}

export const FLOW_CONTROL_DEFAULTS: FlowControlOptions = {
  maxInFlight: 400,
  maxPendingBytes: 256 * 1024 * 1024,
  writeTimeoutMs: 60_000,
};

function tooManyRequests(): ApiError {
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 }, { 'retry-after': '1' });
}

/** Whether a request is a watch: long-running, outside the in-flight bound as in the real server. */
export function isLongRunning(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return /[?&]watch=(1|true)(&|$)/i.test(url) || /^\/apis?\/(?:[^/?]+\/){1,2}watch\//.test(url);
}

export class FlowControl {
  private readonly inFlight = new Set<ServerResponse>();

  constructor(private readonly options: FlowControlOptions) {}

  /** Bytes answered but not yet taken by the clients of the requests in flight. */
  pendingBytes(): number {
    let sum = 0;
    for (const res of this.inFlight) sum += (res.socket?.writableLength ?? 0) + res.writableLength;
    return sum;
  }

  /**
   * Admits a request (throws the 429 if it cannot be) and watches its answer: counted until
   * written out, cut when its client does not read it in time.
   */
  admit(req: IncomingMessage, res: ServerResponse): void {
    if (isLongRunning(req)) return;
    if (this.inFlight.size >= this.options.maxInFlight || this.pendingBytes() >= this.options.maxPendingBytes) throw tooManyRequests();
    this.inFlight.add(res);
    let timer: NodeJS.Timeout | undefined;
    const release = (): void => {
      this.inFlight.delete(res);
      if (timer) clearTimeout(timer);
    };
    res.once('finish', release);
    res.once('close', release);
    // `prefinish`: the handler has ended the answer; from here only the client's reading is awaited.
    res.once('prefinish', () => {
      if (res.writableFinished) return;
      timer = setTimeout(() => res.destroy(), this.options.writeTimeoutMs);
      timer.unref();
    });
  }
}
