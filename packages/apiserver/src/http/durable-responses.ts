/**
 * Answers that wait for the write-ahead log: with a data directory, no byte of a response leaves
 * before the changes it may show are on disk.
 */
import type { ServerResponse } from 'node:http';
import type { Journal } from '../storage/durable/journal.js';

export /**
 * Holds a response's bytes until every change made so far is in the fsynced log, so no client
 * (not even a watcher or a reader) sees a write that a crash could still take back. When the log
 * is idle the bytes go out at once; otherwise they wait for the flush in progress or the next,
 * which concurrent writers share (group commit). Order within a response is kept.
 */
function holdUntilDurable(res: ServerResponse, journal: Journal): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let tail: Promise<unknown> | undefined;
  const later = (send: () => void): void => {
    const mine: Promise<unknown> = Promise.all([tail, journal.sync()]).then(
      () => {
        if (tail === mine) tail = undefined;
        send();
      },
      (err: unknown) => res.destroy(err as Error),
    );
    tail = mine;
  };
  res.write = ((...args: unknown[]) => {
    if (tail === undefined && journal.idle) return write(...args);
    later(() => write(...args));
    return true;
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    if (tail === undefined && journal.idle) return end(...args);
    later(() => end(...args));
    return res;
  }) as typeof res.end;
}
