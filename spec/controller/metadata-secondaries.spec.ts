import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import type { PartialObjectMetadata } from '../../lib/kube/index.js';
import {
  CONFIGMAPS,
  createWidget,
  getWidget,
  recordOutcomes,
  startEnv,
  widget,
  widgetConfig,
  type ConfigMap,
  type Env,
  type Widget,
} from './fixtures.js';

const ownerRef = (w: Widget) => ({
  apiVersion: w.apiVersion!,
  kind: w.kind!,
  name: w.metadata!.name!,
  uid: w.metadata!.uid!,
  controller: true,
});

describe('controller: a metadata-only secondary source against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('ES3, ES10: maps by owner reference from metadata alone; the reconciler reads metadata only, also right after its own write', async () => {
    const seen: { source: string; secondaries: KubernetesObject[] }[] = [];
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        seen.push({
          source: ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type,
          secondaries: ctx.getSecondaryResources<PartialObjectMetadata>('configmaps'),
        });
        await ctx.secondaryClient<ConfigMap>('configmaps').apply(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${w.metadata!.name}-cm`, namespace: 'default', ownerReferences: [ownerRef(w)] },
            data: { password: 'hunter2' },
          },
          { force: true },
        );
        // Read-your-writes: the write's answer is held in the metadata shape the informer caches.
        const written = ctx.getSecondaryResource<PartialObjectMetadata>('configmaps');
        expect(written?.kind).to.equal('PartialObjectMetadata');
        expect(written).to.not.have.property('data');
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ secondaries: [{ resource: CONFIGMAPS, metadataOnly: true }] }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await env.watchesOpen(2);
    // UP3: with the ConfigMap watch stalled, only the write's answer tells the run what is there.
    const stall = env.server.faults.stallWatches({ resource: 'configmaps' });
    await createWidget(env, widget('w1'));
    await outcomes.until('w1', (o) => o.length === 1, 'the first run');
    stall.remove();
    expect((await getWidget(env, 'w1'))?.metadata?.name).to.equal('w1');

    // A foreign change of the child (a label) reaches its owner through the metadata watch.
    await env.configMaps.mergePatch({ namespace: 'default', name: 'w1-cm' }, { metadata: { labels: { touched: 'yes' } } });
    await outcomes.until('w1', (o) => o.length === 2, 'w1 run by its ConfigMap');
    const last = seen.at(-1)!;
    expect(last.source).to.equal('configmaps');
    expect(last.secondaries.map((s) => [s.kind, s.metadata?.name, s.metadata?.labels?.['touched']])).to.deep.equal([
      ['PartialObjectMetadata', 'w1-cm', 'yes'],
    ]);
    expect(JSON.stringify(seen)).to.not.include('hunter2');
  });
});
