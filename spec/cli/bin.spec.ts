/** `bin/rxkube.js` before the package is built, as in a fresh clone after npm ci. */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('cli: bin/rxkube.js', () => {
  it('in a clone without dist/ says to run npm run build, not that a module is missing', async () => {
    const clone = mkdtempSync(join(tmpdir(), 'rxkube-clone-'));
    mkdirSync(join(clone, 'bin'));
    copyFileSync(join(ROOT, 'bin/rxkube.js'), join(clone, 'bin/rxkube.js'));
    writeFileSync(join(clone, 'package.json'), JSON.stringify({ name: 'rxkube', type: 'module' }));
    const failed = await promisify(execFile)(process.execPath, [join(clone, 'bin/rxkube.js'), 'init', 'x'], {
      cwd: clone,
      timeout: 20_000,
    }).catch((err: { code: number; stderr: string }) => err);
    expect(failed).to.include({ code: 1 });
    expect((failed as { stderr: string }).stderr.trim()).to.equal(
      `rxkube: ${join(clone, 'dist')}/ is not built: in a clone of the repository, run \`npm run build\` first (npm ci does not build it)`,
    );
  });
});
