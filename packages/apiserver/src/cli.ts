/**
 * `rxkube-apiserver` (also `rxkube apiserver` where rxkube is installed): serves the embedded
 * Kubernetes API server until SIGINT/SIGTERM, after writing a kubeconfig for kubectl and client-node.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs as parseNodeArgs } from 'node:util';
import { isLoopback, startApiServer } from './server.js';

const usage = (program: string) => `usage: ${program} [options]

Serves an in-process Kubernetes API server that kubectl and @kubernetes/client-node use like a cluster.

options:
  --port N            TCP port (default 6443; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1); off loopback the server serves HTTPS
                      with a CA and certificate it makes, and requires a token
  --kubeconfig FILE   where to write the kubeconfig (default ~/.kube/rxkube.yaml)
  --data DIR          keep state in DIR (created 0700): every acknowledged write survives a crash
  --token-file FILE   require "Authorization: Bearer <token>", the token read from FILE (its
                      first line; the file must not be readable by other users). Prefer it, or
                      the RXKUBE_APISERVER_TOKEN environment variable, to --token
  --token T           the same with T itself, which every local user can read in the process
                      list; without any of the three a token is generated off loopback (written
                      to the kubeconfig, never printed)
  --simulate          simulate the workload controllers and nodes, kwok-style: Deployments,
                      ReplicaSets, StatefulSets, Jobs, CronJobs, Pods bound to nodes and Ready,
                      claims bound to provisioned volumes, with their Events
  --ready-after MS    with --simulate: milliseconds from a Pod's start until it is Ready (default 1000)
  --nodes N           with --simulate: how many Ready nodes run the Pods (default 3)
  --job-duration MS   with --simulate: how long a Job's Pod runs before it succeeds (default 1000)
  --job-failures N    with --simulate: how many Pods of each Job fail first (default 0)
  -h, --help          show this help`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

const NUMBER_FLAGS = ['port', 'ready-after', 'nodes', 'job-duration', 'job-failures'] as const;
type NumberFlag = (typeof NUMBER_FLAGS)[number];
const OPTIONS = {
  ...(Object.fromEntries(NUMBER_FLAGS.map((flag) => [flag, { type: 'string' }])) as Record<NumberFlag, { type: 'string' }>),
  host: { type: 'string' },
  kubeconfig: { type: 'string' },
  data: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  simulate: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** node:util's parser, with its messages reduced to one line and numbers checked by name. */
function parseFlags(args: string[]) {
  let values;
  try {
    values = parseNodeArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0] ?? String(err));
  }
  const number = (flag: NumberFlag): number | undefined => {
    const value = values[flag];
    if (value === undefined) return undefined;
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} must be a whole number >= 0, got '${value}'`);
    return n;
  };
  return {
    ...values,
    port: number('port'),
    'ready-after': number('ready-after'),
    nodes: number('nodes'),
    'job-duration': number('job-duration'),
    'job-failures': number('job-failures'),
  };
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening for both. */
function waitForSignal(): Promise<NodeJS.Signals> {
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

type CliOptions = ReturnType<typeof parseArgs>;

function parseArgs(args: string[]) {
  const flags = parseFlags(args);
  const port = flags.port ?? 6443;
  if (port > 65535) throw new UsageError(`--port must be a number from 0 to 65535, got ${port}`);
  if (flags.token !== undefined && flags['token-file'] !== undefined)
    throw new UsageError('--token and --token-file exclude each other: give one');
  if (flags.token !== undefined && /\s/.test(flags.token)) throw new UsageError('--token must be without spaces');
  const simulationFlags = (['ready-after', 'nodes', 'job-duration', 'job-failures'] as const).filter((flag) => flags[flag] !== undefined);
  if (!flags.simulate && simulationFlags.length > 0)
    throw new UsageError(`--${simulationFlags[0]} needs --simulate (without it nothing is simulated)`);
  return {
    port,
    host: flags.host ?? '127.0.0.1',
    kubeconfig: resolve(flags.kubeconfig ?? join(homedir(), '.kube', 'rxkube.yaml')),
    data: flags.data === undefined ? undefined : resolve(flags.data),
    token: flags.token,
    tokenFile: flags['token-file'] === undefined ? undefined : resolve(flags['token-file']),
    simulate: flags.simulate ?? false,
    readyAfterMs: flags['ready-after'] ?? 1000,
    nodes: flags.nodes ?? 3,
    jobDurationMs: flags['job-duration'] ?? 1000,
    jobFailures: flags['job-failures'] ?? 0,
    help: flags.help ?? false,
  };
}

const TOKEN_ENV = 'RXKUBE_APISERVER_TOKEN';

function checkToken(token: string, from: string): string {
  if (token === '' || /\s/.test(token))
    throw new Error(`${from} must hold a token without spaces, got ${token === '' ? 'nothing' : 'one with spaces'}`);
  return token;
}

function tokenFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const value = env[TOKEN_ENV];
  return value === undefined ? undefined : checkToken(value.trim(), TOKEN_ENV);
}

/** The token on a file's first line; a file other users may read is refused (the token is a password). */
function readTokenFile(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    const mode = fstatSync(fd).mode & 0o777;
    if ((mode & 0o077) !== 0)
      throw new Error(`--token-file ${file} may be read by other users (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 it`);
    return checkToken((readFileSync(fd, 'utf8').split('\n')[0] ?? '').trim(), `--token-file ${file}`);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw e.code ? new Error(`--token-file ${file} cannot be read (${e.code})`) : e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Runs the command; `program` is the name it was called by, for its messages. */
export async function main(args: string[], program = 'rxkube-apiserver'): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${program}: ${err.message}`);
    return 2;
  }
  if (opts.help) {
    console.log(usage(program));
    return 0;
  }
  let token = opts.token;
  try {
    token ??= opts.tokenFile !== undefined ? readTokenFile(opts.tokenFile) : tokenFromEnv(process.env);
  } catch (err) {
    console.error(`${program}: ${(err as Error).message}`);
    return 2;
  }
  if (!token && !isLoopback(opts.host)) {
    // Printed output ends up in CI logs: the token goes only into the kubeconfig (mode 0600).
    token = randomBytes(24).toString('base64url');
  }
  let server;
  try {
    server = await startApiServer({
      port: opts.port,
      host: opts.host,
      token,
      dataDir: opts.data,
      simulate: opts.simulate
        ? {
            pods: { readyAfterMs: opts.readyAfterMs },
            nodes: opts.nodes,
            jobs: { durationMs: opts.jobDurationMs, failures: opts.jobFailures },
          }
        : undefined,
      clientNode: false,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(`${program}: ${e.code === 'EADDRINUSE' ? `port ${opts.port} on ${opts.host} is in use (try --port 0)` : e.message}`);
    return e instanceof TypeError ? 2 : 1;
  }
  await server.writeKubeconfig(opts.kubeconfig);
  console.log(`${program} listening on ${server.url}`);
  console.log(
    `kubeconfig written to ${opts.kubeconfig}${token ? ' (with the bearer token' + (server.url.startsWith('https:') ? ' and the CA' : '') + ')' : ''}`,
  );
  console.log(`  kubectl --kubeconfig ${opts.kubeconfig} get ns`);
  console.log(`  export KUBECONFIG=${opts.kubeconfig}`);
  if (opts.data) console.log(`state is kept in ${opts.data} (every acknowledged write is on disk)`);
  console.log('press Ctrl-C to stop');
  const signal = await waitForSignal();
  await server.close();
  console.log(`${program} stopped (${signal})${opts.data ? `; state kept in ${opts.data}` : ''}`);
  return 0;
}
