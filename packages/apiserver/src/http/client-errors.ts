/**
 * Answers for requests Node's HTTP layer refuses before they reach the handler: a request line or
 * header it cannot parse (an unknown method, a control character in the path, a Content-Length
 * that lies), headers over its 16 KiB limit or too slow, CONNECT, an `Expect` other than
 * 100-continue, HTTP/1.1 without `Host`. Node's defaults close the connection (CONNECT) or answer
 * with an empty body; the real server answers each with a Status, so this does too.
 *
 * What still ends without a Status: a connection whose client already went away (nothing can be
 * written), a parse error while a response is partly sent (a Status cannot be put inside it; the
 * connection is closed), and TLS handshake failures (no HTTP was spoken).
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, badRequest, methodNotAllowed, reasonForCode } from '../base/errors.js';
import { sendError } from './http.js';

/** How long a refused connection may take to close after its answer before it is destroyed. */
const CLOSE_GRACE_MS = 2000;

/** An error from Node's HTTP parser or its timers: `code` like HPE_INVALID_METHOD, `reason` in words. */
interface ParserError extends Error {
  code?: string;
  reason?: string;
  /** The bytes the parser was given. */
  rawPacket?: Buffer;
}

/** A method-shaped first word (an HTTP token), as opposed to binary bytes such as a TLS hello. */
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ /;

/** The Status for what the parser refused, worded after the real (Go) server's answers. */
export function clientErrorStatus(err: ParserError): ApiError {
  const why = err.reason ?? err.message;
  switch (err.code) {
    case 'HPE_INVALID_METHOD':
      // Go serves any token as a method and the real server answers it 405; Node's parser knows a fixed list.
      if (METHOD_TOKEN.test(err.rawPacket?.subarray(0, 64).toString('latin1') ?? '')) return methodNotAllowed();
      return badRequest(`malformed HTTP request: ${why} (${err.code})`);
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        431,
        'RequestHeaderFieldsTooLarge',
        'Request Header Fields Too Large: the request line and headers exceed 16384 bytes',
        {},
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(413, reasonForCode(413), 'the request body has chunk extensions over the limit', {});
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'Timeout', 'Timeout: the request headers did not arrive in time', {});
    default:
      return badRequest(`malformed HTTP request: ${why}${err.code ? ` (${err.code})` : ''}`);
  }
}

/** A whole HTTP/1.1 response carrying `err` as a Status, for a socket no ServerResponse owns. */
export function rawStatusResponse(err: ApiError): string {
  const body = JSON.stringify(err.toStatus());
  return (
    `HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? 'Error'}\r\n` +
    'content-type: application/json\r\n' +
    'cache-control: no-cache, private\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** Writes the answer, stops sending, reads (and drops) what still comes so the close is no reset. */
function answerAndClose(socket: Duplex, err: ApiError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawStatusResponse(err));
  socket.resume();
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/** What the server must tell this module: the response in flight on a socket, if any. */
export interface InFlight {
  responseOn(socket: Duplex): { req: IncomingMessage; res: ServerResponse } | undefined;
}

/** Tracks the response in flight per socket (one at a time: Node does not pipeline answers). */
export function inFlightTracker(): InFlight & { track(req: IncomingMessage, res: ServerResponse): void } {
  const bySocket = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  return {
    track(req, res) {
      const socket = req.socket;
      const entry = { req, res };
      bySocket.set(socket, entry);
      res.once('close', () => {
        if (bySocket.get(socket) === entry) bySocket.delete(socket);
      });
    },
    responseOn: (socket) => bySocket.get(socket),
  };
}

/**
 * Answers on `server` what Node's HTTP layer refuses, as Status objects. A parse error while a
 * request is being answered is either its broken body (the request is not complete: it gets the
 * 400, the handler's read ends when the connection closes) or garbage after it (answered once
 * the response in flight is done).
 */
export function answerClientErrors(server: Server, inFlight: InFlight): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    // The parser reports again for every later chunk; the first answer stands.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = clientErrorStatus(err);
    const current = inFlight.responseOn(socket);
    if (current === undefined || current.res.writableFinished) {
      answerAndClose(socket, status);
    } else if (!current.req.complete && !current.res.headersSent) {
      sendError(current.res, new ApiError(status.code, status.reason, status.message, status.details, { connection: 'close' }));
      current.res.once('finish', () => socket.end());
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    } else if (!current.req.complete) {
      socket.destroy();
    } else {
      current.res.once('finish', () => answerAndClose(socket, status));
      current.res.once('close', () => {
        if (!current.res.writableFinished) socket.destroy();
      });
    }
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerAndClose(socket, methodNotAllowed());
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    sendError(
      res,
      new ApiError(
        417,
        'ExpectationFailed',
        `Expectation Failed: unsupported Expect header ${JSON.stringify(req.headers.expect ?? '')}; only 100-continue is supported`,
        {},
      ),
    );
  });
}

/** HTTP/1.1 requires `Host` (Node's own check answers without a body, so the server checks it). */
export function checkHostPresent(req: IncomingMessage): void {
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    throw badRequest('missing required Host header');
  }
}
