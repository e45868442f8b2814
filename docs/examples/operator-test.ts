// An integration test of the DnsRecord operator against the embedded API server, with faults
// (docs/testing.md): `npx mocha docs/examples/operator-test.ts`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GenericRetry } from 'rxkube';
import { eventually } from 'rxkube/testing';
import { startTestCluster, type TestCluster } from 'rxkube/testing/cluster';
import { DNSRECORD, DnsProvider, dnsRecordCrd, dnsRecords, dnsRecordsConfig, type DnsRecord } from './dns-records.js';

describe('DnsRecord operator', () => {
  let cluster: TestCluster;
  let provider: DnsProvider;

  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [dnsRecordCrd] });
    provider = new DnsProvider();
    const operator = cluster.operator(); // silent logger; stopped by cluster.close()
    // Same configuration, faster retries: tests should take milliseconds, not seconds.
    operator.register(dnsRecords(provider), { ...dnsRecordsConfig, retry: GenericRetry.defaults().withInitialMs(50) });
    await operator.start();
  });

  afterEach(() => cluster.close());

  const records = () => cluster.client.resource<DnsRecord>(DNSRECORD);
  const web: DnsRecord = { metadata: { name: 'web', namespace: 'default' }, spec: { hostname: 'web.example.com', address: '10.0.0.1' } };

  it('registers the hostname, reports it in the status, and removes it on delete', async () => {
    await cluster.apply(DNSRECORD, web);
    const status = await eventually(
      'registered',
      async () => (await records().get({ name: 'web', namespace: 'default' })).status?.registered,
    );
    assert.equal(status, true);
    assert.equal(provider.records.get('web.example.com'), '10.0.0.1');

    await records().delete({ name: 'web', namespace: 'default' });
    await eventually('deleted', async () => (await records().find({ name: 'web', namespace: 'default' })) === undefined);
    assert.equal(provider.records.has('web.example.com'), false);
  });

  it('retries when the API server fails the status patch', async () => {
    const fault = cluster.server.faults.failRequests({ verb: 'patch', resource: 'dnsrecords/status', status: 500, count: 2 });
    await cluster.apply(DNSRECORD, web);
    await eventually('registered', async () => (await records().get({ name: 'web', namespace: 'default' })).status?.registered);
    assert.equal(fault.hits, 2);
  });

  it('loses no change when its watch is dropped and history is compacted', async () => {
    await cluster.apply(DNSRECORD, web);
    await eventually('registered', () => provider.records.has('web.example.com'));
    cluster.server.faults.compact();
    cluster.server.faults.dropWatches({ resource: 'dnsrecords' });
    await cluster.apply(DNSRECORD, { ...web, spec: { ...web.spec, address: '10.0.0.2' } });
    await eventually('re-registered', () => provider.records.get('web.example.com') === '10.0.0.2');
  });

  it('shows the record to kubectl', async () => {
    await cluster.apply(DNSRECORD, web);
    await eventually('registered', async () => (await records().get({ name: 'web', namespace: 'default' })).status?.registered);
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'dns-test-')), 'kubeconfig');
    await cluster.server.writeKubeconfig(kubeconfig);
    // Asynchronously: a synchronous child process would block the server in this process.
    const kubectl = promisify(execFile);
    const { stdout } = await kubectl('kubectl', [
      '--kubeconfig',
      kubeconfig,
      'get',
      'dnsrecord',
      'web',
      '-o',
      'jsonpath={.status.registered}',
    ]);
    assert.equal(stdout, 'true');
  });
});
