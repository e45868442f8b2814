/**
 * Write-ahead log records: each one framed as [length u32 LE][crc32 u32 LE][JSON payload], so a
 * record torn by a crash (a short write, or zeros a file system left after it) is recognized at
 * replay instead of being read as data. Pure: no I/O.
 */
import { crc32 } from 'node:zlib';
import type { JsonObject } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';

export type LogRecord =
  /** An object as stored (created or replaced); its resourceVersion is in its metadata. */
  | { t: 'put'; r: string; o: JsonObject }
  | { t: 'del'; r: string; ns: string; n: string; rv: number }
  /** A whole resource type forgotten (its CRD deleted). */
  | { t: 'drop'; r: string }
  /** The resourceVersion counter at a start: versions up to it are never handed out again. */
  | { t: 'rv'; rv: number };

const HEADER = 8;

export function encodeRecord(rec: LogRecord): Buffer {
  const payload = Buffer.from(JSON.stringify(rec), 'utf8');
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  payload.copy(frame, HEADER);
  return frame;
}

function isRecord(v: unknown): v is LogRecord {
  if (!isJsonObject(v)) return false;
  switch (v.t) {
    case 'put':
      return typeof v.r === 'string' && isJsonObject(v.o);
    case 'del':
      return typeof v.r === 'string' && typeof v.ns === 'string' && typeof v.n === 'string' && typeof v.rv === 'number';
    case 'drop':
      return typeof v.r === 'string';
    case 'rv':
      return typeof v.rv === 'number';
    default:
      return false;
  }
}

/**
 * Whether a whole, valid frame starts anywhere at or after `from`. A bad record whose length runs
 * past the end looks like a torn last write, but if its length byte was damaged the records it
 * seems to swallow are still there, and finding one means corruption, not a tear. JSON text holds
 * no NUL bytes, so a frame header (its length's high bytes) is not found inside a torn payload.
 */
function hasFrameAfter(buf: Buffer, from: number): boolean {
  for (let p = from; p + HEADER < buf.length; p++) {
    const len = buf.readUInt32LE(p);
    const end = p + HEADER + len;
    if (len < 2 || end > buf.length || buf[p + HEADER] !== 0x7b || buf[end - 1] !== 0x7d) continue;
    if (crc32(buf.subarray(p + HEADER, end)) === buf.readUInt32LE(p + 4)) return true;
  }
  return false;
}

export interface DecodedLog {
  records: LogRecord[];
  /** Bytes of whole, valid records; a torn tail after them is cut off at this offset. */
  validBytes: number;
}

/**
 * Reads records until the end or a torn tail. A bad record followed by more data that is not all
 * zeros is corruption in the middle of the log, not a torn write, and is an error: replaying past
 * it would silently lose what it held.
 */
export function decodeLog(buf: Buffer, file: string): DecodedLog {
  const records: LogRecord[] = [];
  let off = 0;
  while (off < buf.length) {
    const bad = (): DecodedLog => {
      if (buf.subarray(off).every((b) => b === 0)) return { records, validBytes: off };
      const len = buf.length - off >= HEADER ? buf.readUInt32LE(off) : 0;
      if (off + HEADER + len >= buf.length && !hasFrameAfter(buf, off + 1)) return { records, validBytes: off };
      throw new Error(`write-ahead log ${file} is corrupt at byte ${off} (a bad record followed by more data)`);
    };
    if (buf.length - off < HEADER) return bad();
    const len = buf.readUInt32LE(off);
    const end = off + HEADER + len;
    if (len === 0 || end > buf.length) return bad();
    const payload = buf.subarray(off + HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(off + 4)) return bad();
    let rec: unknown;
    try {
      rec = JSON.parse(payload.toString('utf8'));
    } catch {
      return bad();
    }
    if (!isRecord(rec)) return bad();
    records.push(rec);
    off = end;
  }
  return { records, validBytes: off };
}
