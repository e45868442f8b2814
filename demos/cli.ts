/**
 * Command-line plumbing shared by the demos (not part of the rxkube package): the `rxkube`
 * command's flag parser and wait for Ctrl-C, and a temporary directory that goes when the
 * process does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export { parseFlags, UsageError, waitForSignal } from '../lib/cli/index.js';

/**
 * A new directory in the system's temporary directory, removed when the process exits — after
 * Ctrl-C as well: a demo waiting in `waitForSignal()` returns and exits; on a signal nothing else
 * listens for (Ctrl-C during start-up), the directory is removed and the signal raised again.
 */
export function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (process.listenerCount(signal) > 0) return; // another listener handles it; 'exit' removes the directory
      remove();
      process.kill(process.pid, signal);
    });
  }
  return dir;
}
