/**
 * Durable state for the API server's `dataDir`, kept the way etcd keeps its promise that an
 * acknowledged write survives a crash: every store change is appended to a write-ahead log and
 * fdatasync'ed before the client gets its answer. Concurrent writers share one fsync (group
 * commit): changes appended while a flush is on the disk go out together in the next one.
 *
 * The directory holds `snapshot.json` (all objects at a resourceVersion, and the log generation
 * that follows it) and `wal-<generation>.log` files. At start the snapshot and the logs after it
 * are replayed (a torn last record is cut off), then written out as a new snapshot with a fresh
 * log; the same compaction runs whenever the log outgrows `compactBytes`, and at a clean stop.
 */
import { readdir, stat, mkdir, access, unlink, constants, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { nameOf, namespaceOf } from '../../base/meta.js';
import { lockDirectory } from './dir-lock.js';
import { createExclusive, DIR_MODE, syncDir, TEMP_SUFFIX, writeAll, writeChunksAtomic } from './files.js';
import { decodeLog, encodeRecord, type LogRecord } from './records.js';

export interface PersistedState {
  resourceVersion: number;
  objects: { resource: string; object: JsonObject }[];
}

export interface JournalOptions {
  /** Compact the log into a new snapshot once it holds this many bytes (default 64 MiB). */
  compactBytes?: number;
  /**
   * How far the resourceVersion counter jumps at each start from existing data (default 1000):
   * versions a crashed process assigned in memory without making them durable are not reused.
   */
  restartSkip?: number;
}

export interface OpenedJournal {
  journal: Journal;
  /** The replayed state, with the counter already moved past every version used before. */
  state: PersistedState;
}

const SNAPSHOT = 'snapshot.json';
const SNAPSHOT_KIND = 'RxkubeApiServerSnapshot';
const WAL = /^wal-(\d+)\.log$/;

const walName = (gen: number): string => `wal-${String(gen).padStart(8, '0')}.log`;

const uid = process.getuid?.();

/**
 * Refuses a directory or file another user owns or may write: whoever can write there can plant
 * a snapshot or a log that this server loads as its state (RBAC bindings, Secrets) or replace the
 * files it writes. New ones are created 0700/0600; existing ones are held to the same owner.
 */
function checkOwnAndPrivate(st: { uid: number; mode: number }, what: string, fix: string): void {
  if (uid === undefined) return;
  if (st.uid !== uid)
    throw new Error(`${what} is owned by uid ${st.uid}, not by this process's user (uid ${uid}); use a directory of your own`);
  if ((st.mode & 0o022) !== 0) {
    throw new Error(
      `${what} is writable by other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); make it private (${fix}) or use another`,
    );
  }
}

/** Makes sure `dir` is a directory this process can use, creating it (0700) if missing. */
async function prepareDir(dir: string): Promise<void> {
  const fail = (reason: string): never => {
    throw new Error(`data directory ${dir}: ${reason}`);
  };
  try {
    const st = await stat(dir);
    if (!st.isDirectory()) fail('exists and is not a directory');
    checkOwnAndPrivate(st, `data directory ${dir}`, 'chmod go-w');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'ENOENT') {
      if (e.message.startsWith('data directory')) throw e;
      fail(`cannot be used (${e.code ?? e.message})`);
    }
    try {
      await mkdir(dir, { recursive: true, mode: DIR_MODE });
    } catch (mkErr) {
      fail(`cannot be created (${(mkErr as NodeJS.ErrnoException).code ?? (mkErr as Error).message})`);
    }
  }
  try {
    await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    fail(`is not readable and writable by this process (${(err as NodeJS.ErrnoException).code})`);
  }
}

async function readNoFollow(path: string): Promise<Buffer | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`data file ${path} cannot be read (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    checkOwnAndPrivate(await fh.stat(), `data file ${path}`, 'chmod 600');
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/**
 * The snapshot is JSON lines: a header (kind, resourceVersion, log, count), then one line per
 * object, so neither writing nor reading it needs one string of the whole state (V8's end at
 * 512 MiB). A snapshot of one JSON document (written before) is read as well.
 */
function* snapshotLines(state: PersistedState, log: number): Generator<string> {
  yield (
    JSON.stringify({ kind: SNAPSHOT_KIND, format: 'lines', resourceVersion: state.resourceVersion, log, count: state.objects.length }) +
    '\n'
  );
  for (const o of state.objects) yield JSON.stringify({ resource: o.resource, object: o.object }) + '\n';
}

function parseSnapshot(buf: Buffer, file: string): PersistedState & { log: number } {
  const firstEnd = buf.indexOf(0x0a);
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.subarray(0, firstEnd < 0 ? buf.length : firstEnd).toString('utf8'));
  } catch (err) {
    throw new Error(`snapshot ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (isJsonObject(parsed) && parsed.format === 'lines')
    parsed = { ...parsed, objects: snapshotObjects(buf, firstEnd + 1, file, parsed.count) };
  if (
    !isJsonObject(parsed) ||
    parsed.kind !== SNAPSHOT_KIND ||
    typeof parsed.resourceVersion !== 'number' ||
    typeof parsed.log !== 'number' ||
    !Array.isArray(parsed.objects)
  ) {
    throw new Error(`snapshot ${file} is not an rxkube apiserver snapshot (kind ${SNAPSHOT_KIND})`);
  }
  const objects = parsed.objects.filter(
    (o): o is { resource: string; object: JsonObject } => isJsonObject(o) && typeof o.resource === 'string' && isJsonObject(o.object),
  );
  return { resourceVersion: parsed.resourceVersion, log: parsed.log, objects };
}

function snapshotObjects(buf: Buffer, from: number, file: string, count: JsonValue | undefined): JsonValue[] {
  const objects: JsonValue[] = [];
  for (let start = from; start < buf.length;) {
    const end = buf.indexOf(0x0a, start);
    const stop = end < 0 ? buf.length : end;
    try {
      objects.push(JSON.parse(buf.subarray(start, stop).toString('utf8')) as JsonValue);
    } catch (err) {
      throw new Error(`snapshot ${file} is not valid JSON at byte ${start}: ${(err as Error).message}`);
    }
    start = stop + 1;
  }
  if (objects.length !== count) throw new Error(`snapshot ${file} holds ${objects.length} objects, its header says ${String(count)}`);
  return objects;
}

function rvOf(obj: JsonObject): number {
  const meta = obj.metadata;
  return isJsonObject(meta) ? Number(meta.resourceVersion) || 0 : 0;
}

/**
 * Applies log records to a snapshot. Pure. Records already reflected in the snapshot (a log
 * written while the snapshot was taken) replay to the same state: the last change of each key wins.
 */
export function replay(base: PersistedState, records: readonly LogRecord[]): PersistedState {
  const tables = new Map<string, Map<string, JsonObject>>();
  const table = (r: string): Map<string, JsonObject> => {
    let t = tables.get(r);
    if (!t) tables.set(r, (t = new Map<string, JsonObject>()));
    return t;
  };
  const key = (ns: string, n: string): string => `${ns}/${n}`;
  let rv = base.resourceVersion;
  for (const { resource, object } of base.objects) {
    table(resource).set(key(namespaceOf(object), nameOf(object)), object);
    rv = Math.max(rv, rvOf(object));
  }
  for (const rec of records) {
    switch (rec.t) {
      case 'put':
        table(rec.r).set(key(namespaceOf(rec.o), nameOf(rec.o)), rec.o);
        rv = Math.max(rv, rvOf(rec.o));
        break;
      case 'del':
        tables.get(rec.r)?.delete(key(rec.ns, rec.n));
        rv = Math.max(rv, rec.rv);
        break;
      case 'drop':
        tables.delete(rec.r);
        break;
      case 'rv':
        rv = Math.max(rv, rec.rv);
        break;
    }
  }
  const objects: PersistedState['objects'] = [];
  for (const [resource, t] of tables) for (const object of t.values()) objects.push({ resource, object });
  return { resourceVersion: rv, objects };
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Journal {
  private buffer: Buffer[] = [];
  private appended = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | undefined;
  private failure: Error | undefined;
  private logBytes = 0;
  private dump: (() => PersistedState) | undefined;
  private closed = false;
  /** Log flushes (write + fdatasync) so far: with concurrent writers, fewer than writes (group commit). */
  flushes = 0;

  private constructor(
    readonly dir: string,
    private fh: FileHandle,
    private gen: number,
    private readonly compactBytes: number,
    private readonly unlock: () => Promise<void>,
  ) {}

  /** Opens (or creates) the data directory, replays it, and starts a new log generation. */
  static async open(dir: string, options: JournalOptions = {}): Promise<OpenedJournal> {
    await prepareDir(dir);
    // A second server on the same directory would compact away the first one's live log.
    const unlock = await lockDirectory(dir, `data directory ${dir}`);
    try {
      return await Journal.openLocked(dir, options, unlock);
    } catch (err) {
      await unlock();
      throw err;
    }
  }

  private static async openLocked(dir: string, options: JournalOptions, unlock: () => Promise<void>): Promise<OpenedJournal> {
    const entries = await readdir(dir);
    // A crash can leave temp files behind (a snapshot being written): never data, always removed.
    for (const e of entries) if (e.endsWith(TEMP_SUFFIX)) await unlink(join(dir, e));
    const snapBuf = await readNoFollow(join(dir, SNAPSHOT));
    const snap = snapBuf ? parseSnapshot(snapBuf, join(dir, SNAPSHOT)) : { resourceVersion: 0, log: 0, objects: [] };
    const gens = entries
      .map((e) => WAL.exec(e))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const records: LogRecord[] = [];
    for (const g of gens) {
      if (g < snap.log) continue;
      const file = join(dir, walName(g));
      records.push(...decodeLog((await readNoFollow(file)) ?? Buffer.alloc(0), file).records);
    }
    const replayed = replay(snap, records);
    const restart = snapBuf !== undefined || gens.length > 0;
    const state = { ...replayed, resourceVersion: replayed.resourceVersion + (restart ? (options.restartSkip ?? 1000) : 0) };

    const gen = Math.max(snap.log, ...gens, 0) + 1;
    const fh = await createExclusive(join(dir, walName(gen)), constants.O_WRONLY | constants.O_APPEND);
    const journal = new Journal(dir, fh, gen, options.compactBytes ?? 64 * 1024 * 1024, unlock);
    journal.dump = () => state;
    journal.append({ t: 'rv', rv: state.resourceVersion });
    await journal.sync();
    await syncDir(dir);
    await journal.writeSnapshot(state, gen);
    for (const g of gens) await unlink(join(dir, walName(g)));
    return { journal, state };
  }

  /** Where compaction takes the current state from (the store, once it holds the replayed state). */
  snapshotFrom(dump: () => PersistedState): void {
    this.dump = dump;
  }

  /** True when everything appended is on disk. */
  get idle(): boolean {
    return this.durable === this.appended && this.failure === undefined;
  }

  append(rec: LogRecord): void {
    // Controllers inside the server may still write while it stops; no client waits for those.
    // After a disk failure nothing is acknowledged any more (sync rejects), so nothing is kept.
    if (this.closed || this.failure) return;
    const frame = encodeRecord(rec);
    this.buffer.push(frame);
    this.appended++;
    // Start on the next turn, so every change made in this one goes out in the same write.
    if (!this.flushing) this.flushing = new Promise((resolve) => setImmediate(resolve)).then(() => this.flushLoop());
  }

  /** Resolves when everything appended so far is durable; rejects if the disk failed. */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.durable >= this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq: this.appended, resolve, reject }));
  }

  /** Flushes, writes a final snapshot (so the next start replays nothing) and closes the log. */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.flushing) await this.flushing;
    this.closed = true;
    try {
      if (!this.failure) await this.compact();
      await this.fh.close();
    } finally {
      await this.unlock();
    }
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.buffer.length > 0) {
        const batch = this.buffer.length === 1 ? this.buffer[0] : Buffer.concat(this.buffer);
        const seq = this.appended;
        this.buffer = [];
        await writeAll(this.fh, batch);
        await this.fh.datasync();
        this.logBytes += batch.length;
        this.flushes++;
        this.durable = seq;
        this.waiters = this.waiters.filter((w) => (w.seq <= seq ? (w.resolve(), false) : true));
        if (this.logBytes >= this.compactBytes) await this.compact();
      }
    } catch (err) {
      this.failure = new Error(`data directory ${this.dir}: writing the log failed: ${(err as Error).message}`);
      console.error(`rxkube apiserver: ${this.failure.message}; writes are no longer acknowledged`);
      for (const w of this.waiters) w.reject(this.failure);
      this.waiters = [];
    } finally {
      this.flushing = undefined;
    }
  }

  /** Starts a new log generation and writes the state as the snapshot that precedes it. */
  private async compact(): Promise<void> {
    const gen = this.gen + 1;
    const fh = await createExclusive(join(this.dir, walName(gen)), constants.O_WRONLY | constants.O_APPEND);
    await syncDir(this.dir);
    // From here on changes go to the new log. The state taken now may also hold some of them:
    // replaying those again over the snapshot ends in the same state.
    const old = this.fh;
    this.fh = fh;
    this.gen = gen;
    this.logBytes = 0;
    const state = this.dump?.();
    await old.close();
    if (state) await this.writeSnapshot(state, gen);
    await unlink(join(this.dir, walName(gen - 1)));
  }

  private async writeSnapshot(state: PersistedState, log: number): Promise<void> {
    await writeChunksAtomic(join(this.dir, SNAPSHOT), snapshotLines(state, log));
  }
}
