/**
 * HTTP/1.1 pipelining: Node emits every request a connection sends at once, while the answer to
 * the one before is still being made, and only queues the answers in order. A GET pipelined after
 * a POST would then read the store before the POST wrote it. The real server handles one request
 * of a connection at a time; so does this: each request of a connection starts once the answer
 * to the previous one is finished (or its connection closed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Wraps `handler` so that the requests of one connection run one after another. */
export function oneAtATimePerConnection(handler: Handler): Handler {
  const previous = new WeakMap<Duplex, Promise<void>>();
  return (req, res) => {
    const socket = req.socket;
    const done = new Promise<void>((resolve) => {
      res.once('finish', resolve);
      res.once('close', resolve);
    });
    const before = previous.get(socket);
    previous.set(socket, done);
    if (before === undefined) handler(req, res);
    else void before.then(() => handler(req, res));
  };
}
