// Exploring an operator that manages something outside the cluster (docs/testing.md):
// `npx mocha docs/examples/explore-external.ts`.
import assert from 'node:assert/strict';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Operator } from 'rxkube';
import { customResourceDefinition } from 'rxkube/kube';
import { explore, formatFailure, type Action, type ExploreOptions } from 'rxkube/testing/cluster';

const crds = [
  customResourceDefinition({
    group: 'example.com',
    kind: 'Record',
    plural: 'records',
    spec: { type: 'object', properties: { ip: { type: 'string' } } },
  }),
];
const records = { apiVersion: 'example.com/v1', kind: 'Record', plural: 'records' };
type DnsRecord = KubernetesObject & { spec?: { ip?: string }; status?: { registered?: boolean; error?: string } };

// The DNS provider as a fake: each name belongs to the Record (by uid) that registered it.
class FakeDns {
  private readonly names = new Map<string, string>();
  register(name: string, owner: string): void {
    if ((this.names.get(name) ?? owner) !== owner) throw new Error(`${name} belongs to someone else`);
    this.names.set(name, owner);
  }
  reset(): void {
    this.names.clear();
  }
}

function registerDnsOperator(operator: Operator, provider: FakeDns): void {
  operator.register<DnsRecord>(
    {
      async reconcile(record, ctx) {
        let status: NonNullable<DnsRecord['status']> = { registered: true };
        try {
          provider.register(record.metadata?.name ?? '', record.metadata?.uid ?? '');
        } catch (err) {
          status = { registered: false, error: err instanceof Error ? err.message : String(err) };
        }
        if (JSON.stringify(record.status ?? {}) !== JSON.stringify(status)) {
          await ctx.client.resource(records).mergePatchStatus({ name: record.metadata?.name ?? '', namespace: 'default' }, { status });
        }
      },
    },
    { resource: records },
  );
}

const observe = [records];
const workload: Action[] = [{ op: 'apply', resource: records, object: { metadata: { name: 'www' }, spec: { ip: '10.0.0.1' } } }];

const dns = new FakeDns();
const options: ExploreOptions = {
  crds,
  setup: (operator) => registerDnsOperator(operator, dns),
  observe,
  workload,
  resetExternal: () => dns.reset(),
};

describe('the DNS operator', function () {
  this.timeout(120_000);

  it('survives crashes, stale views, watch gaps and failing requests, each run on a clean provider', async () => {
    const { failure } = await explore({ ...options, budget: { runs: 20 } });
    assert.equal(failure, undefined, failure && formatFailure(failure));
  });
});
