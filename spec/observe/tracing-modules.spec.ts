import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SCRIPT = fileURLToPath(new URL('./tracing-process.ts', import.meta.url));

/** The OpenTelemetry modules a whole operator run resolves, tracing off or on. */
async function otelModules(tracing: 'off' | 'on'): Promise<{ ready: boolean; runs: boolean; resolved: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPT, tracing], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { ready: boolean; runs: boolean; resolved: string[] };
}

describe('tracing: OpenTelemetry is loaded only when configured', function () {
  this.timeout(90_000);

  it('an operator without tracing (metrics and health on) reconciles, and no OpenTelemetry module is loaded but by prom-client', async () => {
    const result = await otelModules('off');
    expect(result).to.include({ ready: true, runs: true });
    // prom-client 15 requires @opentelemetry/api for exemplars whenever it is loaded: its own dependency, not ours.
    expect(result.resolved.filter((line) => !line.includes('/node_modules/prom-client/'))).to.deep.equal([]);
  });

  it('with tracing: true, rxkube loads @opentelemetry/api itself (the check above sees a load)', async () => {
    const result = await otelModules('on');
    expect(result.ready).to.equal(true);
    expect(
      result.resolved.some((line) => line.startsWith('@opentelemetry/api from ') && line.includes('/lib/observe/tracing.ts')),
      result.resolved.join('\n'),
    ).to.equal(true);
  });
});
