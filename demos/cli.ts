/**
 * Command-line plumbing shared by the demos (not part of the rxkube package): flags through
 * node:util's parseArgs with messages that name the flag, a wait for Ctrl-C, and a temporary
 * directory that goes when the process does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type FlagKind = 'string' | 'number' | 'boolean';
export type FlagSpec = Readonly<Record<string, FlagKind>>;
export type ParsedFlags<S extends FlagSpec> = {
  -readonly [K in keyof S]?: S[K] extends 'number' ? number : S[K] extends 'boolean' ? boolean : string;
};

/** Parses `args` by `spec` (`-h` is `--help`); throws UsageError naming the flag and what was wrong. */
export function parseFlags<S extends FlagSpec>(args: readonly string[], spec: S): ParsedFlags<S> {
  const known = Object.keys(spec)
    .map((f) => `--${f}`)
    .join(', ');
  const options = Object.fromEntries(
    Object.entries(spec).map(([name, kind]) => [name, { type: kind === 'boolean' ? 'boolean' : 'string' } as const]),
  );
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({ args: args.map((a) => (a === '-h' ? '--help' : a)), options, strict: true, allowPositionals: false }));
  } catch (err) {
    const code = (err as { code?: string }).code;
    const flag = /'(-[^']*)'/.exec(String((err as Error).message))?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown flag ${flag} (known: ${known})`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`unexpected argument ${flag || (err as Error).message}`);
    throw new UsageError((err as Error).message.split('.')[0] ?? String(err));
  }
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'string' || spec[name] !== 'number') {
      if (value !== undefined && !Array.isArray(value)) out[name] = value;
      continue;
    }
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number >= 0, got '${value}'`);
    out[name] = n;
  }
  return out as ParsedFlags<S>;
}

/** Resolves with the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * A new directory in the system's temporary directory, removed when the process exits — after
 * Ctrl-C as well: a demo waiting in `untilSignal()` returns and exits; on a signal nothing else
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
