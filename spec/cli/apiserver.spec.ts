/** `rxkube apiserver`: the toolkit's command hands over to the server package's own. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

describe('cli: rxkube apiserver', () => {
  it("runs @rxkube/apiserver's command under the toolkit's name", async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/rxkube.js'), 'apiserver', '--help'], { cwd: ROOT, timeout: 20_000 });
    expect(stdout).to.contain('usage: rxkube apiserver [options]').and.contain('--simulate');
  });

  it('answers a bad flag in one line named after the command it was called by', async () => {
    const failed = await run(process.execPath, [join(ROOT, 'bin/rxkube.js'), 'apiserver', '--port', 'x'], {
      cwd: ROOT,
      timeout: 20_000,
    }).catch((err: { code: number; stderr: string }) => err);
    expect(failed).to.include({ code: 2 });
    expect((failed as { stderr: string }).stderr.trim()).to.equal("rxkube apiserver: --port must be a whole number >= 0, got 'x'");
  });
});
