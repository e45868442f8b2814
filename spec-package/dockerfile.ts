/**
 * The run stage of a Dockerfile, replayed in a directory: no image can be built on these machines,
 * so its steps (COPY, RUN, ENV, ENTRYPOINT) run here as written, against the files they name.
 */
import { spawn } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * npm for these tests: packages from the local cache when it has them (what a CI cache gives), so
 * that the time measured is installing, not asking the registry about every package again.
 */
export const NPM_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface Stage {
  readonly name: string | undefined;
  readonly from: string;
  readonly instructions: readonly { readonly op: string; readonly args: string }[];
}

export function parseDockerfile(text: string): Stage[] {
  const stages: { name: string | undefined; from: string; instructions: { op: string; args: string }[] }[] = [];
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const line of lines) {
    const [op = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op.toUpperCase() === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ from: match?.[1] ?? args, name: match?.[2], instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

export interface Replay {
  readonly env: Record<string, string>;
  readonly entrypoint: readonly string[];
  readonly user: string | undefined;
  /** What each RUN took, in ms. */
  readonly runs: readonly { readonly command: string; readonly ms: number }[];
}

/**
 * Replays the last stage in `workdir`: `COPY src dest` from `context`, `COPY --from=<stage> src
 * dest` from `stages[stage]` (a directory standing for that stage's root), `RUN` with sh, `ENV`.
 */
export async function replayRunStage(
  dockerfile: string,
  options: {
    readonly context: string;
    readonly workdir: string;
    readonly stages: Readonly<Record<string, string>>;
    readonly env: NodeJS.ProcessEnv;
  },
): Promise<Replay> {
  const stage = parseDockerfile(readFileSync(dockerfile, 'utf8')).at(-1);
  if (!stage) throw new Error(`${dockerfile}: no stage`);
  const env: Record<string, string> = {};
  const runs: { command: string; ms: number }[] = [];
  let entrypoint: string[] = [];
  let user: string | undefined;
  for (const { op, args } of stage.instructions) {
    if (op === 'COPY') {
      const from = /^--from=(\S+)\s+/.exec(args);
      const [src, dest] = (from ? args.slice(from[0].length) : args)
        .split(/\s+/)
        .reduce<[string[], string]>(([srcs], part, i, all) => (i === all.length - 1 ? [srcs, part] : [[...srcs, part], '']), [[], '']);
      const root = from ? options.stages[from[1]] : options.context;
      if (root === undefined) throw new Error(`COPY --from=${from?.[1]}: no directory given for that stage`);
      for (const s of src) {
        const target = dest.endsWith('/') ? join(options.workdir, dest, s.split('/').at(-1)!) : join(options.workdir, dest);
        cpSync(join(root, s), target, { recursive: true });
      }
    } else if (op === 'RUN') {
      const started = Date.now();
      await sh(args, options.workdir, { ...options.env, ...env });
      runs.push({ command: args, ms: Date.now() - started });
    } else if (op === 'ENV') {
      const [key, ...value] = args.split('=');
      env[key] = value.join('=');
    } else if (op === 'ENTRYPOINT') {
      entrypoint = JSON.parse(args) as string[];
    } else if (op === 'USER') {
      user = args;
    }
  }
  return { env, entrypoint, user, runs };
}

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`RUN ${command} exited ${code}:\n${output}`))));
  });
}

/**
 * Starts the entrypoint, waits until `readyUrl` answers 200, sends SIGTERM and resolves with the
 * exit code and the time from SIGTERM to exit.
 */
export async function runUntilReadyThenTerm(
  command: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly readyUrl: string; readonly timeoutMs: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stopMs: number; output: string }> {
  const [file, ...args] = command;
  const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + options.timeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before it was ready:\n${output}`);
      const ok = await fetch(options.readyUrl).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`not ready at ${options.readyUrl} within ${options.timeoutMs} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const signalled = Date.now();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const result = await exited;
  clearTimeout(timer);
  return { ...result, stopMs: Date.now() - signalled, output };
}
