import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Operator } from '../../../lib/index.js';
import { builtinResources, customResourceDefinition, type KubeClient } from '../../../lib/kube.js';
import { explore, formatFailure, replay, type Action, type Actor, type ExploreOptions } from '../../../lib/testing/explore/index.js';

const crd = customResourceDefinition({
  group: 'actors.rxkube.dev',
  kind: 'Group',
  plural: 'groups',
  spec: { type: 'object', properties: { members: { type: 'integer', minimum: 0 } } },
  status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
});
const groups = { apiVersion: 'actors.rxkube.dev/v1', kind: 'Group', plural: 'groups' };
const pods = builtinResources.pod;
type Group = KubernetesObject & { spec?: { members?: number }; status?: { members?: string[]; ready?: number } };

const isReady = (pod: V1Pod): boolean => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * Members are Pods named by generateName; the Group's status counts those a kubelet reports
 * Ready. The buggy variant trusts a list that may be stale and never removes a surplus member.
 */
const setupOf =
  (variant: 'buggy' | 'fixed') =>
  (operator: Operator): void =>
    void operator.register<Group>(
      {
        async reconcile(group, ctx) {
          const name = group.metadata?.name ?? '';
          const members = ctx.client.resource<V1Pod>(pods);
          const mine = (await members.list({ namespace: 'default', labelSelector: { group: name } })).items;
          const wanted = group.spec?.members ?? 0;
          if (mine.length < wanted) {
            await members.create({
              metadata: { generateName: `${name}-`, namespace: 'default', labels: { group: name } },
              spec: { containers: [{ name: 'main', image: 'nginx' }] },
            });
            return;
          }
          if (variant === 'fixed' && mine.length > wanted) {
            const surplus = [...mine]
              .sort((a, b) => Number(isReady(b)) - Number(isReady(a)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
              .slice(wanted);
            for (const pod of surplus) await members.delete({ name: pod.metadata?.name ?? '', namespace: 'default' });
            return;
          }
          const status = { members: mine.map((p) => p.metadata?.name ?? '').sort(), ready: mine.filter(isReady).length };
          if (JSON.stringify(group.status ?? {}) !== JSON.stringify(status))
            await ctx.client
              .resource<Group>(groups)
              .jsonPatchStatus({ name, namespace: 'default' }, [{ op: 'add', path: '/status', value: status }]);
        },
      },
      {
        resource: groups,
        secondaries: [{ resource: pods, toPrimaries: (pod) => [{ name: pod.metadata?.labels?.['group'] ?? '', namespace: 'default' }] }],
      },
    );

/** A kubelet: it may read Pods and write their status, nothing else. */
const kubelet: Actor = {
  user: 'system:node:node-1',
  rules: [
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
  ],
};
/** A user who may label Pods. */
const alice: Actor = { user: 'alice', rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'patch'] }] };
const ready = (status: 'True' | 'False') => ({ status: { conditions: [{ type: 'Ready', status }] } });

const workload: Action[] = [
  { op: 'apply', resource: groups, object: { metadata: { name: 'g' }, spec: { members: 2 } } },
  // The kubelet reports every member Ready, through the status subresource.
  { op: 'merge', resource: pods, select: { labels: { group: 'g' } }, subresource: 'status', patch: ready('True'), as: kubelet },
  // A user edits a child the operator named with generateName.
  { op: 'merge', resource: pods, select: { namePrefix: 'g-' }, patch: { metadata: { labels: { team: 'blue' } } }, as: alice },
  {
    op: 'run',
    name: 'the kubelet reports the first member NotReady',
    as: kubelet,
    async run(client: KubeClient) {
      const [first] = (await client.resource(pods).list({ namespace: 'default', labelSelector: { group: 'g' } })).items
        .map((p) => p.metadata?.name ?? '')
        .sort();
      await client.resource(pods).mergePatchStatus({ name: first ?? '', namespace: 'default' }, ready('False'));
    },
  },
];

const options: ExploreOptions = { crds: [crd], setup: setupOf('fixed'), observe: [groups, pods], workload };

describe('testing: explore workloads of every actor (subresources, identities, selected children, code steps)', function () {
  this.timeout(120_000);

  it('makes a status step as a kubelet, edits a generated child found by prefix as a user, and runs a code step', async () => {
    const verdict = await replay(options, { seed: 0, actions: workload, perturbations: [] });
    expect(verdict.failed, verdict.message).to.equal(false);
    const steps = verdict.log.filter((line) => line.startsWith('step '));
    expect(steps).to.deep.equal([
      'step 0: apply Group g → 200',
      'step 1: merge Pod/status [group=g] {"status":{"conditions":[{"type":"Ready","status":"True"}]}} as system:node:node-1 → 200',
      'step 2: merge Pod [g-*] {"metadata":{"labels":{"team":"blue"}}} as alice → 200',
      'step 3: run the kubelet reports the first member NotReady as system:node:node-1 → 200',
    ]);
  });

  it('answers a step its actor has no right to 403, as the real server does', async () => {
    const verdict = await replay(options, {
      seed: 0,
      actions: [
        workload[0],
        { op: 'merge', resource: pods, select: { namePrefix: 'g-' }, patch: { metadata: { labels: { team: 'red' } } }, as: kubelet },
      ],
      perturbations: [],
    });
    expect(verdict.log.filter((line) => line.startsWith('step 1'))).to.deep.equal([
      'step 1: merge Pod [g-*] {"metadata":{"labels":{"team":"red"}}} as system:node:node-1 → 403',
    ]);
  });

  it('finds the member made twice on a stale list in the buggy variant, within the default budget', async () => {
    const { failure } = await explore({ ...options, setup: setupOf('buggy') });
    expect(failure?.oracle).to.equal('end-state');
    expect(failure?.message).to.match(/\+ Pod default\/g-<generated>#3 \(not in the reference\)/);
  });

  it('shows no failure for the correct operator under perturbations of that workload, over 20 runs', async () => {
    const result = await explore({ ...options, budget: { runs: 20 } });
    expect(result.failure && formatFailure(result.failure), result.failure && formatFailure(result.failure)).to.equal(undefined);
  });
});
