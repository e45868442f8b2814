/**
 * `npm run soak -- [--resources 1000] [--duration-s 600] [--operators 3] [--mutations-per-s 20]
 *                  [--fault-every-ms 3000] [--kill-every-ms 60000] [--lease-ms 15000]
 *                  [--renew-deadline-ms 10000] [--retry-ms 2000] [--fail-rate 0.05]
 *                  [--cut-leaders 1] [--converge-timeout-ms 120000] [--out bench/results/soak.json]`
 *
 * Runs the chaos soak (bench/soak/soak.ts), prints its table and the issue's targets, and saves
 * the report. Exits 1 when a target is missed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { runSoak, SOAK_DEFAULTS, type SoakOptions, type SoakReport } from './soak.js';

const FLAGS: Record<string, keyof SoakOptions | 'out'> = {
  '--resources': 'resources',
  '--duration-s': 'durationMs',
  '--operators': 'operators',
  '--mutations-per-s': 'mutationsPerSecond',
  '--fault-every-ms': 'faultEveryMs',
  '--kill-every-ms': 'killEveryMs',
  '--lease-ms': 'leaseDurationMs',
  '--renew-deadline-ms': 'renewDeadlineMs',
  '--retry-ms': 'retryPeriodMs',
  '--fail-rate': 'failRate',
  '--cut-leaders': 'cutLeaders',
  '--converge-timeout-ms': 'convergeTimeoutMs',
  '--out': 'out',
};

function parseArgs(argv: string[]): { options: Partial<SoakOptions>; out: string } {
  const options: Record<string, number> = {};
  let out = 'bench/results/soak.json';
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const key = FLAGS[flag];
    const value = argv[i + 1];
    if (!key || value === undefined)
      throw new Error(`soak: unknown option or missing value: ${flag} (options: ${Object.keys(FLAGS).join(' ')})`);
    if (key === 'out') {
      out = value;
      continue;
    }
    const number = Number(value);
    if (!Number.isFinite(number) || number < 0)
      throw new Error(`soak: ${flag} must be a non-negative number, got ${JSON.stringify(value)}`);
    options[key] = key === 'durationMs' ? number * 1000 : number;
    if (key === 'cutLeaders') (options as Record<string, unknown>)[key] = number !== 0;
  }
  return { options: options, out };
}

/** The issue's done-when targets, each with whether this run met it. */
export function targets(report: SoakReport): Array<{ target: string; met: boolean }> {
  const lease = report.options.leaseDurationMs;
  return [
    { target: '0 lost changes', met: report.lostChanges === 0 },
    { target: '0 leaked finalizers', met: report.leakedFinalizers === 0 },
    { target: '0 concurrent runs of one resource', met: report.maxConcurrentRunsPerResource <= 1 },
    { target: 'unready fraction < 20 %', met: report.unreadyFraction < 0.2 },
    {
      target: `failover <= lease + 1 s (${lease + 1000} ms) in every trial`,
      met: report.failoverTrials.every((t) => (t.ms === undefined ? t.cause === 'cut' : t.ms <= lease + 1000)),
    },
  ];
}

export function table(report: SoakReport): string {
  const ms = (list: number[]) => (list.length ? list.map((n) => `${(n / 1000).toFixed(2)} s`).join(', ') : '-');
  const rows: Array<[string, string]> = [
    [
      'resources (kept / created / deleted / live at end)',
      `${report.options.resources} / ${report.resources.created} / ${report.resources.deleted} / ${report.resources.liveAtEnd}`,
    ],
    ['duration of chaos, operators', `${report.options.durationMs / 1000} s, ${report.options.operators} (+ replacements)`],
    [
      'mutations (bump / create / delete; driver gave up)',
      `${report.mutations.bump} / ${report.mutations.create} / ${report.mutations.delete}; ${report.mutations.driverErrors}`,
    ],
    [
      'faults by kind',
      Object.entries(report.faults)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
    ],
    ['runs, failures', `${report.runs}, ${report.failures}`],
    [
      'max concurrent runs per resource',
      `${report.maxConcurrentRunsPerResource}${report.concurrentRunExample.length ? ` (${JSON.stringify(report.concurrentRunExample)})` : ''}`,
    ],
    ['lost changes', `${report.lostChanges}${report.lostChangeExamples.length ? ` (${report.lostChangeExamples.join('; ')})` : ''}`],
    [
      'leaked finalizers',
      `${report.leakedFinalizers}${report.leakedFinalizerExamples.length ? ` (${report.leakedFinalizerExamples.join(', ')})` : ''}`,
    ],
    [
      'convergence after the faults stopped',
      report.convergenceMs === null ? 'not reached' : `${(report.convergenceMs / 1000).toFixed(1)} s`,
    ],
    [
      'unready fraction (all / per operator)',
      `${(report.unreadyFraction * 100).toFixed(1)} % / ${Object.entries(report.unreadyByOperator)
        .map(([k, f]) => `${k} ${(f * 100).toFixed(0)} %`)
        .join(', ')}`,
    ],
    [`failover after SIGKILL (lease ${report.options.leaseDurationMs / 1000} s)`, ms(report.failoverMs)],
    ['failover after a leader was cut off', ms(report.cutFailoverMs)],
    [
      'failover trials (leader → new holder, by the server; by renewTimes; witnesses)',
      report.failoverTrials
        .map(
          (t) =>
            `${t.cause} ${t.leader} → ${t.newHolder ?? 'none (took it back)'}${t.ms === undefined ? '' : ` ${ms([t.ms])}; ${ms([t.byRenewTimeMs ?? 0])}`}; ${t.witnesses.join(' ')}`,
        )
        .join(' | ') || '-',
    ],
    [
      'operator exit codes',
      Object.entries(report.operatorExitCodes)
        .map(([k, c]) => `${k} ${c}`)
        .join(', '),
    ],
    ['operators that exited by themselves (restarted)', report.operatorRestarts.join(', ') || '-'],
    ...Object.entries(report.memory).map(([k, m]): [string, string] => [
      `memory ${k} (heap MB first→last, max, slope/min; RSS)`,
      m
        ? `${m.heapFirstMb}→${m.heapLastMb}, ${m.heapMaxMb}, ${m.heapSlopeMbPerMin}; ${m.rssFirstMb}→${m.rssLastMb}, ${m.rssMaxMb}, ${m.rssSlopeMbPerMin}`
        : '-',
    ]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `| ${k.padEnd(width)} | ${v} |`).join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { options, out } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  // The machine is shared: its load through the run goes with the figures.
  const loadavgSamples: Array<{ atS: number; loadavg: number[] }> = [];
  const sampleLoad = () =>
    loadavgSamples.push({ atS: Math.round((Date.now() - started) / 1000), loadavg: loadavg().map((n) => Math.round(n * 100) / 100) });
  sampleLoad();
  const sampling = setInterval(sampleLoad, 30_000);
  const report = await runSoak({ ...options, log: (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`) });
  clearInterval(sampling);
  sampleLoad();
  console.log(table(report));
  const met = targets(report);
  for (const t of met) console.log(`${t.met ? 'met   ' : 'MISSED'} ${t.target}`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: { cpus: cpus().length, loadavg: loadavg(), loadavgSamples }, defaults: SOAK_DEFAULTS, ...report, targets: met }, null, 2)}\n`,
  );
  console.log(`saved ${out}`);
  process.exitCode = met.every((t) => t.met) ? 0 : 1;
}
