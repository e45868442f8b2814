/** The Schema demo as a user runs it: `npm run demo:schema -- --once` (demos/schema/main.ts), over a real process. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { main } from '../../demos/schema/main.js';

const root = new URL('../../', import.meta.url).pathname;

async function demo(args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'demos/schema/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: undefined },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the Schema demo (npm run demo:schema)', function () {
  this.timeout(150_000);

  it('--once runs the script to the end on the embedded API server and PGlite, and exits 0', async () => {
    const { code, stdout, stderr } = await demo(['--once']);
    expect(code, stdout + stderr).to.equal(0);
    expect(stdout).to.match(/embedded PostgreSQL \(PGlite\) at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres/);
    expect(stdout).to.match(/kubectl --kubeconfig \S+ get schemas,secrets/);
    expect(stdout).to.match(/schema\/orders +ready schema=orders role=orders secret=orders-credentials/);
    expect(stdout).to.include('• 2/2 Schemas ready');
    expect(stdout).to.match(/CREATE TABLE orders\.items ok; CREATE TABLE public\.items refused \(permission denied for schema public\)/);
    expect(stdout).to.match(/Schema with name "select" refused by the API server: .*must not be a PostgreSQL reserved word/);
    expect(stdout).to.match(/schema\/billing +NameConflict/);
    expect(stdout).to.include('• the next poll noticed: schema orders is back');
    expect(stdout).to.include('• the next poll noticed: CREATE granted again');
    expect(stdout).to.match(/schema\/reports +DatabaseUnavailable/);
    expect(stdout).to.match(/\/readyz: 503 \[-\]database failed/);
    expect(stdout).to.match(/database back: Schema reports ready; \/readyz: 200 \[\+\]database ok/);
    expect(stdout).to.include('schemas orders: dropped, inventory: kept, billing: kept');
  });

  it('bad flags exit 2 naming the flag', async () => {
    const errors: string[] = [];
    const error = console.error;
    console.error = (line: string) => errors.push(line);
    try {
      expect(await main(['--nope'])).to.equal(2);
      expect(await main(['--database-url', 'mysql://x'])).to.equal(2);
      expect(await main(['--poll-ms', '0'])).to.equal(2);
    } finally {
      console.error = error;
    }
    expect(errors[0]).to.match(/unknown flag --nope/);
    expect(errors[1]).to.match(/--database-url must be a postgres:\/\/ URL, got 'mysql:\/\/x'/);
    expect(errors[2]).to.match(/--poll-ms must be > 0/);
  });
});
