/**
 * Which names a folder's index.ts exports that nothing outside the folder imports. A folder's
 * index is its door for the other folders, the entry points and the demos: a name there that none
 * of them use is an internal that only looks shared (specs import internals from their files).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/** What one file imports by name from one folder index; '*' for a namespace import, `export *` or `import()`. */
export interface NamedImport {
  readonly from: string;
  readonly index: string;
  readonly names: readonly string[];
}

/** The names an index.ts re-exports (`export { a, type B } from`, as every folder index is written). */
export function indexExports(source: string): string[] {
  const file = ts.createSourceFile('index.ts', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(element.name.text);
    }
  }
  return names;
}

/** The names `source` (the file at `from`) imports or re-exports from folder indexes of lib/. */
export function namedImports(from: string, source: string): NamedImport[] {
  const file = ts.createSourceFile(from, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: NamedImport[] = [];
  const indexOf = (specifier: string): string | undefined => {
    if (!specifier.startsWith('.')) return undefined;
    const to = posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
    return /^lib\/[^/]+\/index\.ts$/.test(to) ? to : undefined;
  };
  const add = (specifier: ts.Expression | undefined, names: string[]) => {
    const index = specifier && ts.isStringLiteral(specifier) ? indexOf(specifier.text) : undefined;
    if (index) out.push({ from, index, names });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        add(
          node.moduleSpecifier,
          bindings.elements.map((e) => (e.propertyName ?? e.name).text),
        );
      else add(node.moduleSpecifier, ['*']);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      if (clause && ts.isNamedExports(clause))
        add(
          node.moduleSpecifier,
          clause.elements.map((e) => (e.propertyName ?? e.name).text),
        );
      else add(node.moduleSpecifier, ['*']);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], ['*']);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const name = node.qualifier && (ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.left.getText(file));
      add(node.argument.literal, [name ?? '*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** `lib/<folder>/index.ts: name` for each name an index exports that no file outside its folder imports. */
export function unusedIndexExports(indexes: ReadonlyMap<string, readonly string[]>, imports: readonly NamedImport[]): string[] {
  const used = new Map<string, Set<string>>();
  for (const { from, index, names } of imports) {
    if (from.startsWith(posix.dirname(index) + '/')) continue; // the folder's own files
    const set = used.get(index) ?? new Set<string>();
    for (const name of names) set.add(name);
    used.set(index, set);
  }
  const unused: string[] = [];
  for (const [index, names] of indexes) {
    const set = used.get(index) ?? new Set<string>();
    if (set.has('*')) continue;
    for (const name of names) if (!set.has(name)) unused.push(`${index}: ${name}`);
  }
  return unused;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The folder indexes of lib/ (testing/index.ts is an entry point: all of it is public) and what lib/ and demos/ import from them. */
export function readIndexUse(root: string): { indexes: Map<string, string[]>; imports: NamedImport[] } {
  const indexes = new Map<string, string[]>();
  for (const entry of readdirSync(join(root, 'lib'), { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === 'testing') continue;
    const path = join(root, 'lib', entry.name, 'index.ts');
    try {
      indexes.set(`lib/${entry.name}/index.ts`, indexExports(readFileSync(path, 'utf8')));
    } catch {
      // a folder without an index (cli/) has no door to check
    }
  }
  const imports = ['lib', 'demos'].flatMap((dir) =>
    tsFiles(join(root, dir)).flatMap((file) => namedImports(relative(root, file).split(sep).join('/'), readFileSync(file, 'utf8'))),
  );
  return { indexes, imports };
}
