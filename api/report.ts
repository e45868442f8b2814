/**
 * The reviewed public surface: one API Extractor report per entry point, kept in api/*.api.md.
 * `npm run api:check` (part of `npm test`) fails when an export changed without its report;
 * `npm run api:update` rewrites the reports after an intended change — review the diff.
 * Both fail when a type in a public signature cannot be imported from the entry point that exposes it,
 * and when a name is exported from two entry points of a package (one home per public name).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import apiExtractor from '@microsoft/api-extractor';
import { exportedNames, forgottenExportProblems } from './forgotten.js';
import { namesExportedTwice, surfaceSize } from './homes.js';

// API Extractor is CommonJS: its named exports are only reachable through the default import.
const { Extractor, ExtractorConfig, ExtractorLogLevel } = apiExtractor;

const ROOT = new URL('../', import.meta.url).pathname;
interface EntryPoint {
  /** The package's folder, relative to the repository root; its report goes to `<folder>/api/`. */
  readonly folder: string;
  readonly declarations: string;
  /** What users import, and the source file that defines its exports. */
  readonly specifier: string;
  readonly source: string;
  /**
   * The report names of the entry points (listed before this one) whose exports this one's
   * signatures use without exporting them again: a name has one home, and a subpath's signatures
   * that take a `KubeClient` or a `ResourceEvent` name the one users import from `rxkube`.
   */
  readonly namesFrom?: readonly string[];
}
/** Each package's entry points, by report name (the entry point's import path, '/' as '-'). */
const ENTRY_POINTS: Readonly<Record<string, EntryPoint>> = {
  rxkube: { folder: '.', declarations: 'dist/index.d.ts', specifier: 'rxkube', source: 'lib/index.ts' },
  // rxkube/operators, the deprecated alias of rxkube/pipeline, is `export *` of it: no report of its own.
  'rxkube-pipeline': {
    folder: '.',
    declarations: 'dist/pipeline.d.ts',
    specifier: 'rxkube/pipeline',
    source: 'lib/pipeline.ts',
    namesFrom: ['rxkube'],
  },
  'rxkube-kube': { folder: '.', declarations: 'dist/kube.d.ts', specifier: 'rxkube/kube', source: 'lib/kube.ts', namesFrom: ['rxkube'] },
  'rxkube-testing': {
    folder: '.',
    declarations: 'dist/testing/index.d.ts',
    specifier: 'rxkube/testing',
    source: 'lib/testing/index.ts',
    namesFrom: ['rxkube', 'rxkube-pipeline'],
  },
  'rxkube-testing-cluster': {
    folder: '.',
    declarations: 'dist/testing/cluster/index.d.ts',
    specifier: 'rxkube/testing/cluster',
    source: 'lib/testing/cluster/index.ts',
    namesFrom: ['rxkube', 'rxkube-pipeline'],
  },
  'rxkube-webhooks': {
    folder: '.',
    declarations: 'dist/webhooks.d.ts',
    specifier: 'rxkube/webhooks',
    source: 'lib/webhooks.ts',
    namesFrom: ['rxkube'],
  },
  apiserver: {
    folder: 'packages/apiserver',
    declarations: 'dist/index.d.ts',
    specifier: '@rxkube/apiserver',
    source: 'packages/apiserver/src/index.ts',
  },
};
const update = process.argv.includes('--update');
const temp = join(ROOT, 'node_modules/.cache/api-extractor');
mkdirSync(temp, { recursive: true });

let failed = 0;
/** The names each entry point exports, by report name, read from its report as generated. */
const exported = new Map<string, ReadonlySet<string>>();
for (const [name, { folder, declarations, specifier, source, namesFrom }] of Object.entries(ENTRY_POINTS)) {
  const project = join(ROOT, folder);
  const config = ExtractorConfig.prepare({
    configObjectFullPath: join(project, 'api', `${name}.json`),
    packageJsonFullPath: join(project, 'package.json'),
    configObject: {
      projectFolder: project,
      mainEntryPointFilePath: join(project, declarations),
      compiler: { tsconfigFilePath: join(project, 'tsconfig.build.json') },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder: join(project, 'api'), reportTempFolder: temp },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // The reports list every exported name; release tags and TSDoc style are not part of this review.
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning },
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
          // Collected by the callback below and checked against `namesFrom`; not written into the report.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
          'ae-internal-missing-underscore': { logLevel: ExtractorLogLevel.None },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      },
    },
  });
  const forgotten: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (message) => {
      if (message.messageId === 'ae-forgotten-export') forgotten.push(message.text);
      if (message.logLevel === ExtractorLogLevel.Warning) message.logLevel = ExtractorLogLevel.None;
    },
  });
  if (result.apiReportChanged && !update) {
    console.error(
      `${join(folder, 'api', `${name}.api.md`)} is out of date: the public API of '${declarations}' in ${folder} changed. If that is intended, run npm run api:update and commit the report.`,
    );
    failed++;
  } else if (!result.succeeded) {
    console.error(`api-extractor failed on ${join(folder, declarations)}: ${result.errorCount} errors`);
    failed++;
  }
  // The report as just generated (the temp copy is written whether or not api/ is updated).
  exported.set(name, exportedNames(readFileSync(join(temp, `${name}.api.md`), 'utf8')));
  const elsewhere =
    namesFrom === undefined
      ? undefined
      : {
          specifier: namesFrom.map((from) => ENTRY_POINTS[from]?.specifier ?? from).join("' or '"),
          names: new Set(namesFrom.flatMap((from) => [...(exported.get(from) ?? [])])),
        };
  const problems = forgottenExportProblems({ name, specifier, source }, forgotten.join('\n'), elsewhere);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) failed++;
}
for (const folder of new Set(Object.values(ENTRY_POINTS).map((entry) => entry.folder))) {
  const names = new Map([...exported].filter(([name]) => ENTRY_POINTS[name]?.folder === folder));
  const twice = namesExportedTwice(names);
  for (const problem of twice) console.error(`${join(folder, 'api')}: ${problem}`);
  if (twice.length > 0) failed++;
  const { entries, distinct } = surfaceSize(names);
  const per = [...names].map(([name, set]) => `${name} ${set.size}`).join(', ');
  console.log(`${join(folder, 'api')}: ${entries} entries, ${distinct} distinct names (${per})`);
}
process.exitCode = failed === 0 ? 0 : 1;
