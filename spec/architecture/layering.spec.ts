import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { importCycles, readImports, serverImportsReachedFrom, violationOf, violations, type ImportEdge } from './layering.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('architecture: the layering of DESIGN §2', () => {
  it('the imports of lib/ and demos/ follow the layers, cross folders only through index.ts, and lib/ never imports demos/', () => {
    const edges = readImports(root, ['lib', 'demos']);
    expect(edges.length, 'the reader found the imports').to.be.greaterThan(300);
    expect(violations(edges)).to.deep.equal([]);
  });

  it('the API server package imports nothing of the toolkit', () => {
    const edges = readImports(root, ['packages/apiserver/src']);
    expect(edges.length, 'the reader found the imports').to.be.greaterThan(200);
    expect(violations(edges)).to.deep.equal([]);
    expect(violationOf({ from: 'packages/apiserver/src/server.ts', to: 'lib/core/index.ts' })).to.match(/imports nothing of the toolkit/);
    expect(violationOf({ from: 'packages/apiserver/src/server.ts', to: 'rxkube/kube' })).to.match(/imports nothing of the toolkit/);
  });

  it("the API server's folders import only lower layers: api/, then patch/ auth/ controllers/ on it, then http/, then src/*.ts", () => {
    const edges = readImports(root, ['packages/apiserver/src']);
    const crossing = edges.filter((e) => e.from.split('/')[3] !== e.to.split('/')[3] && e.to.startsWith('packages/'));
    expect(crossing.length, 'the reader found imports between the folders').to.be.greaterThan(100);
    expect(violations(edges)).to.deep.equal([]);
  });

  it("fails when an upward import is added to the API server's real import graph", () => {
    const upward: ImportEdge = { from: 'packages/apiserver/src/api/core.ts', to: 'packages/apiserver/src/patch/engine.ts' };
    const found = violations([...readImports(root, ['packages/apiserver/src']), upward]);
    expect(found).to.deep.equal([`${upward.from} -> ${upward.to}: the server's api/ may import only lower layers (patch/ is above it)`]);
  });

  it('no import cycle among the files of lib/, demos/ and the API server, inside a folder or across', () => {
    expect(importCycles(readImports(root, ['lib', 'demos', 'packages/apiserver/src']))).to.deep.equal([]);
  });

  it('fails when a cycle is planted inside a folder of the API server', () => {
    const edges = readImports(root, ['packages/apiserver/src']);
    const core = 'packages/apiserver/src/api/core.ts';
    const binding = 'packages/apiserver/src/api/binding.ts';
    expect(edges).to.deep.include({ from: core, to: binding });
    expect(importCycles([...edges, { from: binding, to: core }]).map((cycle) => [...cycle].sort())).to.deep.equal([[binding, core]]);
  });

  for (const folder of ['lib/sources/', 'lib/cache/']) {
    it(`fails when a cycle is planted inside a folder of lib/ (${folder})`, () => {
      const edges = readImports(root, ['lib']);
      const inside = edges.find((e) => e.from.startsWith(folder) && e.to.startsWith(folder) && e.from !== e.to);
      expect(inside, `an import inside ${folder}`).not.to.equal(undefined);
      const back = { from: inside!.to, to: inside!.from };
      const cycles = importCycles([...edges, back]);
      expect(cycles).to.have.length(1);
      expect(cycles[0]).to.include.members([inside!.from, inside!.to]);
    });
  }

  it('finds every cycle of a synthetic graph, a file importing itself included, and nothing else', () => {
    const edge = (from: string, to: string): ImportEdge => ({ from, to });
    const graph = [
      edge('a', 'b'),
      edge('b', 'c'),
      edge('c', 'a'),
      edge('c', 'd'),
      edge('d', 'e'),
      edge('f', 'f'),
      edge('g', 'a'),
      edge('e', '@pkg'),
    ];
    expect(importCycles(graph)).to.deep.equal([['a', 'b', 'c'], ['f']]);
    expect(importCycles(graph.filter((e) => e.from !== 'c' && e.from !== 'f'))).to.deep.equal([]);
  });

  it('no entry point of the toolkit but testing/cluster loads the API server package, and the check sees one that would', () => {
    const edges = readImports(root, ['lib']);
    const exports = (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { exports: Record<string, string | { import?: string }> })
      .exports;
    const entries = Object.entries(exports)
      .filter(([name, target]) => name !== './testing/cluster' && typeof target === 'object' && target.import !== undefined)
      .map(([, target]) => (target as { import: string }).import.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts'));
    expect(entries).to.include.members([
      'lib/index.ts',
      'lib/pipeline.ts',
      'lib/operators.ts',
      'lib/kube.ts',
      'lib/testing/index.ts',
      'lib/webhooks.ts',
    ]);
    for (const entry of entries) expect(serverImportsReachedFrom(entry, edges), entry).to.deep.equal([]);
    expect(serverImportsReachedFrom('lib/testing/cluster/index.ts', edges)).not.to.deep.equal([]);
    const planted = [...edges, { from: 'lib/controller/operator.ts', to: 'lib/testing/cluster/index.ts' }];
    expect(serverImportsReachedFrom('lib/index.ts', planted)).to.include('lib/testing/cluster/cluster.ts -> @rxkube/apiserver');
  });

  it('fails when an upward import is added to the real import graph', () => {
    const upward: ImportEdge = { from: 'lib/core/resource.ts', to: 'lib/controller/index.ts' };
    const found = violations([...readImports(root, ['lib', 'demos']), upward]);
    expect(found).to.deep.equal([
      'lib/core/resource.ts -> lib/controller/index.ts: core may import only lower layers (controller is above it)',
    ]);
  });

  it('fails when the cache imports the event sources above it in the real import graph (kube → cache → sources)', () => {
    const edges = readImports(root, ['lib', 'demos']);
    expect(edges.some((e) => e.from.startsWith('lib/sources/') && e.to === 'lib/cache/index.ts')).to.equal(true);
    const upward: ImportEdge = { from: 'lib/cache/informer.ts', to: 'lib/sources/index.ts' };
    expect(violations([...edges, upward])).to.deep.equal([
      'lib/cache/informer.ts -> lib/sources/index.ts: cache may import only lower layers (sources is above it)',
    ]);
  });

  const broken: [string, ImportEdge, RegExp][] = [
    [
      'an upward import',
      { from: 'lib/kube/client.ts', to: 'lib/sources/index.ts' },
      /kube may import only lower layers \(sources is above it\)/,
    ],
    ['an import within one layer', { from: 'lib/sources/secondary.ts', to: 'lib/observe/index.ts' }, /on the same layer/],
    [
      'the cache on observe/',
      { from: 'lib/cache/informer.ts', to: 'lib/observe/index.ts' },
      /cache may import only lower layers \(observe is above it\)/,
    ],
    [
      'the cache on the processing core',
      { from: 'lib/cache/store.ts', to: 'lib/processing/index.ts' },
      /cache may import only lower layers \(processing is above it\)/,
    ],
    [
      'kube/ on the cache',
      { from: 'lib/kube/client.ts', to: 'lib/cache/index.ts' },
      /kube may import only lower layers \(cache is above it\)/,
    ],
    [
      'a bypass of index.ts',
      { from: 'lib/controller/controller.ts', to: 'lib/cache/informer.ts' },
      /through the folder's index.ts \(lib\/cache\/index.ts\)/,
    ],
    [
      "a bypass of the cache's index.ts from the sources",
      { from: 'lib/sources/secondary.ts', to: 'lib/cache/store.ts' },
      /through the folder's index.ts \(lib\/cache\/index.ts\)/,
    ],
    ['processing/ on kube/', { from: 'lib/processing/retry.ts', to: 'lib/kube/index.ts' }, /processing\/ imports only core\//],
    [
      'controller/ on the API server package',
      { from: 'lib/controller/operator.ts', to: '@rxkube/apiserver' },
      /only testing\/cluster\/, testing\/explore\/ and cli\/ may import @rxkube\/apiserver/,
    ],
    [
      'the marble helpers on the API server package',
      { from: 'lib/testing/marbles.ts', to: '@rxkube/apiserver' },
      /only testing\/cluster\/, testing\/explore\/ and cli\/ may import @rxkube\/apiserver/,
    ],
    ['a self-reference in lib/', { from: 'lib/controller/operator.ts', to: 'rxkube/kube' }, /refers to itself by relative path/],
    ['lib/ on demos/', { from: 'lib/cli/demo.ts', to: 'demos/webpage/model.ts' }, /lib\/ imports nothing outside lib\//],
    ['lib/ on spec/', { from: 'lib/testing/cluster.ts', to: 'spec/controller/fixtures.ts' }, /lib\/ imports nothing outside lib\//],
    [
      'demos/ on cli internals',
      { from: 'demos/tomcat/main.ts', to: 'lib/cli/args.ts' },
      /demos\/ import lib\/ only through an entry point/,
    ],
    ['an entry point on testing/', { from: 'lib/index.ts', to: 'lib/testing/index.ts' }, /\(entry\) may import only lower layers/],
    [
      "the server's api/ on http/",
      { from: 'packages/apiserver/src/api/builtins.ts', to: 'packages/apiserver/src/http/table.ts' },
      /server's api\/ may import only lower layers \(http\/ is above it\)/,
    ],
    [
      "the server's api/ on controllers/",
      { from: 'packages/apiserver/src/api/crds.ts', to: 'packages/apiserver/src/controllers/gc.ts' },
      /server's api\/ may import only lower layers \(controllers\/ is above it\)/,
    ],
    [
      "the server's auth/ on controllers/ (one layer)",
      { from: 'packages/apiserver/src/auth/aggregation.ts', to: 'packages/apiserver/src/controllers/gc.ts' },
      /server's auth\/ may import only lower layers \(controllers\/ is on the same layer\)/,
    ],
    [
      "the server's http/ on a file at the top of src/",
      { from: 'packages/apiserver/src/http/handlers.ts', to: 'packages/apiserver/src/server.ts' },
      /server's http\/ may import only lower layers \(src\/\*\.ts is above it\)/,
    ],
    [
      "the server's api/ on an unknown folder",
      { from: 'packages/apiserver/src/api/core.ts', to: 'packages/apiserver/src/util/x.ts' },
      /util\/ is not a known layer of the API server/,
    ],
  ];
  for (const [what, edge, rule] of broken) {
    it(`rejects ${what}`, () => {
      expect(violationOf(edge)).to.match(rule);
    });
  }

  const allowed: [string, ImportEdge][] = [
    ['an import within a folder', { from: 'lib/cache/informer.ts', to: 'lib/cache/store.ts' }],
    ['a downward import through index.ts', { from: 'lib/controller/controller.ts', to: 'lib/sources/index.ts' }],
    ['the event sources on the cache through its index.ts', { from: 'lib/sources/secondary.ts', to: 'lib/cache/index.ts' }],
    ['the cache on kube/', { from: 'lib/cache/reflector.ts', to: 'lib/kube/index.ts' }],
    ['processing/ on core/', { from: 'lib/processing/retry.ts', to: 'lib/core/index.ts' }],
    ['an entry point on a folder', { from: 'lib/index.ts', to: 'lib/controller/index.ts' }],
    ['the cluster test helpers on the API server package', { from: 'lib/testing/cluster/cluster.ts', to: '@rxkube/apiserver' }],
    ['testing/ on an entry point', { from: 'lib/testing/cluster/rbac.ts', to: 'lib/index.ts' }],
    ['lib/ on a package', { from: 'lib/kube/client.ts', to: '@kubernetes/client-node' }],
    ['cli/ on an entry point', { from: 'lib/cli/demo.ts', to: 'lib/index.ts' }],
    ['demos/ on an entry point', { from: 'demos/webpage/model.ts', to: 'lib/index.ts' }],
    ["demos/ on cli/'s index.ts", { from: 'demos/tomcat/main.ts', to: 'lib/cli/index.ts' }],
    ["the server's http/ on api/", { from: 'packages/apiserver/src/http/handlers.ts', to: 'packages/apiserver/src/api/core.ts' }],
    ["the server's patch/ on api/", { from: 'packages/apiserver/src/patch/engine.ts', to: 'packages/apiserver/src/api/patch-port.ts' }],
    ["the server's assembly on http/", { from: 'packages/apiserver/src/server.ts', to: 'packages/apiserver/src/http/handlers.ts' }],
    [
      "an import inside the server's api/durable/",
      { from: 'packages/apiserver/src/api/durable/journal.ts', to: 'packages/apiserver/src/api/store.ts' },
    ],
  ];
  for (const [what, edge] of allowed) {
    it(`allows ${what}`, () => {
      expect(violationOf(edge)).to.equal(undefined);
    });
  }
});
