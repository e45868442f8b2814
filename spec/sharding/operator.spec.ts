import type { V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { ConfigurationError, UpdateControl, type Operator, type RegisteredController, type ShardingOptions } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;

describe('sharding: the option on an Operator and a controller', function () {
  this.timeout(30_000);
  let cluster: TestCluster;
  beforeEach(async () => {
    cluster = await startTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('SH5: an invalid sharding option fails register() naming it; sharding is off unless asked', () => {
    const operator = cluster.operator();
    const reconciler = { reconcile: () => UpdateControl.noUpdate<V1ConfigMap>() };
    expect(() => operator.register(reconciler, { resource: CONFIGMAPS, sharding: { replicas: 3 as unknown as 'auto' } })).to.throw(
      ConfigurationError,
      /sharding\.replicas/,
    );
    expect(() => operator.register(reconciler, { resource: CONFIGMAPS, name: 'b', sharding: { renewDeadlineMs: 20_000 } })).to.throw(
      ConfigurationError,
      /sharding\.renewDeadlineMs/,
    );
    expect(operator.register(reconciler, { resource: CONFIGMAPS, name: 'c' }).shardStatus$).to.equal(undefined);
  });

  it('SH5: a sharding option of the wrong type, or a namespace that is no namespace name, fails register() naming it (not sharded with the defaults)', () => {
    const reconciler = { reconcile: () => UpdateControl.noUpdate<V1ConfigMap>() };
    const register = (operatorSharding: unknown, own?: unknown) =>
      cluster
        .operator({ sharding: operatorSharding as ShardingOptions })
        .register(reconciler, { resource: CONFIGMAPS, ...(own === undefined ? {} : { sharding: own as ShardingOptions }) });
    for (const wrong of ['yes', true, null, 3, []]) {
      expect(() => register(wrong), `Operator sharding ${JSON.stringify(wrong)}`).to.throw(
        ConfigurationError,
        /^sharding: the Operator's option must be an object/,
      );
      expect(() => register(undefined, wrong), `controller sharding ${JSON.stringify(wrong)}`).to.throw(
        ConfigurationError,
        /^sharding: the controller's option must be an object of ShardingOptions or false/,
      );
    }
    expect(() => register({ namespace: 'Bad_NS' })).to.throw(
      ConfigurationError,
      /^sharding\.namespace: "Bad_NS" is not a valid namespace name/,
    );
    expect(register({}, false).shardStatus$).to.equal(undefined, 'false opts the controller out');
  });

  it('SH2: two operators with `sharding` split the primaries, each run on exactly one, with members and owned resources in their metrics', async () => {
    for (let i = 0; i < 40; i++)
      await cluster.client
        .resource<V1ConfigMap>({ ...CONFIGMAPS, namespaced: true })
        .create({ metadata: { name: `s${i}`, namespace: 'default', labels: { sharded: 'yes' } } });
    const ranOn = new Map<string, string[]>();
    const start = (identity: string): { operator: Operator; registered: RegisteredController; registry: Registry } => {
      const registry = new Registry();
      const operator = cluster.operator({ registry, sharding: { identity, ...TIMING } });
      const registered = operator.register<V1ConfigMap>(
        {
          reconcile(configMap) {
            const name = configMap.metadata!.name!;
            ranOn.set(name, [...(ranOn.get(name) ?? []), identity]);
            return UpdateControl.noUpdate();
          },
        },
        { resource: CONFIGMAPS, labelSelector: { matchLabels: { sharded: 'yes' } } },
      );
      return { operator, registered, registry };
    };
    const a = start('a');
    const b = start('b');
    await Promise.all([a.operator.start(), b.operator.start()]);
    await Promise.all(
      [a, b].map(({ registered }) =>
        firstValueFrom(
          registered.shardStatus$!.pipe(
            filter((s) => s.settled && s.members.length === 2),
            timeout(10_000),
          ),
        ),
      ),
    );
    // Gained resources are triggered at the handover: wait until every one ran on its owner.
    await eventually('every ConfigMap reconciled', () => ranOn.size === 40, 10_000);
    const latest = [...ranOn.values()].map((members) => members.at(-1));
    const onA = latest.filter((m) => m === 'a').length;
    expect(onA).to.be.within(5, 35);
    const owned = async (registry: Registry) => (await registry.getSingleMetric('rxkube_shard_owned_resources')!.get()).values[0]?.value;
    const members = async (registry: Registry) => (await registry.getSingleMetric('rxkube_shard_members')!.get()).values[0]?.value;
    await eventually('the owned gauges to add up', async () => (await owned(a.registry)) + (await owned(b.registry)) === 40, 5_000);
    expect(await members(a.registry)).to.equal(2);
    // Primaries created after the view settled count too: ownership changes with the cache, not only with the view.
    for (let i = 40; i < 50; i++)
      await cluster.client
        .resource<V1ConfigMap>({ ...CONFIGMAPS, namespaced: true })
        .create({ metadata: { name: `s${i}`, namespace: 'default', labels: { sharded: 'yes' } } });
    await eventually('the new ConfigMaps reconciled', () => ranOn.size === 50, 10_000);
    expect((await owned(a.registry)) + (await owned(b.registry))).to.equal(50);
  });
});
