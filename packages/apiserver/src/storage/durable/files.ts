/**
 * File operations for the data directory that neither leak data (files 0600, a created directory
 * 0700) nor can be redirected: temp files are created exclusively (O_EXCL) with random names and
 * never opened through a symlink (O_NOFOLLOW), then renamed into place after an fsync.
 */
import { constants, type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
export const TEMP_SUFFIX = '.tmp';

const { O_CREAT, O_EXCL, O_WRONLY, O_APPEND, O_NOFOLLOW, O_RDONLY } = constants;

/** Creates a new file that must not exist yet (a symlink in its place is refused too). */
export function createExclusive(path: string, flags = O_WRONLY): Promise<FileHandle> {
  return open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
}

/** Opens an existing log for appending, refusing a symlink in its place. */
export function openForAppend(path: string): Promise<FileHandle> {
  return open(path, O_WRONLY | O_APPEND | O_NOFOLLOW);
}

/**
 * Writes all of `data` at the file's end. `write` may write less than asked (a file-size limit, a
 * full disk): the rest is written again, and a write that makes no progress is an error, so a
 * caller never takes a record cut short for one on disk.
 */
export async function writeAll(fh: FileHandle, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off);
    if (bytesWritten <= 0) throw new Error(`short write: ${off} of ${data.length} bytes written, then none`);
    off += bytesWritten;
  }
}

/** Makes a rename or a new file in `dir` durable (a directory's entries have their own fsync). */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, O_RDONLY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Writes `data` to `path` atomically: an exclusive temp file beside it, fsync, rename, fsync of the directory. */
export function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  return writeChunksAtomic(path, [data]);
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * As writeFileAtomic, with the content given in pieces and written in batches of about 1 MiB:
 * no one string or buffer need hold it all (V8 strings end at 512 MiB).
 */
export async function writeChunksAtomic(path: string, chunks: Iterable<string | Buffer>): Promise<void> {
  const tmp = `${path}.${randomBytes(8).toString('hex')}${TEMP_SUFFIX}`;
  const fh = await createExclusive(tmp);
  try {
    let batch: Buffer[] = [];
    let size = 0;
    for (const chunk of chunks) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      batch.push(b);
      size += b.length;
      if (size >= CHUNK_BYTES) {
        await writeAll(fh, Buffer.concat(batch));
        batch = [];
        size = 0;
      }
    }
    if (size > 0) await writeAll(fh, Buffer.concat(batch));
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(dirname(path));
}
