import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { readImports, serverImportsReachedFrom, violationOf, violations, type ImportEdge } from './layering.js';

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

  it("no entry point of the toolkit but testing/cluster loads the API server package, and the check sees one that would", () => {
    const edges = readImports(root, ['lib']);
    const exports = (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { exports: Record<string, string | { import?: string }> }).exports;
    const entries = Object.entries(exports)
      .filter(([name, target]) => name !== './testing/cluster' && typeof target === 'object' && target.import !== undefined)
      .map(([, target]) => (target as { import: string }).import.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts'));
    expect(entries).to.include.members(['lib/index.ts', 'lib/operators.ts', 'lib/kube.ts', 'lib/testing/index.ts']);
    for (const entry of entries) expect(serverImportsReachedFrom(entry, edges), entry).to.deep.equal([]);
    expect(serverImportsReachedFrom('lib/testing/cluster/index.ts', edges)).not.to.deep.equal([]);
    const planted = [...edges, { from: 'lib/controller/operator.ts', to: 'lib/testing/cluster/index.ts' }];
    expect(serverImportsReachedFrom('lib/index.ts', planted)).to.include('lib/testing/cluster/cluster.ts -> @rxkube/apiserver');
  });

  it('fails when an upward import is added to the real import graph', () => {
    const upward: ImportEdge = { from: 'lib/core/resource.ts', to: 'lib/controller/index.ts' };
    const found = violations([...readImports(root, ['lib', 'demos']), upward]);
    expect(found).to.deep.equal(['lib/core/resource.ts -> lib/controller/index.ts: core may import only lower layers (controller is above it)']);
  });

  const broken: [string, ImportEdge, RegExp][] = [
    ['an upward import', { from: 'lib/kube/client.ts', to: 'lib/sources/index.ts' }, /kube may import only lower layers \(sources is above it\)/],
    ['an import within one layer', { from: 'lib/sources/informer.ts', to: 'lib/observe/index.ts' }, /on the same layer/],
    ['a bypass of index.ts', { from: 'lib/controller/controller.ts', to: 'lib/sources/informer.ts' }, /through the folder's index.ts \(lib\/sources\/index.ts\)/],
    ['processing/ on kube/', { from: 'lib/processing/retry.ts', to: 'lib/kube/index.ts' }, /processing\/ imports only core\//],
    ['controller/ on the API server package', { from: 'lib/controller/operator.ts', to: '@rxkube/apiserver' }, /only testing\/cluster\/ and cli\/ may import @rxkube\/apiserver/],
    ['the marble helpers on the API server package', { from: 'lib/testing/marbles.ts', to: '@rxkube/apiserver' }, /only testing\/cluster\/ and cli\/ may import @rxkube\/apiserver/],
    ['a self-reference in lib/', { from: 'lib/controller/operator.ts', to: 'rxkube/kube' }, /refers to itself by relative path/],
    ['lib/ on demos/', { from: 'lib/cli/demo.ts', to: 'demos/webpage/model.ts' }, /lib\/ imports nothing outside lib\//],
    ['lib/ on spec/', { from: 'lib/testing/cluster.ts', to: 'spec/controller/fixtures.ts' }, /lib\/ imports nothing outside lib\//],
    ['demos/ on cli internals', { from: 'demos/tomcat/main.ts', to: 'lib/cli/args.ts' }, /demos\/ import lib\/ only through an entry point/],
    ['an entry point on testing/', { from: 'lib/index.ts', to: 'lib/testing/index.ts' }, /\(entry\) may import only lower layers/],
  ];
  for (const [what, edge, rule] of broken) {
    it(`rejects ${what}`, () => {
      expect(violationOf(edge)).to.match(rule);
    });
  }

  const allowed: [string, ImportEdge][] = [
    ['an import within a folder', { from: 'lib/sources/informer.ts', to: 'lib/sources/store.ts' }],
    ['a downward import through index.ts', { from: 'lib/controller/controller.ts', to: 'lib/sources/index.ts' }],
    ['processing/ on core/', { from: 'lib/processing/retry.ts', to: 'lib/core/index.ts' }],
    ['an entry point on a folder', { from: 'lib/index.ts', to: 'lib/controller/index.ts' }],
    ['the cluster test helpers on the API server package', { from: 'lib/testing/cluster/cluster.ts', to: '@rxkube/apiserver' }],
    ['testing/ on an entry point', { from: 'lib/testing/cluster/rbac.ts', to: 'lib/index.ts' }],
    ['lib/ on a package', { from: 'lib/kube/client.ts', to: '@kubernetes/client-node' }],
    ['cli/ on an entry point', { from: 'lib/cli/demo.ts', to: 'lib/index.ts' }],
    ['demos/ on an entry point', { from: 'demos/webpage/model.ts', to: 'lib/index.ts' }],
    ["demos/ on cli/'s index.ts", { from: 'demos/tomcat/main.ts', to: 'lib/cli/index.ts' }],
  ];
  for (const [what, edge] of allowed) {
    it(`allows ${what}`, () => {
      expect(violationOf(edge)).to.equal(undefined);
    });
  }
});
