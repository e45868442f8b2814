/**
 * Start-up time and memory of the embedded API server, each start in a fresh Node process (so
 * module loading counts, as it does for a test run or `rxkube apiserver`).
 *
 *   npx tsx bench/apiserver-startup.ts [--runs 5] [--simulate] [--out bench/results/apiserver-startup.json]
 *
 * Per run: milliseconds from process start to `startApiServer` resolving (import and tsx's
 * transpiling included: noisy on a loaded machine), the milliseconds of the `startApiServer` call
 * alone, and the process's RSS and heapUsed right after. With `--simulate` every simulated
 * controller is on (the nodes registered at start included).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, simulate: { type: 'boolean', default: false }, out: { type: 'string' }, child: { type: 'boolean', default: false } },
});

if (values.child) {
  const { performance } = await import('node:perf_hooks');
  const { startApiServer } = await import('../lib/apiserver/index.js');
  const t0 = performance.now();
  const server = await startApiServer({ clientNode: false, ...(values.simulate ? { simulate: { deployments: {} } } : {}) });
  const ms = performance.now();
  const mem = process.memoryUsage();
  await server.close();
  process.stdout.write(JSON.stringify({ ms, startCallMs: ms - t0, rssMiB: mem.rss / 2 ** 20, heapMiB: mem.heapUsed / 2 ** 20 }));
} else {
  const runs: { ms: number; startCallMs: number; rssMiB: number; heapMiB: number }[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const args = ['tsx', 'bench/apiserver-startup.ts', '--child', ...(values.simulate ? ['--simulate'] : [])];
    runs.push(JSON.parse(execFileSync('npx', args, { encoding: 'utf8' })) as (typeof runs)[number]);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const result = {
    simulate: values.simulate,
    runs: runs.length,
    startMsMedian: Math.round(median(runs.map((r) => r.ms))),
    startCallMsMedian: Number(median(runs.map((r) => r.startCallMs)).toFixed(1)),
    rssMiBMedian: Number(median(runs.map((r) => r.rssMiB)).toFixed(1)),
    heapMiBMedian: Number(median(runs.map((r) => r.heapMiB)).toFixed(1)),
  };
  console.log(JSON.stringify(result));
  if (values.out) {
    mkdirSync(dirname(values.out), { recursive: true });
    writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  }
}
