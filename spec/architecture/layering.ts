/**
 * The layering rules of DESIGN §2 as a pure check over an import graph, and a reader that builds
 * that graph from the files on disk. The spec runs the check on the real tree and on synthetic
 * graphs (so that a broken rule is seen to fail).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/** One import (or re-export, or dynamic import) between two files, paths relative to the repository root. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

/** The layers, lowest first; a folder of lib/ imports only from lower layers. */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['kube'],
  ['processing', 'sources', 'observe', 'leader'],
  ['dependent', 'sharding'],
  ['workflow'],
  ['controller'],
  ['(entry)'], // every lib/*.ts at the top level: the package's entry points
  ['testing', 'cli'],
];

/** The embedded API server stands apart: it imports nothing else of lib/, and only these know it. */
const APISERVER = 'apiserver';
const KNOW_APISERVER = new Set(['(entry)', 'testing', 'cli']);
/** processing/ is the pure scheduling core: it imports only core/. */
const PROCESSING_ALLOWED = new Set(['core']);

/** Where a file sits: a folder of lib/ ('(entry)' for lib/*.ts), 'demos', or undefined (anything else). */
export function unitOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] === 'demos') return 'demos';
  if (parts[0] !== 'lib' || parts.length < 2) return undefined;
  return parts.length === 2 ? '(entry)' : parts[1];
}

/** True for a folder's own index.ts and for a top-level entry file: the only files another unit may import. */
function isFrontDoor(path: string): boolean {
  const parts = path.split('/');
  return parts[0] === 'lib' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'index.ts'));
}

function layerOf(unit: string): number | undefined {
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  return index === -1 ? undefined : index;
}

/** The rule an import breaks, or undefined when it is allowed. */
export function violationOf(edge: ImportEdge): string | undefined {
  const from = unitOf(edge.from);
  const to = unitOf(edge.to);
  if (from === undefined || from === to) return undefined;
  if (from !== 'demos' && !edge.to.startsWith('lib/')) return 'lib/ imports nothing outside lib/ (demos/, spec/, bench/) but packages';
  if (to === undefined) return undefined;
  if (from === 'demos') {
    return isFrontDoor(edge.to) ? undefined : 'demos/ import lib/ only through an entry point (lib/*.ts or a folder index.ts), never its internals';
  }
  if (!isFrontDoor(edge.to)) return `imports between folders go through the folder's index.ts (lib/${to}/index.ts)`;
  if (from === APISERVER) return 'apiserver/ imports nothing else from lib/';
  if (to === APISERVER) return KNOW_APISERVER.has(from) ? undefined : 'only testing/, cli/ and the entry points may import apiserver/';
  if (from === 'processing' && !PROCESSING_ALLOWED.has(to)) return 'processing/ imports only core/';
  const fromLayer = layerOf(from);
  const toLayer = layerOf(to);
  if (fromLayer === undefined || toLayer === undefined) return `${fromLayer === undefined ? from : to} is not a known layer of DESIGN §2`;
  if (toLayer >= fromLayer) return `${from} may import only lower layers (${to} is ${toLayer === fromLayer ? 'on the same layer' : 'above it'})`;
  return undefined;
}

/** Every import that breaks a rule, with the rule. */
export function violations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const edge of edges) {
    const rule = violationOf(edge);
    if (rule) out.push(`${edge.from} -> ${edge.to}: ${rule}`);
  }
  return out;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** The relative imports of the .ts files under `dirs` (static, type-only, re-exports and dynamic). */
export function readImports(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const dir of dirs) {
    for (const file of tsFiles(join(root, dir))) {
      const from = relative(root, file).split(sep).join('/');
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue; // a package
        const to = posix.normalize(posix.join(posix.dirname(from), fileName)).replace(/\.js$/, '.ts');
        edges.push({ from, to });
      }
    }
  }
  return edges;
}
