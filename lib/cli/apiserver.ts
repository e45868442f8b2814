/**
 * `rxkube apiserver`: serves the embedded Kubernetes API server until SIGINT/SIGTERM, after
 * writing a kubeconfig for kubectl and client-node.
 */
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isLoopback, startApiServer } from '../apiserver/server.js';

const USAGE = `usage: rxkube apiserver [options]

Serves an in-process Kubernetes API server that kubectl and @kubernetes/client-node use like a cluster.

options:
  --port N            TCP port (default 6443; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1); a non-loopback address requires a token
  --kubeconfig FILE   where to write the kubeconfig (default ~/.kube/rxkube.yaml)
  --data FILE         load state from FILE at start, save it there on shutdown
  --token T           require "Authorization: Bearer T" (generated for non-loopback hosts if not given)
  --simulate          simulate the deployment controller (replicas become ready)
  --ready-after MS    with --simulate: milliseconds until a deployment is ready (default 1000)
  -h, --help          show this help`;

interface CliOptions {
  port: number;
  host: string;
  kubeconfig: string;
  data?: string;
  token?: string;
  simulate: boolean;
  readyAfterMs: number;
  help: boolean;
}

class UsageError extends Error {}

function parseArgs(args: string[]): CliOptions {
  const opts: CliOptions = {
    port: 6443,
    host: '127.0.0.1',
    kubeconfig: join(homedir(), '.kube', 'rxkube.yaml'),
    simulate: false,
    readyAfterMs: 1000,
    help: false,
  };
  const withValue = new Set(['--port', '--host', '--kubeconfig', '--data', '--token', '--ready-after']);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    let value: string | undefined = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    if (flag === '-h' || flag === '--help') {
      opts.help = true;
      continue;
    }
    if (flag === '--simulate') {
      opts.simulate = true;
      continue;
    }
    if (!withValue.has(flag)) throw new UsageError(`unknown option ${JSON.stringify(arg)} (see --help)`);
    if (value === undefined) {
      value = args[++i];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`option ${flag} needs a value`);
    }
    switch (flag) {
      case '--port': {
        const port = Number(value);
        if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`--port must be a number from 0 to 65535, got ${JSON.stringify(value)}`);
        opts.port = port;
        break;
      }
      case '--host':
        opts.host = value;
        break;
      case '--kubeconfig':
        opts.kubeconfig = resolve(value);
        break;
      case '--data':
        opts.data = resolve(value);
        break;
      case '--token':
        if (value === '' || /\s/.test(value)) throw new UsageError('--token must be non-empty and without spaces');
        opts.token = value;
        break;
      case '--ready-after': {
        if (!/^\d+$/.test(value)) throw new UsageError(`--ready-after must be a number of milliseconds, got ${JSON.stringify(value)}`);
        opts.readyAfterMs = Number(value);
        break;
      }
    }
  }
  return opts;
}

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

export async function main(args: string[]): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`rxkube apiserver: ${err.message}`);
    return 2;
  }
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  let token = opts.token;
  if (!token && !isLoopback(opts.host)) {
    token = randomBytes(24).toString('base64url');
    console.log(`generated a bearer token for ${opts.host}: ${token}`);
  }
  let server;
  try {
    server = await startApiServer({
      port: opts.port,
      host: opts.host,
      token,
      dataFile: opts.data,
      simulate: opts.simulate ? { deployments: { readyAfterMs: opts.readyAfterMs } } : undefined,
      clientNode: false,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(`rxkube apiserver: ${e.code === 'EADDRINUSE' ? `port ${opts.port} on ${opts.host} is in use (try --port 0)` : e.message}`);
    return e instanceof TypeError ? 2 : 1;
  }
  await server.writeKubeconfig(opts.kubeconfig);
  console.log(`rxkube apiserver listening on ${server.url}`);
  console.log(`kubeconfig written to ${opts.kubeconfig}`);
  console.log(`  kubectl --kubeconfig ${opts.kubeconfig} get ns`);
  console.log(`  export KUBECONFIG=${opts.kubeconfig}`);
  if (opts.data) console.log(`state is saved to ${opts.data} on shutdown`);
  console.log('press Ctrl-C to stop');
  const signal = await waitForSignal();
  await server.close();
  console.log(`rxkube apiserver stopped (${signal})${opts.data ? `; state saved to ${opts.data}` : ''}`);
  return 0;
}
