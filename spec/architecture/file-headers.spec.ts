/** Every source file opens with a comment saying what it holds, so a reader knows a file before reading it. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Whether a file's text opens with a comment (after a `#!` line, if it has one). */
export function opensWithComment(text: string): boolean {
  const first = text.replace(/^#!.*\n/, '').split('\n', 1)[0] ?? '';
  return first.startsWith('/*') || first.startsWith('//');
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('architecture: every source file opens with a comment saying what it holds', () => {
  for (const dir of ['lib', 'packages/apiserver/src']) {
    it(`every file under ${dir}/ has one`, () => {
      const files = typeScriptFiles(dir);
      expect(files.length, 'the walk found the files').to.be.greaterThan(100);
      const lacking = files.filter((f) => !opensWithComment(readFileSync(join(root, f), 'utf8')));
      expect(lacking, 'files whose first line is not a comment').to.deep.equal([]);
    });
  }

  it('tells a file that opens with code from one that opens with a comment', () => {
    expect(opensWithComment("import { x } from './x.js';\n/** X. */\n")).to.equal(false);
    expect(opensWithComment("\n/** X. */\nimport { x } from './x.js';\n")).to.equal(false);
    expect(opensWithComment("export { x } from './x.js';\n")).to.equal(false);
    expect(opensWithComment("/** The x of everything. */\nimport { x } from './x.js';\n")).to.equal(true);
    expect(opensWithComment("/**\n * The x of everything.\n */\nimport { x } from './x.js';\n")).to.equal(true);
    expect(opensWithComment("// The entry of x.\nexport { x } from './x.js';\n")).to.equal(true);
    expect(opensWithComment("#!/usr/bin/env node\n// The x command.\nimport './x.js';\n")).to.equal(true);
  });
});
