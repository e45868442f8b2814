import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Operator } from '../../../lib/index.js';
import { builtinResources, customResourceDefinition } from '../../../lib/kube.js';
import { explore, replay, type ClusterState, type ExploreOptions } from '../../../lib/testing/explore/index.js';
import { subjects } from './subjects.js';

const crd = customResourceDefinition({
  group: 'oracles.rxkube.dev',
  kind: 'Thing',
  plural: 'things',
  spec: { type: 'object', properties: { n: { type: 'integer' } } },
});
const things = { apiVersion: 'oracles.rxkube.dev/v1', kind: 'Thing', plural: 'things' };
type Thing = KubernetesObject & { spec?: { n?: number } };
const thing = { metadata: { name: 't' }, spec: { n: 0 } } as Thing;

const options = (setup: (operator: Operator) => void, extra: Partial<ExploreOptions> = {}): ExploreOptions => ({
  crds: [crd],
  setup,
  observe: [things, builtinResources.configMap],
  workload: [{ op: 'apply', resource: things, object: thing }],
  budget: { runs: 3 },
  ...extra,
});

describe('testing: the explorer oracles beyond the end state', function () {
  this.timeout(60_000);

  it('checks invariants at every write the operator commits, not only at the end', async () => {
    const scaleDown = subjects.find((s) => s.name === 'scale-down')!.options('fixed');
    const { failure } = await explore({
      ...scaleDown,
      invariants: [
        {
          name: 'at most two members',
          check: (state) =>
            state.list(builtinResources.configMap).length <= 2 || `${state.list(builtinResources.configMap).length} members`,
        },
      ],
    });
    expect(failure?.oracle).to.equal('invariant');
    // Broken by the third create, before the scale-down to one member would end it.
    expect(failure?.message).to.match(/^invariant 'at most two members' broken after write #3 POST .*configmaps: 3 members$/);
    expect(failure?.trace.perturbations).to.deep.equal([]);
  });

  it("checks an invariant with when: 'settled' only once a step has settled: a correct operator's own intermediate writes do not break it", async () => {
    const scaleDown = (variant: 'buggy' | 'fixed') => subjects.find((s) => s.name === 'scale-down')!.options(variant);
    const clusters = { apiVersion: 'explore.rxkube.dev/v1', kind: 'Cluster', plural: 'clusters' };
    const everyMemberExists = (when: 'every-write' | 'settled') => ({
      name: 'as many members as replicas',
      when,
      check: (state: ClusterState) => {
        const replicas = (state.get(clusters, 'c', 'default') as { spec?: { replicas?: number } } | undefined)?.spec?.replicas ?? 0;
        const members = state.list(builtinResources.configMap, 'default').filter((m) => m.metadata?.labels?.['cluster'] === 'c').length;
        return members === replicas || `${members} members for ${replicas} replicas`;
      },
    });
    const atEveryWrite = await explore({ ...scaleDown('fixed'), invariants: [everyMemberExists('every-write')], budget: { runs: 5 } });
    expect(atEveryWrite.failure?.message).to.match(
      /^invariant 'as many members as replicas' broken after write #1 POST .*configmaps: 1 members for 3 replicas$/,
    );
    const settled = await explore({ ...scaleDown('fixed'), invariants: [everyMemberExists('settled')], budget: { runs: 20 } });
    expect(settled.failure && settled.failure.message).to.equal(undefined);
    const buggy = await explore({ ...scaleDown('buggy'), invariants: [everyMemberExists('settled')], perturbations: ['crash'] });
    expect(buggy.failure?.oracle, buggy.failure?.message).to.equal('invariant');
    expect(buggy.failure?.message, buggy.failure?.message).to.match(
      /^invariant 'as many members as replicas' broken once step 1 settled: [23] members for 1 replicas$/,
    );
  });

  it('fails an operator that never settles: its own writes trigger it forever', async () => {
    const { failure } = await explore(
      options(
        (operator) =>
          void operator.register<Thing>(
            {
              async reconcile(t, ctx) {
                await ctx.client.resource(things).mergePatch({ name: 't', namespace: 'default' }, { spec: { n: (t.spec?.n ?? 0) + 1 } });
              },
            },
            { resource: things },
          ),
        { maxWritesPerStep: 20 },
      ),
    );
    expect(failure?.oracle).to.equal('settle');
    expect(failure?.message).to.match(/does not settle after step 0: more than 20 writes/);
  });

  it('settles a step on facts, not on a quiet period: a run that waits on something slow without a request is waited for', async () => {
    const verdict = await replay(
      options(
        (operator) =>
          void operator.register<Thing>(
            {
              async reconcile(t, ctx) {
                // An external call that is not a request to the cluster: the operator makes no request for a while.
                await new Promise((resolve) => setTimeout(resolve, 300));
                const data = { n: String(t.spec?.n ?? 0) };
                await ctx.client
                  .resource<V1ConfigMap>(builtinResources.configMap)
                  .apply(
                    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'copy', namespace: 'default' }, data },
                    { fieldManager: 'thing', force: true },
                  );
              },
            },
            { resource: things },
          ),
      ),
      {
        seed: 0,
        actions: [
          { op: 'apply', resource: things, object: thing },
          { op: 'merge', resource: things, name: 't', patch: { spec: { n: 1 } } },
        ],
        perturbations: [],
      },
    );
    expect(verdict.failed, verdict.message).to.equal(false);
    // Each step's write lands before the next step starts.
    expect(verdict.log.map((line) => line.replace(/ \/api.*| [{].*/, ''))).to.deep.equal([
      'step 0: apply Thing t → 200',
      'write #1 PATCH',
      'step 1: merge Thing t',
      'write #2 PATCH',
    ]);
  });

  it('fails an operator whose cleanup never lets go: an object left deleted but held by its finalizer', async () => {
    const { failure } = await explore({
      ...options(
        (operator) =>
          void operator.register<Thing>(
            {
              reconcile: () => undefined,
              cleanup: () => {
                throw new Error('the external system is gone');
              },
            },
            { resource: things },
          ),
      ),
      workload: [
        { op: 'apply', resource: things, object: thing },
        { op: 'delete', resource: things, name: 't' },
      ],
    });
    expect(failure?.oracle).to.equal('finalizer');
    expect(failure?.message).to.match(/Thing default\/t \[things\.oracles\.rxkube\.dev\/finalizer\]/);
  });
});
