import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Operator } from '../../../lib/index.js';
import { customResourceDefinition } from '../../../lib/kube.js';
import { explore, formatFailure, replay, type ExploreOptions } from '../../../lib/testing/explore/index.js';

const crd = customResourceDefinition({
  group: 'external.rxkube.dev',
  kind: 'Record',
  plural: 'records',
  spec: { type: 'object', properties: { ip: { type: 'string' } } },
  status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
});
const records = { apiVersion: 'external.rxkube.dev/v1', kind: 'Record', plural: 'records' };
type DnsRecord = KubernetesObject & { spec?: { ip?: string }; status?: { registered?: boolean; error?: string } };

/** A DNS provider's API as a test fake: records by name, each owned by the Record (uid) that made it. */
class FakeDns {
  readonly records = new Map<string, { owner: string; ip: string }>();
  register(name: string, owner: string, ip: string): void {
    const found = this.records.get(name);
    if (found && found.owner !== owner) throw new Error(`${name} exists and belongs to someone else`);
    this.records.set(name, { owner, ip });
  }
  reset(): void {
    this.records.clear();
  }
}

const dns = new FakeDns();

/** A correct operator: it registers each Record with the provider and refuses to take over a name someone else owns. */
const setup = (operator: Operator): void =>
  void operator.register<DnsRecord>(
    {
      async reconcile(record, ctx) {
        let status: NonNullable<DnsRecord['status']> = { registered: true };
        try {
          dns.register(record.metadata?.name ?? '', record.metadata?.uid ?? '', record.spec?.ip ?? '');
        } catch (err) {
          status = { registered: false, error: (err as Error).message };
        }
        if (JSON.stringify(record.status ?? {}) !== JSON.stringify(status))
          await ctx.client
            .resource<DnsRecord>(records)
            .mergePatchStatus({ name: record.metadata?.name ?? '', namespace: 'default' }, { status });
      },
    },
    { resource: records },
  );

const options: ExploreOptions = {
  crds: [crd],
  setup,
  observe: [records],
  workload: [
    { op: 'apply', resource: records, object: { metadata: { name: 'www' }, spec: { ip: '10.0.0.1' } } },
    { op: 'apply', resource: records, object: { metadata: { name: 'api' }, spec: { ip: '10.0.0.2' } } },
  ],
  budget: { runs: 10 },
};

describe('testing: explore resets the state outside the cluster before each run', function () {
  this.timeout(120_000);
  beforeEach(() => dns.reset());

  it('without resetExternal one run leaks into the next: the names the reference run registered belong to someone else', async () => {
    const { failure } = await explore(options);
    expect(failure?.oracle).to.equal('end-state');
    expect(failure?.message).to.match(/status\.registered: true → false/);
  });

  it('with resetExternal the correct operator shows no failure, and a seed replays exactly', async () => {
    const reset: ExploreOptions = { ...options, resetExternal: () => dns.reset() };
    const result = await explore(reset);
    expect(result.failure && formatFailure(result.failure), result.failure && formatFailure(result.failure)).to.equal(undefined);
    const first = await replay(reset, 3);
    const again = await replay(reset, 3);
    expect(again.log).to.deep.equal(first.log);
    expect(again.failed).to.equal(first.failed);
  });

  it('says which hook failed when resetExternal throws', async () => {
    const verdict = replay({ ...options, resetExternal: () => Promise.reject(new Error('the fake is gone')) }, 1);
    await verdict.then(
      () => expect.fail('ran'),
      (err: unknown) =>
        expect(String(err)).to.match(/resetExternal failed, so the run cannot start from a clean external state: the fake is gone/),
    );
  });
});
