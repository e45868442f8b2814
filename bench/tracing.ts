/**
 * The cost of tracing per run:
 *
 *   npm run bench:tracing -- [--n 2000] [--rounds 3] [--out bench/results/tracing.json]
 *
 * An embedded API server in a process of its own (bench/e2e/server.ts) holds N counters; per
 * round, one operator process per mode (none, no-op tracer, SDK; see bench/tracing/operator.ts,
 * interleaved) runs every counter once (a GET through ctx.client, a status patch) and reports the
 * CPU time it used from start() until its last run ended. The operator's CPU alone is measured:
 * the server's is in the other process. That figure carries the machine's noise; so, second,
 * bench/tracing/isolated.ts measures the tracing work of a run alone (its five spans around
 * requests that answer at once, --isolated-runs per process, after a warm-up). Printed: median CPU
 * µs per run by mode and the extra of the no-op tracer and of the SDK over no tracing, both ways;
 * saved to --out.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HERE as E2E, median, NODE, readFlags, ROOT, round, startBenchServer, stopProcess } from './e2e/harness.js';

const flags = readFlags('bench:tracing', process.argv.slice(2));
const n = Number(flags.get('n') ?? 2000);
const rounds = Number(flags.get('rounds') ?? 3);
const out = flags.get('out') ?? join(ROOT, 'bench/results/tracing.json');
const isolatedRuns = Number(flags.get('isolated-runs') ?? 50_000);
const MODES = ['none', 'noop', 'sdk'] as const;

const dir = mkdtempSync(join(tmpdir(), 'rxkube-bench-tracing-'));
const server = await startBenchServer(n, join(dir, 'kubeconfig'));
const samples = new Map<string, { cpuUsPerRun: number; wallMs: number; spans: number }[]>(MODES.map((m) => [m, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const mode of MODES) {
      const { stdout } = await promisify(execFile)(NODE, ['--import', 'tsx', join(E2E, '../tracing/operator.ts'), mode, String(n)], {
        cwd: ROOT,
        env: { ...process.env, KUBECONFIG: server.kubeconfig },
        timeout: 600_000,
      });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { runs: number; cpuMs: number; wallMs: number; spans: number };
      const sample = { cpuUsPerRun: round((result.cpuMs * 1000) / result.runs, 1), wallMs: round(result.wallMs, 0), spans: result.spans };
      samples.get(mode)!.push(sample);
      console.log(
        `round ${r + 1} ${mode.padEnd(4)}: ${sample.cpuUsPerRun} µs CPU per run, ${sample.wallMs} ms for ${result.runs} runs, ${sample.spans} spans exported`,
      );
    }
  }
} finally {
  await stopProcess(server.process);
  rmSync(dir, { recursive: true, force: true });
}

const isolated = new Map<string, number[]>(MODES.map((m) => [m, []]));
for (let r = 0; r < rounds; r++) {
  for (const mode of MODES) {
    const { stdout } = await promisify(execFile)(
      NODE,
      ['--import', 'tsx', join(E2E, '../tracing/isolated.ts'), mode, String(isolatedRuns)],
      { cwd: ROOT, timeout: 600_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { cpuUsPerRun: number };
    isolated.get(mode)!.push(round(result.cpuUsPerRun, 2));
    console.log(`isolated round ${r + 1} ${mode.padEnd(4)}: ${round(result.cpuUsPerRun, 2)} µs CPU per run`);
  }
}
const isolatedOf = (mode: string) => median(isolated.get(mode)!);

const medianOf = (mode: string) => median(samples.get(mode)!.map((s) => s.cpuUsPerRun));
const none = medianOf('none');
const summary = {
  n,
  rounds,
  node: process.version,
  cpuUsPerRun: Object.fromEntries(MODES.map((m) => [m, medianOf(m)])),
  extraUsPerRun: { noop: round(medianOf('noop') - none, 1), sdk: round(medianOf('sdk') - none, 1) },
  spansPerRun: round(median(samples.get('sdk')!.map((s) => s.spans)) / n, 2),
  isolated: {
    runs: isolatedRuns,
    cpuUsPerRun: Object.fromEntries(MODES.map((m) => [m, isolatedOf(m)])),
    extraUsPerRun: { noop: round(isolatedOf('noop') - isolatedOf('none'), 2), sdk: round(isolatedOf('sdk') - isolatedOf('none'), 2) },
    samples: Object.fromEntries(isolated),
  },
  samples: Object.fromEntries(samples),
};
console.log(
  `median CPU per run: none ${none} µs, no-op tracer ${summary.cpuUsPerRun.noop} µs (+${summary.extraUsPerRun.noop}), SDK ${summary.cpuUsPerRun.sdk} µs (+${summary.extraUsPerRun.sdk}, ${summary.spansPerRun} spans per run)`,
);
console.log(
  `isolated tracing work per run: no-op tracer +${summary.isolated.extraUsPerRun.noop} µs, SDK +${summary.isolated.extraUsPerRun.sdk} µs`,
);
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
console.log(`saved ${out}`);
