/**
 * Drift: a hand edit of a child the operator applies is corrected by the next run. The operator is
 * getting-started's (a Note copied into a ConfigMap through `ctx.secondaryClient(...).apply`), the
 * edits are kubectl's own (`kubectl patch`, `kubectl edit`), as other field managers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { describeError, type ReconcileOutcome } from '../../lib/core/index.js';
import { builtinResources, customResourceDefinition, descriptorOf } from '../../lib/kube/index.js';
import { GenericRetry } from '../../lib/processing/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

const run = promisify(execFile);

interface Note extends KubernetesObject {
  spec: { text: string };
  status?: { configMap?: string };
}
type ConfigMap = V1ConfigMap & KubernetesObject;

const noteCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Note',
  plural: 'notes',
  spec: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  status: { type: 'object', properties: { configMap: { type: 'string' } } },
});
const NOTE = descriptorOf(noteCrd);

/** getting-started.md's reconciler: `apply(desired)`, no options (or `applyOptions`). */
const notesWith = (applyOptions?: { force: boolean }): Reconciler<Note> => ({
  async reconcile(note, ctx) {
    const name = `${note.metadata!.name}-note`;
    const desired: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: note.metadata!.namespace!,
        ownerReferences: [
          { apiVersion: NOTE.apiVersion, kind: NOTE.kind, name: note.metadata!.name!, uid: note.metadata!.uid!, controller: true },
        ],
      },
      data: { text: note.spec.text },
    };
    await (applyOptions === undefined
      ? ctx.secondaryClient<ConfigMap>('configmaps').apply(desired)
      : ctx.secondaryClient<ConfigMap>('configmaps').apply(desired, applyOptions));
    return UpdateControl.patchStatus({ ...note, status: { configMap: name } });
  },
});

describe('drift: a hand edit of an applied child is corrected by the next run', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let dir: string;
  let outcomes: ReconcileOutcome[];

  async function start(reconciler: Reconciler<Note>) {
    cluster = await startTestCluster({ crds: [noteCrd] });
    dir = mkdtempSync(join(tmpdir(), 'rxkube-drift-'));
    await cluster.server.writeKubeconfig(join(dir, 'kubeconfig'));
    const operator = cluster.operator();
    // Quick retries: without force, a conflict would be retried here many times within the wait.
    const controller = operator.register(reconciler, {
      resource: NOTE,
      secondaries: [{ resource: builtinResources.configMap }],
      retry: GenericRetry.defaults().withInitialMs(50).withMaxMs(200).withMaxAttempts(20),
    });
    outcomes = [];
    controller.outcome$.subscribe((o) => outcomes.push(o));
    await operator.start();
    await cluster.apply<Note>(NOTE, { metadata: { name: 'hello', namespace: 'default' }, spec: { text: 'from the Note' } });
    await eventually('the ConfigMap written', () => configMapText().then((text) => text === 'from the Note'));
    await eventually('the Note reconciled', () => outcomes.some((o) => o.result === 'success'));
  }
  afterEach(async () => {
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[], env: Record<string, string> = {}) =>
    run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args], { env: { ...process.env, ...env } });
  const configMapText = async () =>
    (await cluster.client.resource<ConfigMap>(builtinResources.configMap).get({ name: 'hello-note', namespace: 'default' })).data?.['text'];
  const managersOf = async () =>
    (
      (await cluster.client.resource<ConfigMap>(builtinResources.configMap).get({ name: 'hello-note', namespace: 'default' })).metadata
        ?.managedFields ?? []
    ).map((f) => f.manager);

  /** Edits with `edit`, then expects the controller's next run to put the text back, with no failed run in between. */
  async function expectCorrected(edit: () => Promise<unknown>, editor: string) {
    const before = outcomes.length;
    await edit();
    await eventually(
      () => `the edit by ${editor} corrected (text ${JSON.stringify(outcomesSince(before))})`,
      // The run's outcome comes after its write: on a loaded machine the text is back before it is.
      () => configMapText().then((text) => text === 'from the Note' && outcomes.length > before),
      10_000,
    );
    const since = outcomes.slice(before);
    expect(
      since.filter((o) => o.result === 'failure').map((o) => String(o.error)),
      'no run failed',
    ).to.deep.equal([]);
    expect(since[0]?.result, 'the first run after the edit corrects it').to.equal('success');
    expect(await managersOf()).to.include('notes.example.com');
  }
  const outcomesSince = (n: number) => [
    ...new Set(outcomes.slice(n).map((o) => `${o.result}${o.error === undefined ? '' : `: ${describeError(o.error)}`}`)),
  ];

  it("kubectl patch (field manager kubectl-patch) of the applied field: the next run takes it back (force, the controller's field manager)", async () => {
    await start(notesWith());
    await expectCorrected(
      () => kubectl(['patch', 'configmap', 'hello-note', '--type', 'merge', '-p', '{"data":{"text":"by hand"}}']),
      'kubectl patch',
    );
  });

  it('kubectl edit (field manager kubectl-edit) of the applied field: the next run takes it back', async () => {
    await start(notesWith());
    // The editor kubectl starts: sed, changing the text in the file kubectl hands it.
    await expectCorrected(
      () => kubectl(['edit', 'configmap', 'hello-note'], { KUBE_EDITOR: 'sed -i -e "s/text: from the Note/text: by hand/"' }),
      'kubectl edit',
    );
  });

  it('force: false asks for the conflict: the run fails with the 409 naming kubectl-patch, and the edit stays', async () => {
    await start(notesWith({ force: false }));
    const before = outcomes.length;
    await kubectl(['patch', 'configmap', 'hello-note', '--type', 'merge', '-p', '{"data":{"text":"by hand"}}']);
    const failed = await eventually('a failed run', () => outcomes.slice(before).find((o) => o.result === 'failure'));
    expect(String(failed.error)).to.include('409 Conflict').and.include('conflict with "kubectl-patch"');
    expect(await configMapText()).to.equal('by hand');
  });
});
