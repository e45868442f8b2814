/** Flag parsing for the `rxkube` subcommands: `--name value`, `--name=value` and boolean `--name`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  readonly [flag: string]: 'string' | 'number' | 'boolean';
}

export type ParsedFlags<S extends FlagSpec> = {
  -readonly [K in keyof S]?: S[K] extends 'number' ? number : S[K] extends 'boolean' ? boolean : string;
};

/** Parses `args` by `spec`; `-h` means `--help`. Throws UsageError naming the flag and what was wrong. */
export function parseFlags<S extends FlagSpec>(args: readonly string[], spec: S): ParsedFlags<S> {
  const out: Record<string, string | number | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] === '-h' ? '--help' : args[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const type = spec[name];
    if (type === undefined)
      throw new UsageError(
        `unknown flag --${name} (known: ${Object.keys(spec)
          .map((f) => `--${f}`)
          .join(', ')})`,
      );
    if (type === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      out[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    if (type === 'number') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number >= 0, got '${value}'`);
      out[name] = n;
    } else {
      out[name] = value;
    }
  }
  return out as ParsedFlags<S>;
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening for both. */
export function waitForSignal(): Promise<NodeJS.Signals> {
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
