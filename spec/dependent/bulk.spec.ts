import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { bulkDependent } from '../../lib/dependent/index.js';
import { BULK_DEPENDENT_LABEL, BULK_KEY_LABEL } from '../../lib/dependent/bulk.js';
import { resourceDeleted } from '../../lib/workflow/index.js';
import {
  CONFIGMAPS,
  createWidget,
  deleteWidget,
  eventually,
  getWidget,
  patchWidget,
  consistently,
  startEnv,
  widget,
  type Env,
  type Widget,
} from '../controller/fixtures.js';
import { countWrites, startWidgets, widgetWorkflow, type ConfigMap } from './helpers.js';

/** One ConfigMap per replica index: `<widget>-shard-<i>`. */
function shards(options: { garbageCollected?: boolean } = {}) {
  return bulkDependent<ConfigMap, Widget>({
    name: 'shards',
    resource: CONFIGMAPS,
    ...options,
    desiredResources: (w) => {
      const count = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 0;
      const out = new Map<string, ConfigMap>();
      for (let i = 0; i < count; i++) {
        out.set(String(i), {
          metadata: { name: `${w.metadata!.name!}-shard-${i}` },
          data: { index: String(i), value: w.spec?.value ?? '' },
        });
      }
      return out;
    },
  });
}

async function shardNames(env: Env): Promise<string[]> {
  const { items } = await env.configMaps.listAll({ namespace: 'default', labelSelector: { [BULK_DEPENDENT_LABEL]: 'shards' } });
  return items.map((cm) => cm.metadata!.name!).sort();
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `w1-shard-${i}`).sort();

describe('dependent: bulkDependent against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('DR3: N ConfigMaps follow spec.replicas, scaling up and down, with key labels', async () => {
    const recorded = await startWidgets(env, widgetWorkflow().add(shards()));
    await createWidget(env, widget('w1', { value: 'a', replicas: 3 }));
    await eventually('3 shards', async () => JSON.stringify(await shardNames(env)) === JSON.stringify(names(3)));
    const one = await env.configMaps.get({ name: 'w1-shard-1', namespace: 'default' });
    expect(one.metadata?.labels).to.deep.equal({ [BULK_DEPENDENT_LABEL]: 'shards', [BULK_KEY_LABEL]: '1' });
    expect(one.metadata?.ownerReferences?.[0]?.name).to.equal('w1');

    await patchWidget(env, 'w1', { spec: { replicas: 5 } });
    await eventually('5 shards', async () => JSON.stringify(await shardNames(env)) === JSON.stringify(names(5)));
    await patchWidget(env, 'w1', { spec: { replicas: 1 } });
    await eventually('1 shard', async () => JSON.stringify(await shardNames(env)) === JSON.stringify(names(1)));

    const last = await eventually('a result with one shard', () =>
      recorded.results.find((r) => (r.dependent('shards').reconcileResult?.resource as ConfigMap[]).length === 1),
    );
    expect(last.dependent('shards').reconcileResult?.operation).to.equal('updated');
  });

  it('DR2: a bulk dependent writes only what changed: one object per changed key, nothing when all match', async () => {
    const writes = countWrites(env);
    const recorded = await startWidgets(env, widgetWorkflow().add(shards()), { rescheduleMs: 10 });
    await createWidget(env, widget('w1', { value: 'a', replicas: 3 }));
    await eventually('3 shards', async () => (await shardNames(env)).length === 3);
    const runs = recorded.results.length;
    await eventually('5 more runs', () => recorded.results.length >= runs + 5);
    expect(writes.hits, 'three creates, then nothing').to.equal(3);

    await env.configMaps.mergePatch(
      { name: 'w1-shard-2', namespace: 'default' },
      { data: { value: 'drift' } },
      { fieldManager: 'someone' },
    );
    await eventually(
      'shard 2 restored',
      async () => (await env.configMaps.get({ name: 'w1-shard-2', namespace: 'default' })).data?.['value'] === 'a',
    );
    await consistently(
      () => `the edit and one apply, then nothing (writes: ${writes.hits})`,
      () => writes.hits === 5,
      100,
    );
    expect(recorded.last()?.dependent('shards').reconcileResult?.operation).to.equal('unchanged');
  });

  it('WF4: a non-GC bulk dependent is deleted on cleanup, and resourceDeleted waits for every item', async () => {
    await startWidgets(env, widgetWorkflow().add(shards({ garbageCollected: false }), { deletePostcondition: resourceDeleted }));
    await createWidget(env, widget('w1', { replicas: 2 }));
    await eventually('2 shards', async () => (await shardNames(env)).length === 2);
    await env.configMaps.mergePatch(
      { name: 'w1-shard-0', namespace: 'default' },
      { metadata: { finalizers: ['example.com/hold'] } },
      { fieldManager: 'someone' },
    );
    await deleteWidget(env, 'w1');
    await eventually('shard 1 deleted', async () => JSON.stringify(await shardNames(env)) === JSON.stringify(['w1-shard-0']));
    await consistently('the finalizer holds w1 while shard 0 remains', async () => (await getWidget(env, 'w1')) !== undefined);
    await env.configMaps.mergePatch(
      { name: 'w1-shard-0', namespace: 'default' },
      { metadata: { finalizers: null } },
      { fieldManager: 'someone' },
    );
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(await shardNames(env)).to.deep.equal([]);
  });

  it('bad input: invalid keys and duplicate object names fail the node with a message naming them', async () => {
    const bad = bulkDependent<ConfigMap, Widget>({
      name: 'bad',
      resource: CONFIGMAPS,
      desiredResources: (w): Record<string, ConfigMap> =>
        w.spec?.value === 'dup'
          ? { a: { metadata: { name: 'same' } }, b: { metadata: { name: 'same' } } }
          : { 'not a label!': { metadata: { name: 'x' } } },
    });
    const recorded = await startWidgets(env, widgetWorkflow().add(bad), { reconciler: { handlesWorkflowErrors: true } });
    await createWidget(env, widget('w1', { value: 'key' }));
    await createWidget(env, widget('w2', { value: 'dup' }));
    const errors = await eventually('two errors', () => {
      const found = recorded.results.map((r) => String(r.dependent('bad').error));
      return found.some((e) => e.includes('not a label')) && found.some((e) => e.includes("'same'")) && found;
    });
    expect(errors.find((e) => e.includes('not a label'))).to.contain("bulk dependent 'bad': key must be a label value");
    expect(errors.find((e) => e.includes("'same'"))).to.contain("bulk dependent 'bad': keys 'a' and 'b' both desire ConfigMap 'same'");
  });
});

describe('dependent: bulkDependent options', () => {
  it('bad input: a name that is not a label value, or no desiredResources, is a ConfigurationError', () => {
    expect(() => bulkDependent<ConfigMap, Widget>({ name: 'Has Spaces', resource: CONFIGMAPS, desiredResources: () => ({}) })).to.throw(
      ConfigurationError,
      /bulkDependent\(Has Spaces\)\.name: is used as the rxkube\.dev\/dependent label/,
    );
    expect(() => bulkDependent<ConfigMap, Widget>({ resource: CONFIGMAPS } as never)).to.throw(
      ConfigurationError,
      /bulkDependent\(configmaps\)\.desiredResources: must be a function/,
    );
  });
});
