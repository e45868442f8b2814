/**
 * The layering rules of DESIGN §2 as a pure check over an import graph, and a reader that builds
 * that graph from the files on disk. The spec runs the check on the real tree and on synthetic
 * graphs (so that a broken rule is seen to fail).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * One import (or re-export, or dynamic import): from a file to a file (paths relative to the
 * repository root) or to a package (its specifier, e.g. `@rxkube/apiserver`).
 */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

const isPackage = (to: string) =>
  !to.startsWith('lib/') && !to.startsWith('demos/') && !to.startsWith('spec/') && !to.startsWith('packages/') && !to.startsWith('bench/');

/** The layers, lowest first; a folder of lib/ imports only from lower layers. */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['kube'],
  ['cache'], // reflector, informers, stores: what the event sources, the leader's Lease client and the controller read
  ['processing', 'sources', 'observe'],
  ['leader'], // its Lease client, shared with sharding, lists and watches as an informer does (cache)
  ['dependent', 'sharding', 'webhooks'],
  ['workflow'],
  ['controller'],
  ['(entry)'], // every lib/*.ts at the top level: the package's entry points
  ['testing', 'cli'],
];

/** The embedded API server is a package of its own; in lib/ only the cluster test helpers, the explorer and the CLI know it. */
const APISERVER_PACKAGE = /^@rxkube\/apiserver(\/|$)/;
const KNOW_APISERVER = ['lib/testing/cluster/', 'lib/testing/explore/', 'lib/cli/'];
/** The toolkit's own name: lib/ refers to itself by path, never through its package exports. */
const SELF_REFERENCE = /^rxkube(\/|$)/;
/** processing/ is the pure scheduling core: it imports only core/. */
const PROCESSING_ALLOWED = new Set(['core']);

/**
 * The embedded API server's folders, lowest first: api/ holds the types, the store and the write
 * path; patch/, auth/ and controllers/ each build on api/ alone; admission/ (webhooks) on those; http/ serves all of them; the
 * files at the top of src/ (server.ts, index.ts, the CLI) assemble the server.
 */
export const SERVER_LAYERS: readonly (readonly string[])[] = [
  ['api'],
  ['patch', 'auth', 'controllers'],
  ['admission'],
  ['http'],
  ['(top)'],
];
const SERVER_SRC = 'packages/apiserver/src/';

/** The server folder a file of packages/apiserver/src sits in ('(top)' for a file directly in src/), or undefined. */
export function serverUnitOf(path: string): string | undefined {
  if (!path.startsWith(SERVER_SRC)) return undefined;
  const parts = path.slice(SERVER_SRC.length).split('/');
  return parts.length === 1 ? '(top)' : parts[0];
}

/** The rule an import between two of the server's folders breaks, or undefined. */
function serverViolationOf(edge: ImportEdge): string | undefined {
  const from = serverUnitOf(edge.from);
  const to = serverUnitOf(edge.to);
  if (from === undefined || to === undefined || from === to) return undefined;
  const fromLayer = SERVER_LAYERS.findIndex((layer) => layer.includes(from));
  const toLayer = SERVER_LAYERS.findIndex((layer) => layer.includes(to));
  const name = (unit: string) => (unit === '(top)' ? 'src/*.ts' : `${unit}/`);
  if (fromLayer === -1 || toLayer === -1) return `${name(fromLayer === -1 ? from : to)} is not a known layer of the API server`;
  if (toLayer >= fromLayer)
    return `the server's ${name(from)} may import only lower layers (${name(to)} is ${toLayer === fromLayer ? 'on the same layer' : 'above it'})`;
  return undefined;
}

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
  if (path === 'lib/testing/cluster/index.ts') return true; // the entry point rxkube/testing/cluster
  return parts[0] === 'lib' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'index.ts'));
}

function layerOf(unit: string): number | undefined {
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  return index === -1 ? undefined : index;
}

/** The rule an import breaks, or undefined when it is allowed. */
export function violationOf(edge: ImportEdge): string | undefined {
  const from = unitOf(edge.from);
  if (edge.from.startsWith('packages/apiserver/')) {
    if (edge.to.startsWith('lib/') || SELF_REFERENCE.test(edge.to)) return 'the API server package imports nothing of the toolkit';
    return serverViolationOf(edge);
  }
  if (isPackage(edge.to)) {
    if (from === undefined || from === 'demos') return undefined;
    if (SELF_REFERENCE.test(edge.to)) return `lib/ refers to itself by relative path, not through the package's exports ('${edge.to}')`;
    if (APISERVER_PACKAGE.test(edge.to) && !KNOW_APISERVER.some((dir) => edge.from.startsWith(dir))) {
      return 'only testing/cluster/, testing/explore/ and cli/ may import @rxkube/apiserver (the server is not in a production install)';
    }
    return undefined;
  }
  const to = unitOf(edge.to);
  if (from === undefined || from === to) return undefined;
  if (from !== 'demos' && !edge.to.startsWith('lib/')) return 'lib/ imports nothing outside lib/ (demos/, spec/, bench/) but packages';
  if (to === undefined) return undefined;
  if (from === 'demos') {
    return isFrontDoor(edge.to)
      ? undefined
      : 'demos/ import lib/ only through an entry point (lib/*.ts or a folder index.ts), never its internals';
  }
  if (!isFrontDoor(edge.to)) return `imports between folders go through the folder's index.ts (lib/${to}/index.ts)`;
  if (from === 'processing' && !PROCESSING_ALLOWED.has(to)) return 'processing/ imports only core/';
  const fromLayer = layerOf(from);
  const toLayer = layerOf(to);
  if (fromLayer === undefined || toLayer === undefined) return `${fromLayer === undefined ? from : to} is not a known layer of DESIGN §2`;
  if (toLayer >= fromLayer)
    return `${from} may import only lower layers (${to} is ${toLayer === fromLayer ? 'on the same layer' : 'above it'})`;
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

/**
 * The import cycles among files (each a strongly connected component of more than one file, or a
 * file importing itself), every file named once, in the order the search meets them. Type-only
 * imports count: a cycle of types still ties the files' meaning together.
 */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  // Tarjan's algorithm, iterative so that a deep import chain cannot overflow the call stack.
  for (const root of next.keys()) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [file, at] = frame;
      if (at === 0) {
        index.set(file, index.size);
        low.set(file, index.get(file)!);
        stack.push(file);
        onStack.add(file);
      }
      const targets = next.get(file) ?? [];
      if (at < targets.length) {
        frame[1] = at + 1;
        const to = targets[at]!;
        if (!index.has(to)) work.push([to, 0]);
        else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(file)!));
      if (low.get(file) !== index.get(file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || targets.includes(file)) cycles.push(component.reverse());
    }
  }
  return cycles;
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

/**
 * The files an entry point loads, followed through relative imports, that import the API server
 * package: an entry point of the toolkit other than `testing/cluster` must reach none.
 */
export function serverImportsReachedFrom(entry: string, edges: readonly ImportEdge[]): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const seen = new Set<string>([entry]);
  const found: string[] = [];
  for (const file of seen) {
    for (const to of next.get(file) ?? []) {
      if (APISERVER_PACKAGE.test(to)) found.push(`${file} -> ${to}`);
      else if (!isPackage(to) && !seen.has(to)) seen.add(to);
    }
  }
  return found;
}

/** The imports of the .ts files under `dirs` (static, type-only, re-exports and dynamic), relative ones resolved to files. */
export function readImports(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const dir of dirs) {
    for (const file of tsFiles(join(root, dir))) {
      const from = relative(root, file).split(sep).join('/');
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) {
          if (!fileName.startsWith('node:')) edges.push({ from, to: fileName });
          continue;
        }
        const to = posix.normalize(posix.join(posix.dirname(from), fileName)).replace(/\.js$/, '.ts');
        edges.push({ from, to });
      }
    }
  }
  return edges;
}
