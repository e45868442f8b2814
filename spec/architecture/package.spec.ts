/**
 * What package.json publishes: nothing a consumer's npm runs or warns about, no dependency the
 * code does not import, no source maps pointing at sources the package does not ship. The packed
 * tarball itself is checked by spec-package/consumer.spec.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';

const root = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  files: string[];
};

describe('the published package.json', () => {
  it('has no install-time script (dist/ is built by prepack, before packing): consumers are not warned about install scripts', () => {
    expect(Object.keys(pkg.scripts).filter((name) => ['prepare', 'preinstall', 'install', 'postinstall'].includes(name))).to.deep.equal([]);
    expect(pkg.scripts['prepack']).to.include('npm run -s build');
  });

  it('every runtime dependency is imported by lib/', () => {
    const sources = readdirSync(join(root, 'lib'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
      .join('\n');
    const imported = new Set([...sources.matchAll(/(?:from|import)\s*\(?\s*'((?:@[^/']+\/)?[^/.'][^/']*)/g)].map((m) => m[1]));
    expect(Object.keys(pkg.dependencies).filter((name) => !imported.has(name))).to.deep.equal([]);
  });

  it('ships no source maps: they would point at lib/*.ts, which is not in the package', () => {
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    expect(build.compilerOptions).to.include({ sourceMap: false, declarationMap: false });
    expect(pkg.files.filter((glob) => glob.endsWith('.map'))).to.deep.equal([]);
  });

  it('rxkube/operators, the deprecated old name of rxkube/pipeline, is the same module: every export, the same values', async () => {
    const exports = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { import: string }> })
      .exports;
    expect(exports['./pipeline']?.import).to.equal('./dist/pipeline.js');
    expect(exports['./operators']?.import).to.equal('./dist/operators.js');
    const pipeline = (await import('../../lib/pipeline.js')) as Record<string, unknown>;
    const operators = (await import('../../lib/operators.js')) as Record<string, unknown>;
    expect(Object.keys(operators).sort()).to.deep.equal(Object.keys(pipeline).sort());
    for (const name of Object.keys(pipeline)) expect(operators[name], name).to.equal(pipeline[name]);
  });
});
