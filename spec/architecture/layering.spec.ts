import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { readImports, violationOf, violations, type ImportEdge } from './layering.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('architecture: the layering of DESIGN §2', () => {
  it('the imports of lib/ and demos/ follow the layers, cross folders only through index.ts, and lib/ never imports demos/', () => {
    const edges = readImports(root, ['lib', 'demos']);
    expect(edges.length, 'the reader found the imports').to.be.greaterThan(300);
    expect(violations(edges)).to.deep.equal([]);
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
    ['apiserver/ on core/', { from: 'lib/apiserver/server.ts', to: 'lib/core/index.ts' }, /apiserver\/ imports nothing else from lib\//],
    ['controller/ on apiserver/', { from: 'lib/controller/operator.ts', to: 'lib/apiserver/index.ts' }, /only testing\/, cli\/ and the entry points may import apiserver\//],
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
    ['an entry point on apiserver/', { from: 'lib/apiserver.ts', to: 'lib/apiserver/index.ts' }],
    ['testing/ on apiserver/ and on an entry point', { from: 'lib/testing/cluster.ts', to: 'lib/apiserver/index.ts' }],
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
