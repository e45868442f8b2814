/** What the heap benches share: command-line flags and a heap reading after full GCs. */

/** The value after `--name` on the command line, or `fallback`. */
export function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** A heap reading after three full GCs; `bench` names the npm script for the error without --expose-gc. */
export function settledHeap(bench: string): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error(`bench:${bench} needs --expose-gc (npm run bench:${bench} does it)`);
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}
