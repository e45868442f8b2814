/** The ConfigMap server of the cache benches (bench/metadata-cache-server.ts) in a process of its own, and its lines. */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface ConfigMapServer {
  /** The kubeconfig file the server wrote for itself. */
  readonly kubeconfig: string;
  /** The server's next line on stdout (it prints one when a relist it was asked for has begun). */
  nextLine(): Promise<string>;
  /** Asks the server to close its watches and answer their resumes 410. */
  relist(): void;
  stop(): void;
}

/** Starts a server with `n` ConfigMaps of about `bytes` of data each in `default`, once they are all stored. */
export async function startConfigMapServer(bench: string, n: number, bytes: number): Promise<ConfigMapServer> {
  const dataDir = join(ROOT, 'bench/e2e/.data');
  mkdirSync(dataDir, { recursive: true });
  const kubeconfigFile = join(dataDir, `${bench}-${n}.kubeconfig`);
  const server = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench/metadata-cache-server.ts'),
      '--populate',
      String(n),
      '--bytes',
      String(bytes),
      '--kubeconfig',
      kubeconfigFile,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT },
  );
  const lines = createInterface(server.stdout);
  const nextLine = () => new Promise<string>((done) => lines.once('line', done));
  const stop = () => {
    server.kill('SIGTERM');
    rmSync(kubeconfigFile, { force: true });
  };
  try {
    const { kubeconfig } = JSON.parse(await nextLine()) as { kubeconfig: string };
    return { kubeconfig, nextLine, relist: () => void server.stdin.write('relist\n'), stop };
  } catch (err) {
    stop();
    throw err;
  }
}
