// Runs the DnsRecord operator of dns-records.ts against the embedded API server:
// `npx tsx docs/examples/reconciler.ts`.
import { startTestCluster } from 'rxkube/testing/cluster';
import { DNSRECORD, DnsProvider, dnsRecordCrd, dnsRecords, dnsRecordsConfig, type DnsRecord } from './dns-records.js';

const cluster = await startTestCluster({ crds: [dnsRecordCrd] });
const provider = new DnsProvider();
const operator = cluster.operator();
const controller = operator.register(dnsRecords(provider), dnsRecordsConfig);
controller.outcome$.subscribe((o) => console.log(o.id.name, o.result, o.cause.type, o.retry?.at));
await operator.start();

const records = cluster.client.resource<DnsRecord>(DNSRECORD);
const record = (name: string, address: string): DnsRecord => ({
  metadata: { name, namespace: 'default' },
  spec: { hostname: `${name}.example.com`, address },
});
const until = async <T>(what: string, read: () => Promise<T | undefined>): Promise<T> => {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};
const statusOf = (name: string, done: (s: NonNullable<DnsRecord['status']>) => boolean) =>
  until(`${name} status`, async () => {
    const current = await records.get({ name, namespace: 'default' });
    return current.status && done(current.status) ? current : undefined;
  });

await cluster.apply(DNSRECORD, record('web', '10.0.0.1'));
const web = await statusOf('web', (s) => s.registered === true);
console.log(`web: finalizers ${JSON.stringify(web.metadata?.finalizers)}, status ${JSON.stringify(web.status)}`);

await cluster.apply(DNSRECORD, record('bad', 'not-an-ip'));
console.log(`bad: status ${JSON.stringify((await statusOf('bad', (s) => s.error !== undefined)).status)}`);
await cluster.apply(DNSRECORD, record('bad', '10.0.0.2'));
console.log(`bad, fixed: status ${JSON.stringify((await statusOf('bad', (s) => s.registered === true)).status)}`);

await records.delete({ name: 'web', namespace: 'default' });
await until('web gone', async () => ((await records.find({ name: 'web', namespace: 'default' })) ? undefined : true));
console.log(`after deleting web, the provider has: ${[...provider.records.keys()].join(', ')}`);

await cluster.close();
