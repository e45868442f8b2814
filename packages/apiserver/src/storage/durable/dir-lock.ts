/**
 * One server per data directory, held by the operating system rather than by a process id.
 *
 * A pid file trusts `kill(pid, 0)`, which a killed process passes until its parent reaps it (a
 * zombie), and which an unrelated process passes once the pid is reused: a restart right after
 * kill -9 could be refused. Node has no flock. What the kernel does release at a process's exit,
 * before it is a zombie and on Linux and macOS alike, is every descriptor it held, a listening
 * Unix socket among them: a connect to it is then refused (ECONNREFUSED), and never again
 * accepted. So each server binds a socket of its own in the directory (`lock-<pid>-<random>.sock`,
 * a name no one else takes), then looks at the others: one that accepts a connection is a live
 * server, and this one steps back; one that refuses is a dead server's, and is removed.
 *
 * A killed process is a zombie a moment before its last thread has exited and its descriptors
 * are closed: a socket that still accepts while the process its name gives is a zombie or gone
 * is probed again until it refuses (at most DYING_WAIT_MS). Only a refusal ever frees a lock.
 *
 * Two servers starting at once each bind before they look, so at least one sees the other: both
 * may step back, both can never go on. A directory on a network filesystem is not covered (a
 * socket there is not shared between machines), as a pid file did not cover it either.
 */
import { execFile } from 'node:child_process';
import { createServer, connect, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { chmod, constants, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE } from './files.js';

const LOCK_SOCKET = /^lock-(\d+)-[0-9a-f]+\.sock$/;

/** The longest socket path macOS binds (sun_path is 104 bytes there, 108 on Linux, with its NUL). */
const MAX_SOCKET_PATH = 103;

/**
 * Where the lock sockets of `dir` are addressed: the directory itself, or on Linux, for a path
 * too long for a socket address, the same directory through an open descriptor (`close` it after).
 */
async function socketBase(dir: string): Promise<{ base: string; close: () => Promise<void> }> {
  const longest = Buffer.byteLength(join(dir, `lock-${'9'.repeat(10)}-${'f'.repeat(12)}.sock`));
  if (longest <= MAX_SOCKET_PATH) return { base: dir, close: () => Promise.resolve() };
  if (process.platform !== 'linux') {
    throw new Error(
      `data directory ${dir}: its path is too long for the lock socket (${longest} bytes with the socket's name, at most ${MAX_SOCKET_PATH}); use a shorter path`,
    );
  }
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  return { base: `/proc/self/fd/${fh.fd}`, close: () => fh.close() };
}

function listenOn(address: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    // A connection only tells that this server lives: it is closed at once.
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(address, () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

/** Whether a server listens on the socket: refused or gone is a dead one's; anything else counts as alive. */
function listening(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(address);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT');
    });
  });
}

/** How long a dying process's socket may still accept before it counts as a live server's. */
const DYING_WAIT_MS = 2000;

/** Whether process `pid` is gone or a zombie (its threads exiting); false when it runs, or cannot be told. */
async function dying(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  if (process.platform === 'linux') {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The state follows the command name in parentheses, which may itself hold ') '.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  }
  const ps = await new Promise<string>((resolve) =>
    execFile('ps', ['-o', 'stat=', '-p', String(pid)], (err, out) => resolve(err ? '' : out.trim())),
  );
  return ps.startsWith('Z');
}

/** Whether the lock at `address`, named for process `pid`, is held by a live server. */
async function held(address: string, pid: number): Promise<boolean> {
  const deadline = Date.now() + DYING_WAIT_MS;
  for (;;) {
    if (!(await listening(address))) return false;
    if (Date.now() > deadline || !(await dying(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Takes `dir` for this server: refused, naming the process, while another live server holds it
 * (this process included); a dead server's lock (a crash, kill -9, a zombie not yet reaped, a
 * copied directory) is removed. Returns the release.
 */
export async function lockDirectory(dir: string, what: string): Promise<() => Promise<void>> {
  const name = `lock-${process.pid}-${randomBytes(6).toString('hex')}.sock`;
  const { base, close } = await socketBase(dir);
  try {
    const server = await listenOn(join(base, name)).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`${what}: cannot hold its lock socket there (${err.code ?? err.message}); use a directory on a local filesystem`);
    });
    const release = async (): Promise<void> => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await unlink(join(dir, name)).catch(() => undefined);
    };
    try {
      // Like every file of the directory: the owner's alone.
      await chmod(join(dir, name), FILE_MODE);
      for (const other of await readdir(dir)) {
        const m = LOCK_SOCKET.exec(other);
        if (!m || other === name) continue;
        const pid = Number(m[1]);
        if (await held(join(base, other), pid)) {
          throw new Error(
            `${what} is in use by another server (process ${pid}${pid === process.pid ? ', this one' : ''}); stop it first, or use another directory`,
          );
        }
        await unlink(join(dir, other)).catch(() => undefined);
      }
    } catch (err) {
      await release();
      throw err;
    }
    return release;
  } finally {
    await close();
  }
}
