/**
 * The explorer at its default budget (120 runs) over every subject of both corpora and the demos,
 * one at a time: per bug, the seeds and wall time to the first finding, the shrunk plan's length
 * and whether `rerun(options, seed)` says again what was found (oracle, message and log); per
 * correct twin and demo, its clean runs out of 120 (a failing seed is recorded and the exploration
 * goes on from the next). The load average is recorded beside each figure, since the machine may
 * be shared. Prints and saves the table.
 *
 *   npm run bench:explore -- [--only stale-deletion,tomcat] [--runs 120] [--out bench/results/explore-budget.json]
 */
import { loadavg } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { explore, rerun, type ExploreOptions, type Oracle } from '../lib/testing/explore/index.js';
import { subjects, type Subject } from '../spec/testing/explore/subjects.js';
import { blindSubjects } from '../spec/testing/explore/blind-subjects.js';
import { closeDemoDatabase, demos, schemaDemo } from '../spec/testing/explore/demos.js';
import { flag } from './heap.js';

interface CleanRuns {
  readonly runs: number;
  readonly clean: number;
  readonly failures: readonly { readonly seed: number; readonly oracle: Oracle }[];
  readonly seconds: number;
}

interface Row {
  readonly corpus: 'present' | 'blind' | 'demo';
  readonly name: string;
  readonly bug?: {
    readonly oracle: Oracle;
    readonly seedsToFind: number;
    readonly secondsToFind: number;
    readonly shrunkSteps: number;
    readonly shrunkPerturbations: readonly string[];
    readonly shrinkRuns: number;
    readonly seed: number;
    /** `rerun(options, seed)` gave the found run's oracle, message and log again. */
    readonly replayIdentical: boolean;
    /** The same oracle and message, the log aside (a log lists every write, retries included). */
    readonly replaySameVerdict: boolean;
    /** Where the replay's log first departs from the found run's. */
    readonly logDiff?: { readonly line: number; readonly found: string | undefined; readonly replay: string | undefined };
  };
  /** Set when the bug was not found within the budget. */
  readonly missed?: { readonly runs: number; readonly seconds: number };
  readonly twin?: CleanRuns;
  readonly load: { readonly before: readonly number[]; readonly after: readonly number[] };
}

const runs = Number(flag('runs', '120'));
const only = flag('only', '')
  .split(',')
  .filter((name) => name !== '');
const out = flag('out', 'bench/results/explore-budget.json');
const wanted = (name: string): boolean => only.length === 0 || only.includes(name);
const load = (): number[] => loadavg().map((l) => Math.round(l * 100) / 100);
const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** Seeds 1..runs of a correct operator: a failing seed is noted and the exploration goes on from the next. */
async function cleanRuns(options: ExploreOptions): Promise<CleanRuns> {
  const started = Date.now();
  const failures: { seed: number; oracle: Oracle }[] = [];
  let tried = 0;
  while (tried < runs) {
    const result = await explore({ ...options, seed: 1 + tried, budget: { runs: runs - tried, shrinkRuns: 0 } });
    tried += result.seedsTried;
    if (result.failure) failures.push({ seed: result.failure.seed, oracle: result.failure.oracle });
    if (result.seedsTried === 0 || result.cutShort) break;
  }
  return { runs: tried, clean: tried - failures.length, failures, seconds: seconds(Date.now() - started) };
}

async function subjectRow(corpus: 'present' | 'blind', subject: Subject): Promise<Row> {
  const before = load();
  const buggy = subject.options('buggy');
  const result = await explore({ ...buggy, budget: { runs } });
  let bug: Row['bug'];
  let missed: Row['missed'];
  if (result.failure) {
    const failure = result.failure;
    const again = await rerun(buggy, failure.seed);
    const found = failure.found;
    const sameVerdict = again.failed && again.oracle === found.oracle && again.message === found.message;
    bug = {
      oracle: failure.oracle,
      seedsToFind: failure.foundAfterRuns,
      secondsToFind: seconds(failure.foundAfterMs),
      shrunkSteps: failure.plan.actions.length,
      shrunkPerturbations: failure.plan.perturbations.map((p) => p.type),
      shrinkRuns: failure.shrinkRuns,
      seed: failure.seed,
      replayIdentical: sameVerdict && JSON.stringify(again.log) === JSON.stringify(found.log),
      replaySameVerdict: sameVerdict,
      logDiff: firstDifference(found.log, again.log),
    };
  } else missed = { runs: result.seedsTried, seconds: seconds(result.wallMs) };
  const twin = await cleanRuns(subject.options('fixed'));
  return { corpus, name: subject.name, bug, missed, twin, load: { before, after: load() } };
}

function firstDifference(found: readonly string[], replay: readonly string[]): NonNullable<Row['bug']>['logDiff'] {
  for (let line = 0; line < Math.max(found.length, replay.length); line++)
    if (found[line] !== replay[line]) return { line, found: found[line], replay: replay[line] };
  return undefined;
}

function line(row: Row): string {
  const bug = row.bug
    ? `${row.bug.seedsToFind} seeds | ${row.bug.secondsToFind} s | ${row.bug.shrunkSteps} steps + [${row.bug.shrunkPerturbations.join(', ')}] | ${row.bug.replayIdentical ? 'identical' : row.bug.replaySameVerdict ? 'same verdict, log differs' : 'NOT reproduced'}`
    : row.missed
      ? `missed in ${row.missed.runs} runs (${row.missed.seconds} s) | | |`
      : ' | | |';
  const twin = row.twin
    ? `${row.twin.clean}/${row.twin.runs}${row.twin.failures.length > 0 ? ` (failed: ${row.twin.failures.map((f) => `seed ${f.seed} ${f.oracle}`).join(', ')})` : ''} in ${row.twin.seconds} s`
    : '';
  return `| ${row.corpus} | ${row.name} | ${bug} | ${twin} | ${row.load.before.join(' ')} → ${row.load.after.join(' ')} |`;
}

const rows: Row[] = [];
const save = (): void => {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), runs, rows }, null, 2)}\n`);
};

console.log(`| corpus | subject | seeds to find | time | shrunk plan | replay by seed | twin (or demo) clean/${runs} | load average |`);
console.log('| --- | --- | ---: | ---: | --- | --- | --- | --- |');
try {
  for (const [corpus, list] of [
    ['present', subjects],
    ['blind', blindSubjects],
  ] as const) {
    for (const subject of list) {
      if (!wanted(subject.name)) continue;
      const row = await subjectRow(corpus, subject);
      rows.push(row);
      console.log(line(row));
      save();
    }
  }
  for (const demo of [...demos, schemaDemo]) {
    if (!wanted(demo.name)) continue;
    const before = load();
    const twin = await cleanRuns(demo.options);
    const row: Row = { corpus: 'demo', name: demo.name, twin, load: { before, after: load() } };
    rows.push(row);
    console.log(line(row));
    save();
  }
} finally {
  await closeDemoDatabase();
}
console.log(`saved ${out}`);
process.exit(0);
