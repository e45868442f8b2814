/**
 * HTTP/1.1 over a bare socket, for requests no HTTP client sends (unknown methods, control bytes in
 * the request line, lying Content-Length, broken chunking) and answers read byte for byte: what
 * came back, parsed into responses, and how the connection ended.
 */
import { connect } from 'node:net';

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The body ended before its Content-Length or final chunk (a stream cut by the client). */
  truncated: boolean;
}

export interface Exchange {
  /** Final responses in order (interim 1xx ones left out). */
  responses: ParsedResponse[];
  /** Bytes after the last response that are not a response (nothing for a well-behaved server). */
  junk: Buffer;
  /** `closed`: the server closed; `cut`: we stopped reading after `readMs` (a stream still open); `reset`: ECONNRESET and the like. */
  ending: 'closed' | 'cut' | 'reset';
  error?: string;
}

export interface SendOptions {
  /** Stop reading this long after the first response's head arrived (watch streams). */
  streamMs?: number;
  /** Give up waiting for an answer after this long. */
  timeoutMs?: number;
  /** The request is a HEAD: its response has no body whatever its Content-Length says. */
  head?: boolean;
}

/** Sends `bytes` to host:port, reads until the server closes (or the limits), parses responses. */
export function exchange(host: string, port: number, bytes: Buffer, options: SendOptions = {}): Promise<Exchange> {
  const { streamMs = 250, timeoutMs = 8000, head = false } = options;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    let streamTimer: NodeJS.Timeout | undefined;
    const finish = (ending: Exchange['ending'], error?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(streamTimer);
      socket.destroy();
      const { responses, junk } = parseResponses(Buffer.concat(chunks), head);
      resolve({ responses, junk, ending, error });
    };
    const socket = connect(port, host, () => {
      socket.write(bytes);
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (streamTimer === undefined && finalHeadArrived(Buffer.concat(chunks))) {
        streamTimer = setTimeout(() => finish('cut'), streamMs);
      }
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish('reset', err.code ?? err.message));
    const timer = setTimeout(() => finish('cut', `no end within ${timeoutMs} ms`), timeoutMs);
  });
}

/** A final (not 1xx, such as 100 Continue) response head is complete in `data`. */
function finalHeadArrived(data: Buffer): boolean {
  const text = data.toString('latin1');
  const final = /HTTP\/1\.[01] [2-9]\d\d/.exec(text);
  return final !== null && text.indexOf('\r\n\r\n', final.index) >= 0;
}

/** Parses consecutive HTTP/1.1 responses (Content-Length, chunked, or to the end); `head`: the first answers a HEAD. */
export function parseResponses(data: Buffer, head = false): { responses: ParsedResponse[]; junk: Buffer } {
  const responses: ParsedResponse[] = [];
  let at = 0;
  while (at < data.length) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const lines = data.subarray(at, headEnd).toString('latin1').split('\r\n');
    const line = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (!line) break;
    const status = Number(line[1]);
    const headers: Record<string, string> = {};
    for (const h of lines.slice(1)) {
      const colon = h.indexOf(':');
      if (colon > 0) headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    }
    let p = headEnd + 4;
    let body: Buffer;
    let truncated = false;
    const declared = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
    // The answer to a HEAD has no body; but an answer from before the request was parsed (a refused
    // request line) does not know it was a HEAD: its body is exactly what follows, to the close.
    const headAnswer =
      head && responses.length === 0 && !(declared !== undefined && declared > 0 && data.length - (headEnd + 4) === declared);
    if (status < 200 || status === 204 || status === 304 || headAnswer) {
      body = Buffer.alloc(0);
    } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const sizeEnd = data.indexOf('\r\n', p);
        if (sizeEnd < 0) {
          truncated = true;
          p = data.length;
          break;
        }
        const size = parseInt(data.subarray(p, sizeEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) {
          truncated = true;
          p = data.length;
          break;
        }
        p = sizeEnd + 2;
        if (size === 0) {
          const trailerEnd = data.indexOf('\r\n', p);
          p = trailerEnd < 0 ? data.length : trailerEnd + 2;
          break;
        }
        if (p + size > data.length) {
          parts.push(data.subarray(p));
          truncated = true;
          p = data.length;
          break;
        }
        parts.push(data.subarray(p, p + size));
        p += size + 2;
      }
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      body = data.subarray(p, p + length);
      truncated = body.length < length;
      p = Math.min(data.length, p + length);
    } else {
      body = data.subarray(p);
      p = data.length;
    }
    at = p;
    if (status >= 200) responses.push({ status, headers, body, truncated });
  }
  return { responses, junk: data.subarray(at) };
}
