/** What the package's tarball holds for a reader on npm: a README that says what it is and how to use it. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

describe('the @rxkube/apiserver package', () => {
  it('ships a README: what it is, the dev-dependency install, startApiServer, rxkube-apiserver, and where the docs are', async function () {
    this.timeout(60_000);
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: PACKAGE,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    expect(pack.files.map((f) => f.path)).to.include('README.md');
    const readme = readFileSync(`${PACKAGE}README.md`, 'utf8');
    expect(readme).to.match(/^# @rxkube\/apiserver\n/);
    expect(readme)
      .to.include('npm install --save-dev @rxkube/apiserver')
      .and.include('startApiServer')
      .and.include('npx rxkube-apiserver')
      .and.include('docs/apiserver.md');
  });
});
