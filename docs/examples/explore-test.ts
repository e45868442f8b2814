// Exploring an operator under the faults of a real cluster (docs/testing.md):
// `npx mocha docs/examples/explore-test.ts`.
import assert from 'node:assert/strict';
import { builtinResources } from 'rxkube/kube';
import { explore, formatFailure, rerun, type Action, type ExploreOptions } from 'rxkube/testing/cluster';
import { backupCrd, backups, setup } from './backup-operator.js';

const options: ExploreOptions = {
  crds: [backupCrd],
  setup,
  observe: [backups, builtinResources.configMap],
  workload: [
    { op: 'apply', resource: backups, object: { metadata: { name: 'nightly' }, spec: { target: 'db' } } },
    { op: 'merge', resource: backups, name: 'nightly', patch: { spec: { target: 'db2' } } },
  ],
  budget: { runs: 40 },
  progress: true,
};

// What other actors do: a controller reporting through the status subresource as its own
// ServiceAccount, a user (with only the rights RBAC gives her) editing a child found by its name
// prefix, and a code step for what no action says.
const othersActing: readonly Action[] = [
  { op: 'apply', resource: backups, object: { metadata: { name: 'nightly' }, spec: { target: 'db' } } },
  {
    op: 'merge',
    resource: backups,
    name: 'nightly',
    subresource: 'status',
    patch: { status: { lastResult: 'ok' } },
    as: {
      user: 'system:serviceaccount:default:backup-runner',
      rules: [{ apiGroups: ['example.com'], resources: ['backups/status'], verbs: ['patch'] }],
    },
  },
  {
    op: 'merge',
    resource: builtinResources.configMap,
    select: { namePrefix: 'nightly-' },
    patch: { metadata: { labels: { team: 'storage' } } },
    as: { user: 'alice', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'patch'] }] },
  },
  {
    op: 'run',
    name: 'a backup tool deletes the run object',
    run: (client) => client.resource(builtinResources.configMap).delete({ name: 'nightly-run', namespace: 'default' }),
  },
  { op: 'merge', resource: backups, name: 'nightly', patch: { spec: { target: 'db2' } } },
];

describe('the Backup operator', function () {
  this.timeout(120_000);

  it('survives crashes, stale views, watch gaps and failing requests', async () => {
    const { failure } = await explore(options);
    assert.equal(failure, undefined, failure && formatFailure(failure));
  });

  it('survives what other actors do between its runs', async () => {
    const { failure } = await explore({ ...options, workload: othersActing });
    assert.equal(failure, undefined, failure && formatFailure(failure));
  });

  // A failure found once becomes a regression test: paste its seed (or its shrunk trace).
  it('replays seed 7 without a failure', async () => {
    const verdict = await rerun(options, 7);
    assert.equal(verdict.failed, false, verdict.message);
  });
});
