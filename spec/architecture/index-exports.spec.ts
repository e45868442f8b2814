import { expect } from 'chai';
import { indexExports, namedImports, readIndexUse, unusedIndexExports } from './index-exports.js';

const root = new URL('../../', import.meta.url).pathname;

describe("architecture: each folder's index.ts exports what other folders use", () => {
  it('no folder index exports a name that no other folder, entry point or demo imports', () => {
    const { indexes, imports } = readIndexUse(root);
    expect(indexes.size, 'folder indexes read').to.be.greaterThan(8);
    expect(unusedIndexExports(indexes, imports)).to.deep.equal([]);
  });

  it('fails on a planted name only the folder itself uses, and counts a name an entry point re-exports (public API) as used', () => {
    const indexes = new Map([
      [
        'lib/kube/index.ts',
        indexExports("export { createKubeClient, type KubeClient } from './client.js';\nexport { reasonOf } from './errors.js';\n"),
      ],
    ]);
    const imports = [
      ...namedImports('lib/kube/request.ts', "import { reasonOf } from './index.js';\n"),
      ...namedImports('lib/cache/informer.ts', "import { createKubeClient } from '../kube/index.js';\n"),
      ...namedImports('lib/kube.ts', "export { type KubeClient } from './kube/index.js';\n"),
    ];
    expect(unusedIndexExports(indexes, imports)).to.deep.equal(['lib/kube/index.ts: reasonOf']);
  });

  it('reads type-only, renamed, re-exported, namespace and dynamic imports of a folder index', () => {
    const source = [
      "import { a, type B, c as d } from '../kube/index.js';",
      "export { e } from '../kube/index.js';",
      "import * as all from '../core/index.js';",
      "const lazy = await import('../observe/index.js');",
      "import { f } from './local.js';",
    ].join('\n');
    expect(namedImports('lib/sources/x.ts', source).map(({ index, names }) => `${index}: ${names.join(' ')}`)).to.deep.equal([
      'lib/kube/index.ts: a B c',
      'lib/kube/index.ts: e',
      'lib/core/index.ts: *',
      'lib/observe/index.ts: *',
    ]);
  });
});
