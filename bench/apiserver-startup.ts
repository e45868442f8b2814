/**
 * Start-up time and memory of the embedded API server (lib/apiserver).
 *
 *   npx tsx --expose-gc bench/apiserver-startup.ts [--runs 5] [--out bench/results/apiserver-startup.json]
 *
 * Each run is a fresh Node process (spawned with this file and `--child`) that imports the server
 * module, starts a server (`clientNode: false`, as the CLI does), answers one list request, and
 * reports: import time, `startApiServer` time, time to the first answered request, and heapUsed
 * (after a full GC) and RSS once started. Figures are medians over the runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

interface Sample {
  importMs: number;
  startMs: number;
  firstRequestMs: number;
  heapUsedMiB: number;
  rssMiB: number;
}

async function child(): Promise<void> {
  const t0 = performance.now();
  const { startApiServer } = await import('@rxkube/apiserver');
  const t1 = performance.now();
  const server = await startApiServer({ clientNode: false });
  const t2 = performance.now();
  const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`);
  await res.text();
  const t3 = performance.now();
  (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  const sample: Sample = {
    importMs: t1 - t0,
    startMs: t2 - t1,
    firstRequestMs: t3 - t2,
    heapUsedMiB: mem.heapUsed / 2 ** 20,
    rssMiB: mem.rss / 2 ** 20,
  };
  await server.close();
  process.stdout.write(JSON.stringify(sample));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number((s[Math.floor(s.length / 2)] ?? 0).toFixed(1));
}

function main(): void {
  const args = process.argv.slice(2);
  const runs = Number(args[args.indexOf('--runs') + 1] ?? 5) || 5;
  const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : 'bench/results/apiserver-startup.json';
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child'], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`bench/apiserver-startup: run ${i} failed: ${r.stderr}`);
    samples.push(JSON.parse(r.stdout) as Sample);
  }
  const keys = ['importMs', 'startMs', 'firstRequestMs', 'heapUsedMiB', 'rssMiB'] as const;
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
    runs,
    median: Object.fromEntries(keys.map((k) => [k, median(samples.map((s) => s[k]))])),
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
}

if (process.argv.includes('--child')) await child();
else main();
