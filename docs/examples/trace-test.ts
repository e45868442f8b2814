// Record what the Backup operator saw and wrote against a cluster, then replay it as a test
// without one (docs/testing.md): `npx mocha docs/examples/trace-test.ts`.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Operator } from 'rxkube';
import { parseTrace, recordTrace, replayTrace } from 'rxkube/testing';
import { startTestCluster } from 'rxkube/testing/cluster';
import { backupCrd, setup } from './backup-operator.js';

export async function record(file: string): Promise<void> {
  const cluster = await startTestCluster({ crds: [backupCrd] });
  const recorder = recordTrace(cluster.kubeConfig);
  const operator = new Operator({ kubeConfig: recorder.kubeConfig });
  setup(operator);
  await operator.start();
  // ... create and change Backups, wait until they are done ...
  await operator.stop();
  await cluster.close();
  writeFileSync(file, JSON.stringify(recorder.trace(), null, 2));
}

describe('the Backup operator', () => {
  it('writes what it wrote when the trace was recorded', async () => {
    const trace = parseTrace(readFileSync('test/backup.trace.json', 'utf8'));
    const result = await replayTrace(trace, setup);
    assert.deepEqual(result.mismatches, []);
  });
});
