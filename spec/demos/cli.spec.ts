/** The main job as a new user runs it: `npm start` (demos/webpage/main.ts), over a real process. */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const root = new URL('../../', import.meta.url).pathname;

async function demo(args: string[], env: Record<string, string | undefined> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'demos/webpage/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: undefined, LOG_LEVEL: 'warn', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the WebPage demo (the main job, npm start)', function () {
  this.timeout(90_000);

  it('shows 3/3 WebPages ready within 10 seconds on the embedded server, then changes one and deletes one', async () => {
    const { code, stdout } = await demo(['--once']);
    expect(code, stdout).to.equal(0);
    const ready = /• 3\/3 WebPages ready in ([\d.]+) s/.exec(stdout);
    expect(ready, stdout).to.not.equal(null);
    expect(Number(ready?.[1])).to.be.lessThan(10);
    expect(stdout).to.match(/kubectl --kubeconfig \S+ get webpages/);
    expect(stdout).to.include('changed webpage/about');
    expect(stdout).to.include('deleted webpage/docs');
  });

  it('an exported KUBECONFIG is never used by surprise: the embedded server runs, in a work directory of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-demo-spec-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "http://127.0.0.1:9" } }]\nusers: [{ name: u, user: {} }]\ncontexts: [{ name: c, context: { cluster: c, user: u } }]\ncurrent-context: c\n',
    );
    const [first, second] = await Promise.all([demo(['--once'], { KUBECONFIG: kubeconfig }), demo(['--once'])]);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    expect(first.stdout).to.include('KUBECONFIG is set but not used');
    expect(first.stdout).to.match(/embedded API server at http:\/\/127\.0\.0\.1:\d+/);
    const paths = [first, second].map((run) => /kubectl --kubeconfig (\S+) get webpages/.exec(run.stdout)?.[1]);
    expect(paths[0]).to.be.a('string');
    expect(paths[0]).to.not.equal(paths[1]);
  });

  it('its temporary directory (kubeconfig, operator log) is gone after it exits, and after Ctrl-C', async () => {
    const once = await demo(['--once']);
    const onceDir = dirname(/kubectl --kubeconfig (\S+) get webpages/.exec(once.stdout)?.[1] ?? '');
    expect(onceDir).to.match(/rxkube-demo-/);
    expect(existsSync(onceDir), onceDir).to.equal(false);

    const child = spawn(process.execPath, ['--import', 'tsx', 'demos/webpage/main.ts'], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: undefined, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('running; Ctrl-C to stop')) resolve();
      });
      void exited.then(() => reject(new Error(`the demo exited before running:\n${stdout}`)));
    });
    const dir = dirname(/kubectl --kubeconfig (\S+) get webpages/.exec(stdout)?.[1] ?? '');
    expect(existsSync(dir), dir).to.equal(true);
    child.kill('SIGINT');
    expect(await exited).to.equal(0);
    expect(existsSync(dir), dir).to.equal(false);
  });

  it("SIGTERM to npm start's own pid, as a process manager sends it, stops the demo: nothing of it is left running", async () => {
    // Its own process group: what is left of it after npm exits is found by the group, orphans included.
    const npm = spawn('npm', ['start'], {
      cwd: root,
      env: {
        ...process.env,
        PATH: `${join(root, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}`,
        KUBECONFIG: undefined,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const group = npm.pid!;
    const groupAlive = () => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      let stdout = '';
      const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        npm.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('running; Ctrl-C to stop')) resolve();
        });
        void exited.then(() => reject(new Error(`npm start exited before running:\n${stdout}`)));
      });
      process.kill(group, 'SIGTERM');
      expect(await exited).to.equal(0);
      const deadline = Date.now() + 10_000;
      while (groupAlive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(groupAlive(), 'a process of npm start still runs').to.equal(false);
    } finally {
      if (groupAlive()) process.kill(-group, 'SIGKILL');
    }
  });

  it('JSON logs never mix into stdout when it is not a terminal', async () => {
    const { code, stdout } = await demo(['--once'], { LOG_LEVEL: 'info' });
    expect(code).to.equal(0);
    expect(stdout.split('\n').filter((line) => line.startsWith('{'))).to.deep.equal([]);
  });

  it('a bad flag gives a one-line error and exit code 2', async () => {
    const { code, stderr } = await demo(['--nope']);
    expect(code).to.equal(2);
    expect(stderr.trim().split('\n')).to.deep.equal([
      'webpage demo: unknown flag --nope (known: --kubeconfig, --context, --variant, --port, --ready-after-ms, --once, --help) (see npm start -- --help)',
    ]);
  });

  it('an unreachable cluster gives a one-line error and a non-zero exit code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-demo-spec-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: gone, cluster: { server: "http://127.0.0.1:9", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: gone, context: { cluster: gone, user: u } }]',
        'current-context: gone',
      ].join('\n'),
    );
    const { code, stderr } = await demo(['--kubeconfig', kubeconfig]);
    expect(code).to.equal(1);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).to.have.length(1);
    expect(lines[0]).to.match(/^webpage demo: cannot reach the cluster http:\/\/127\.0\.0\.1:9, context gone, from /);
  });
});
