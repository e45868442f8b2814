/**
 * On a Node.js older than rxkube needs, every entry point and the `rxkube` command fail at once
 * with a message naming the version needed — not inside a dependency.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { nodeVersionProblem, REQUIRED_NODE } from '../../lib/node-check.js';

const root = new URL('../../', import.meta.url).pathname;

/** A `node` on PATH older than rxkube needs (the machine's own, when it has one), else undefined. */
function olderNode(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const file = join(dir, 'node');
    if (!existsSync(file)) continue;
    const version = execFileSync(file, ['--version'], { encoding: 'utf8' }).trim();
    if (nodeVersionProblem(version) !== undefined) return file;
  }
  return undefined;
}

describe('the Node.js version rxkube needs', () => {
  it('is the floor of engines.node, and an older version is named with the one needed', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).to.equal(`>=${REQUIRED_NODE}`);
    expect(REQUIRED_NODE).to.equal('22.19.0');
    for (const ok of ['22.19.0', '22.20.1', '23.0.0', '24.21.0', 'v26.1.0']) expect(nodeVersionProblem(ok), ok).to.equal(undefined);
    expect(nodeVersionProblem('20.20.2')).to.equal(
      'rxkube needs Node.js >= 22.19.0; this is Node.js v20.20.2 — install a newer Node.js (22.19 or later, 24 recommended)',
    );
    for (const old of ['22.18.9', 'v22.9.0', '18.0.0'])
      expect(nodeVersionProblem(old), old).to.match(/^rxkube needs Node\.js >= 22\.19\.0; this is Node\.js v/);
  });

  it('on an older Node, importing any entry point fails with that message (not inside undici), and so does the rxkube command', async function () {
    this.timeout(120_000);
    const node = olderNode();
    if (node === undefined) {
      console.log('      no Node.js older than 22.19 on PATH: skipped');
      this.skip();
    }
    for (const entry of ['lib/index.ts', 'lib/pipeline.ts', 'lib/operators.ts', 'lib/kube.ts', 'lib/testing/index.ts']) {
      const failure = await promisify(execFile)(node, ['--import', 'tsx', '-e', `await import('./${entry}')`], { cwd: root }).then(
        () => undefined,
        (err: { stderr?: string }) => err.stderr ?? '',
      );
      expect(failure, entry).to.be.a('string').and.include('rxkube needs Node.js >= 22.19.0; this is Node.js v').and.not.include('undici');
    }
    if (!existsSync(join(root, 'dist/node-check.js'))) return; // the command runs the compiled package (npm test builds it first)
    const command = await promisify(execFile)(node, [join(root, 'bin/rxkube.js'), 'init', 'x'], { cwd: root }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
    );
    expect(command.code).to.equal(1);
    expect(command.stderr.trim()).to.match(/^rxkube: rxkube needs Node\.js >= 22\.19\.0; this is Node\.js v\d+/);
  });
});
