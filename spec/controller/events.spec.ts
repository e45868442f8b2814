/** Kubernetes Events recorded by the controller and by reconcilers through ctx.events. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { KubeApiError } from '../../lib/kube/index.js';
import {
  createWidget,
  deleteWidget,
  eventually,
  FAST_RETRY,
  getWidget,
  patchWidget,
  recordOutcomes,
  startEnv,
  widget,
  widgetConfig,
  type Env,
  type Widget,
} from './fixtures.js';

interface NewEvent extends KubernetesObject {
  reason: string;
  note: string;
  type: string;
  action: string;
  reportingController: string;
  series?: { count: number };
}

const EVENTS = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true } as const;

describe('controller: Kubernetes Events', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(() => env.close());

  const eventsOf = async (name: string) =>
    (await env.client.resource<NewEvent>(EVENTS).list({ namespace: 'default', fieldSelector: { 'regarding.name': name } })).items;
  const summary = (events: NewEvent[]) => events.map((e) => `${e.type} ${e.reason} x${e.series?.count ?? 1}: ${e.note}`).sort();

  it('a failed run records one Warning per distinct error, its retries counted in the series, not one Event per retry', async () => {
    let message = 'backend unavailable';
    const reconciler: Reconciler<Widget> = {
      reconcile() {
        throw new Error(message);
      },
    };
    const op = env.operator();
    const outcomes = recordOutcomes(op.register(reconciler, widgetConfig({ retry: FAST_RETRY.withMaxAttempts(3) })).outcome$);
    await op.start();
    await createWidget(env, widget('w'));
    await outcomes.until('w', (o) => o.filter((x) => x.result === 'failure').length === 4, 'the first try and 3 retries failed');
    const first = await eventually('one Warning counting 4 failures', async () => {
      const found = await eventsOf('w');
      return found.length === 1 && found[0].series?.count === 4 ? found : undefined;
    });
    expect(first[0]).to.deep.include({
      type: 'Warning',
      reason: 'ReconcileFailed',
      action: 'Reconcile',
      note: 'backend unavailable',
      reportingController: 'widgets.sample.rxkube.dev',
    });

    message = 'quota exceeded';
    await patchWidget(env, 'w', { spec: { value: 'b' } });
    await eventually('a second Event for the other error', async () => (await eventsOf('w')).length === 2);
    expect(summary(await eventsOf('w'))).to.deep.equal([
      'Warning ReconcileFailed x1: quota exceeded',
      'Warning ReconcileFailed x4: backend unavailable',
    ]);
  });

  it('UP2: a conflict is no news: a run failing with 409 records no Warning', async () => {
    let conflicts = 1;
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        if (conflicts-- > 0) {
          const status = {
            kind: 'Status',
            code: 409,
            reason: 'Conflict',
            message: 'the object has been modified; please apply your changes to the latest version and try again',
          };
          throw new KubeApiError(409, status, {}, { method: 'PATCH', path: '/apis/sample.rxkube.dev/v1/namespaces/default/widgets/w' });
        }
        ctx.events.normal('Synced', `value ${w.spec?.value}`);
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const outcomes = recordOutcomes(op.register(reconciler, widgetConfig()).outcome$);
    await op.start();
    await createWidget(env, widget('w'));
    await outcomes.until(
      'w',
      (o) => o.some((x) => x.result === 'success') && o.some((x) => x.result === 'failure'),
      'a conflict, then a success',
    );
    await eventually('the Normal event of the success', async () => (await eventsOf('w')).length > 0);
    expect(summary(await eventsOf('w'))).to.deep.equal(['Normal Synced x1: value a']);
  });

  it('ctx.events in reconcile and cleanup; a cleanup and the finalizer removal record Normal events (action Cleanup, RemoveFinalizer)', async () => {
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        ctx.events.normal('Synced', `value ${w.spec?.value}`);
        return UpdateControl.noUpdate();
      },
      cleanup(_w, ctx) {
        ctx.events.normal('Released', 'released the external thing', { action: 'Release' });
      },
    };
    const op = env.operator();
    op.register(reconciler, widgetConfig());
    await op.start();
    await createWidget(env, widget('w'));
    await eventually('Synced', async () => (await eventsOf('w')).length === 1);
    await deleteWidget(env, 'w');
    await eventually('the widget gone', async () => (await getWidget(env, 'w')) === undefined);
    const events = await eventually('four events', async () => {
      const found = await eventsOf('w');
      return found.length === 4 ? found : undefined;
    });
    expect(events.map((e) => `${e.action}: ${e.type} ${e.reason} ${e.note}`).sort()).to.deep.equal([
      'Cleanup: Normal CleanedUp cleanup complete',
      'Reconcile: Normal Synced value a',
      'Release: Normal Released released the external thing',
      'RemoveFinalizer: Normal FinalizerRemoved removed finalizer widgets.sample.rxkube.dev/finalizer',
    ]);
  });
});
