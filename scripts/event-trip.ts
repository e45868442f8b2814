/**
 * The files of `lib/` one event runs through, from a watch to `reconcile` and its status write:
 * `npx tsx --conditions rxkube-source scripts/event-trip.ts [repository root]`.
 *
 * A registered controller on the embedded server reconciles a Widget by writing its status. Once
 * it is quiet, V8's precise coverage is taken, the Widget's spec is changed, and coverage is taken
 * again when the run's outcome is out and the status write's own watch event has come: every file
 * under lib/ with a function called in between is on the trip (timers and watches that ran
 * meanwhile are counted too, so this is an upper bound). The order of the crossings between
 * folders is not something coverage tells; docs/architecture.md lists it from the code.
 *
 * The root defaults to this repository; give another checkout's root to measure it the same way.
 */
import { Session } from 'node:inspector/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { filter, firstValueFrom } from 'rxjs';

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
const lib = resolve(root, 'lib');

type Counts = Map<string, number>;

async function snapshot(session: Session): Promise<Counts> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const counts: Counts = new Map();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(lib + '/')) continue;
    for (const fn of script.functions) {
      const key = `${relative(lib, path)}#${fn.functionName}@${fn.ranges[0]?.startOffset ?? 0}`;
      counts.set(key, (counts.get(key) ?? 0) + (fn.ranges[0]?.count ?? 0));
    }
  }
  return counts;
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

const fixtures = (await import(
  pathToFileURL(resolve(root, 'spec/controller/fixtures.ts')).href
)) as typeof import('../spec/controller/fixtures.js');
// Through the main entry point: where the Operator lives inside lib/ differs between checkouts.
const { Operator, UpdateControl, createLogger } = (await import(
  pathToFileURL(resolve(lib, 'index.ts')).href
)) as typeof import('../lib/index.js');

const env = await fixtures.startEnv();
const op = new Operator({ kubeConfig: env.kubeConfig, logger: createLogger({ name: 'trip', level: 'silent' }) });
const ctrl = op.register<import('../spec/controller/fixtures.js').Widget>(
  { reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }) },
  fixtures.widgetConfig(),
);
await op.start();
const observed = (value: string) =>
  fixtures.eventually(`status ${value}`, async () => (await fixtures.getWidget(env, 'w1'))?.status?.['observed'] === value);
await fixtures.createWidget(env, fixtures.widget('w1', { value: 'a' }));
await observed('a');
await new Promise((r) => setTimeout(r, 500)); // quiet: the first run's echoes are in

await snapshot(session);
const outcome = firstValueFrom(ctrl.outcome$.pipe(filter((o) => o.id.name === 'w1')));
await fixtures.patchWidget(env, 'w1', { spec: { value: 'b' } });
await outcome;
await observed('b');
await new Promise((r) => setTimeout(r, 200)); // the status write's own watch event
const after = await snapshot(session);

const files = new Set<string>();
// Taking coverage resets the counters: `after` counts the calls since the first snapshot. Module
// bodies (offset 0), esbuild's `__name` helper and the harness's own waiting (testing/) are not the trip's.
for (const [key, count] of after)
  if (count > 0 && !/#(__name@|@0$)/.test(key) && !key.startsWith('testing/')) files.add(key.slice(0, key.indexOf('#')));
const byFolder = new Map<string, string[]>();
for (const file of [...files].sort()) {
  const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';
  byFolder.set(folder, [...(byFolder.get(folder) ?? []), file.slice(folder.length + 1)]);
}
console.log(`${files.size} files in ${byFolder.size} folders of ${relative(process.cwd(), lib) || lib}:`);
for (const [folder, names] of byFolder) console.log(`  ${folder}/ (${names.length}): ${names.join(', ')}`);

await op.stop();
await env.close();
session.disconnect();
