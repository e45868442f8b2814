/**
 * Splits a byte stream into newline-terminated lines, as a watch stream is read. Linear: each byte
 * is scanned for a newline once (the scan of a line in many chunks resumes where the last chunk
 * ended) and a line's chunks are joined once, when its newline comes. A line longer than the
 * limit is an error rather than memory without bound.
 */

/** The default limit of one watch line: far above any object the API server stores (etcd takes 1.5 MiB). */
export const MAX_WATCH_LINE_BYTES = 64 * 1024 * 1024;

export interface LineSplitter {
  /** Feeds a chunk: `onLine` runs for each line it completes. Throws LineTooLongError past the limit. */
  push(chunk: Buffer): void;
  /** Bytes examined for a newline so far (each byte once). */
  readonly scannedBytes: number;
}

/** A line (without its newline) reached the splitter's limit before it ended. */
export class LineTooLongError extends Error {
  override readonly name = 'LineTooLongError';
}

const NEWLINE = 0x0a;

/** A splitter that calls `onLine` with each line decoded as UTF-8 (a newline byte is never inside a UTF-8 sequence). */
export function lineSplitter(onLine: (line: string) => void, maxLineBytes = MAX_WATCH_LINE_BYTES): LineSplitter {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let scannedBytes = 0;
  const tooLong = (bytes: number): LineTooLongError =>
    new LineTooLongError(`a line of more than ${maxLineBytes} bytes (${bytes} so far, no newline)`);
  return {
    get scannedBytes() {
      return scannedBytes;
    },
    push(chunk) {
      let start = 0;
      for (let newline = chunk.indexOf(NEWLINE, start); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
        scannedBytes += newline + 1 - start;
        const length = pendingBytes + newline - start;
        if (length > maxLineBytes) throw tooLong(length);
        const tail = chunk.subarray(start, newline);
        const line = pending.length === 0 ? tail.toString('utf8') : Buffer.concat([...pending, tail], length).toString('utf8');
        pending = [];
        pendingBytes = 0;
        start = newline + 1;
        onLine(line);
      }
      scannedBytes += chunk.length - start;
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > maxLineBytes) throw tooLong(pendingBytes);
      }
    },
  };
}
