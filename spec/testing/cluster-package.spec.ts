/**
 * `rxkube/testing/cluster` in a project without `@rxkube/apiserver` (an optional peer dependency):
 * the built package in a node_modules of its own, every other dependency there but that one.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

describe('rxkube/testing/cluster without @rxkube/apiserver', function () {
  this.timeout(300_000);
  const project = mkdtempSync(join(tmpdir(), 'rxkube-no-apiserver-'));
  after(() => rmSync(project, { recursive: true, force: true }));

  it('imports, and starting a cluster names the package and its install command', async () => {
    if (!existsSync(join(ROOT, 'dist/testing/cluster/apiserver.js')))
      await run('npm', ['run', '-s', 'build'], { cwd: ROOT, timeout: 300_000 });
    const modules = join(project, 'node_modules');
    mkdirSync(modules);
    for (const entry of readdirSync(join(ROOT, 'node_modules')).filter((e) => e !== '@rxkube' && e !== '.bin'))
      symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
    // A copy, not a link: a link would find the repository's own node_modules, which has the server.
    cpSync(join(ROOT, 'dist'), join(modules, 'rxkube/dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(modules, 'rxkube/package.json'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(project, 'test.js'),
      "import { startTestCluster } from 'rxkube/testing/cluster';\nconsole.log('imported');\nawait startTestCluster();\n",
    );
    const failed = await run(process.execPath, ['test.js'], { cwd: project, timeout: 60_000 }).catch(
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(failed).to.have.property('code', 1);
    expect((failed as { stdout: string }).stdout).to.equal('imported\n');
    expect((failed as { stderr: string }).stderr).to.include(
      'rxkube/testing/cluster runs the embedded API server of the package @rxkube/apiserver, which is not installed: npm install --save-dev @rxkube/apiserver',
    );
  });
});
