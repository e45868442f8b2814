/** An entry point as a user imports it, and the source file that defines its exports. */
export interface EntryPointName {
  /** The report's name, e.g. `rxkube-pipeline`. */
  readonly name: string;
  /** What users import, e.g. `rxkube/pipeline`. */
  readonly specifier: string;
  /** The file to add the export to, e.g. `lib/pipeline.ts`. */
  readonly source: string;
}

const FORGOTTEN = /(?:\(ae-forgotten-export\) )?The symbol "([^"]+)" needs to be exported/g;

/** Another entry point of the same package, and the names it exports. */
export interface NamesFrom {
  readonly specifier: string;
  readonly names: ReadonlySet<string>;
}

const EXPORT = /^export (?:declare )?(?:abstract )?(?:function|const|class|interface|type|enum|namespace|let) (\w+)/gm;

/** The names an API report declares as exported. */
export function exportedNames(report: string): Set<string> {
  return new Set([...report.matchAll(EXPORT)].map((match) => match[1]));
}

/**
 * One message per type that appears in a public signature of the entry point but that users
 * cannot import from it (API Extractor's ae-forgotten-export warnings), each type once. A type
 * that `namesFrom` exports is nameable: users import it from there.
 */
export function forgottenExportProblems(entry: EntryPointName, warnings: string, namesFrom?: NamesFrom): string[] {
  const symbols = new Set([...warnings.matchAll(FORGOTTEN)].map((match) => match[1]).filter((symbol) => !namesFrom?.names.has(symbol)));
  return [...symbols].map(
    (symbol) =>
      `${entry.name}.api.md: '${symbol}' appears in the public API of '${entry.specifier}' but cannot be imported from it: export it from ${entry.source} (a type-only export is enough)${namesFrom ? `, or from '${namesFrom.specifier}'` : ''}`,
  );
}
