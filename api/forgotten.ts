/** An entry point as a user imports it, and the source file that defines its exports. */
export interface EntryPointName {
  /** The report's name, e.g. `rxkube-pipeline`. */
  readonly name: string;
  /** What users import, e.g. `rxkube/pipeline`. */
  readonly specifier: string;
  /** The file to add the export to, e.g. `lib/pipeline.ts`. */
  readonly source: string;
}

const FORGOTTEN = /\(ae-forgotten-export\) The symbol "([^"]+)" needs to be exported/g;

/**
 * One message per type that appears in a public signature of the entry point but that users
 * cannot import from it (API Extractor's ae-forgotten-export warnings in the report), each type once.
 */
export function forgottenExportProblems(entry: EntryPointName, report: string): string[] {
  const symbols = new Set([...report.matchAll(FORGOTTEN)].map((match) => match[1]));
  return [...symbols].map(
    (symbol) =>
      `${entry.name}.api.md: '${symbol}' appears in the public API of '${entry.specifier}' but cannot be imported from it: export it from ${entry.source} (a type-only export is enough)`,
  );
}
