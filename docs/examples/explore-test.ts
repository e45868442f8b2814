// Exploring an operator under the faults of a real cluster (docs/testing.md):
// `npx mocha docs/examples/explore-test.ts`.
import assert from 'node:assert/strict';
import { builtinResources } from 'rxkube/kube';
import { explore, formatFailure, replay, type ExploreOptions } from 'rxkube/testing/cluster';
import { backupCrd, backups, setup, type Backup } from './backup-operator.js';

const options: ExploreOptions = {
  crds: [backupCrd],
  setup,
  observe: [backups, builtinResources.configMap],
  workload: [
    { op: 'apply', resource: backups, object: { metadata: { name: 'nightly' }, spec: { target: 'db' } } as Backup },
    { op: 'merge', resource: backups, name: 'nightly', patch: { spec: { target: 'db2' } } },
  ],
  budget: { runs: 40 },
  progress: true,
};

describe('the Backup operator', function () {
  this.timeout(120_000);

  it('survives crashes, stale views, watch gaps and failing requests', async () => {
    const { failure } = await explore(options);
    assert.equal(failure, undefined, failure && formatFailure(failure));
  });

  // A failure found once becomes a regression test: paste its seed (or its shrunk trace).
  it('replays seed 7 without a failure', async () => {
    const verdict = await replay(options, 7);
    assert.equal(verdict.failed, false, verdict.message);
  });
});
