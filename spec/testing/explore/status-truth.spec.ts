import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Operator } from '../../../lib/index.js';
import { customResourceDefinition } from '../../../lib/kube.js';
import { explore, formatFailure, schemaWorkload, type ExploreOptions } from '../../../lib/testing/explore/index.js';

const crd = customResourceDefinition({
  group: 'truth.rxkube.dev',
  kind: 'Pool',
  plural: 'pools',
  spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0, maximum: 3 } } },
  status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
});
const pools = { apiVersion: 'truth.rxkube.dev/v1', kind: 'Pool', plural: 'pools' };
type Pool = KubernetesObject & {
  spec?: { size?: number };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string; observedGeneration?: number }[] };
};

const readyFor = (pool: Pool): Pool => ({
  ...pool,
  status: {
    observedGeneration: pool.metadata?.generation,
    conditions: [{ type: 'Ready', status: 'True', observedGeneration: pool.metadata?.generation }],
  },
});

/**
 * buggy: for size 0 (which the schema allows) it waits for something that never comes, rescheduling
 * every 2 s without a word, while the status still says Ready for the previous generation.
 * fixed: it polls every 2 s as well, and its status is always for the current generation.
 */
const setupOf =
  (variant: 'buggy' | 'fixed') =>
  (operator: Operator): void =>
    void operator.register<Pool>(
      {
        reconcile(pool) {
          const current = pool.status?.observedGeneration === pool.metadata?.generation;
          if (variant === 'buggy' && pool.spec?.size === 0) return UpdateControl.noUpdate<Pool>().rescheduleAfter(2000);
          return (current ? UpdateControl.noUpdate<Pool>() : UpdateControl.patchStatus(readyFor(pool))).rescheduleAfter(2000);
        },
      },
      { resource: pools },
    );

const options = (variant: 'buggy' | 'fixed'): ExploreOptions => ({
  crds: [crd],
  setup: setupOf(variant),
  observe: [pools],
  workload: schemaWorkload({ crd, base: { apiVersion: pools.apiVersion, kind: 'Pool', metadata: { name: 'p' }, spec: { size: 2 } } }),
});

describe('testing: explore checks what the status claims after settling', function () {
  this.timeout(180_000);

  it('finds a quiet wedge: Ready for the previous generation while it reschedules itself beyond the horizon without a write', async () => {
    const { failure } = await explore(options('buggy'));
    expect(failure?.oracle, failure && formatFailure(failure)).to.equal('status');
    expect(failure?.message).to.match(
      /^Pool default\/p after step \d+: status.observedGeneration is 1, the object's generation 2, and its operator ran it 3 times since without writing it$/,
    );
    expect(failure?.trace.actions.some((a) => a.op === 'apply' && a.input?.field === 'spec.size' && a.input.value === 0)).to.equal(true);
  });

  it('shows no failure for an operator that polls with a current status, over 20 runs', async () => {
    const result = await explore({ ...options('fixed'), budget: { runs: 20 } });
    expect(result.failure && formatFailure(result.failure)).to.equal(undefined);
  });
});
