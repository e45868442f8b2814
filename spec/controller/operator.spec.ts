import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { UpdateControl, type Context, type Reconciler, type SecondarySpec } from '../../lib/controller/index.js';
import { Mappers } from '../../lib/sources/index.js';
import { workflow } from '../../lib/workflow/index.js';
import {
  capturingLogger,
  CONFIGMAPS,
  createWidget,
  eventually,
  getWidget,
  patchWidget,
  recordOutcomes,
  RunTracker,
  startEnv,
  widget,
  widgetConfig,
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

const observing: Reconciler<Widget> = {
  reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } }),
};

describe('operator and controller lifecycle against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('ES6: changeNamespaces moves the primary and the secondaries that follow it to the new namespaces', async () => {
    await env.createNamespace('ns-a');
    await env.createNamespace('ns-b');
    const runs = new RunTracker();
    const sources: string[] = [];
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        runs.begin(w)();
        sources.push(`${w.metadata!.name}:${ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type}`);
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ namespaces: ['ns-a'], secondaries: [{ resource: CONFIGMAPS }] }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    const a1 = await createWidget(env, widget('a1', { value: 'a' }, 'ns-a'));
    const b1 = await createWidget(env, widget('b1', { value: 'a' }, 'ns-b'));
    await outcomes.until('a1', (o) => o.length === 1, 'a1 reconciled', 5000, 'ns-a');
    expect(outcomes.of('b1', 'ns-b'), 'ns-b is not watched').to.deep.equal([]);

    ctrl.changeNamespaces(['ns-b']);
    await outcomes.until('b1', (o) => o.length === 1, 'b1 reconciled after the change', 5000, 'ns-b');
    // The ConfigMap source followed: a change of b1's ConfigMap in ns-b runs b1.
    await env.configMaps.create({ metadata: { name: 'b1-cm', namespace: 'ns-b', ownerReferences: [ownerRef(b1)] } });
    await outcomes.until('b1', (o) => o.length === 2, 'b1 run by its ConfigMap', 5000, 'ns-b');
    // ns-a is no longer watched: a1's changes run nothing (its namespace's watches are closed).
    await patchWidget(env, 'a1', { spec: { value: 'b' } }, 'ns-a');
    await env.configMaps.create({ metadata: { name: 'a1-cm', namespace: 'ns-a', ownerReferences: [ownerRef(a1)] } });
    await patchWidget(env, 'b1', { spec: { value: 'b' } }, 'ns-b');
    await eventually('b1 observed b', async () => (await getWidget(env, 'b1', 'ns-b'))?.status?.['observed'] === 'b');
    expect(runs.count('a1', 'ns-a')).to.equal(1);
    expect(sources).to.deep.equal([
      'a1:widgets.sample.rxkube.dev',
      'b1:widgets.sample.rxkube.dev',
      'b1:configmaps',
      'b1:widgets.sample.rxkube.dev',
    ]);
    await env.watchesOpen(2);
  });

  it("ES6: namespaces 'own' is the operator's namespace (POD_NAMESPACE here), resolved at register()", async () => {
    await env.createNamespace('ns-own');
    const reconciler: Reconciler<Widget> = { reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: true } }) };
    const op = env.operator();
    const previous = process.env['POD_NAMESPACE'];
    process.env['POD_NAMESPACE'] = 'ns-own';
    let ctrl;
    try {
      ctrl = op.register(reconciler, widgetConfig({ namespaces: 'own' }));
    } finally {
      if (previous === undefined) delete process.env['POD_NAMESPACE'];
      else process.env['POD_NAMESPACE'] = previous;
    }
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('elsewhere', { value: 'a' }, 'default'));
    await createWidget(env, widget('mine', { value: 'a' }, 'ns-own'));
    await outcomes.until('mine', (o) => o.length === 1, 'mine reconciled', 5000, 'ns-own');
    expect(outcomes.of('elsewhere', 'default'), 'default is not watched').to.deep.equal([]);
  });

  it('ES6, WF5: an event source registered at run time watches the current namespaces and follows later changes', async () => {
    await env.createNamespace('ns-a');
    await env.createNamespace('ns-b');
    const seen: string[] = [];
    const configMapDependent = {
      name: 'configmap',
      eventSource: { resource: CONFIGMAPS } satisfies SecondarySpec,
      getSecondary: (_w: Widget, ctx: Context<Widget>) => ctx.getSecondaryResource('configmaps'),
    };
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        seen.push(`${w.metadata!.name}:${ctx.getSecondaryResource('configmaps')?.metadata?.name ?? '-'}`);
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(
      reconciler,
      widgetConfig({
        namespaces: ['ns-a'],
        workflow: workflow<Widget, Context<Widget>>().add(configMapDependent, { activationCondition: () => true }),
      }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    ctrl.changeNamespaces(['ns-b']); // before any run registered the ConfigMap source
    const b1 = await createWidget(env, widget('b1', { value: 'a' }, 'ns-b'));
    await outcomes.until('b1', (o) => o.length === 1, 'b1 reconciled', 5000, 'ns-b');
    await env.configMaps.create({ metadata: { name: 'b1-cm', namespace: 'ns-b', ownerReferences: [ownerRef(b1)] } });
    await outcomes.until('b1', (o) => o.length === 2, 'b1 run by its ConfigMap in ns-b', 5000, 'ns-b');

    ctrl.changeNamespaces(['ns-a']); // after the source was registered
    const a1 = await createWidget(env, widget('a1', { value: 'a' }, 'ns-a'));
    await outcomes.until('a1', (o) => o.length === 1, 'a1 reconciled', 5000, 'ns-a');
    await env.configMaps.create({ metadata: { name: 'a1-cm', namespace: 'ns-a', ownerReferences: [ownerRef(a1)] } });
    await outcomes.until('a1', (o) => o.length === 2, 'a1 run by its ConfigMap in ns-a', 5000, 'ns-a');
    expect(seen).to.deep.equal(['b1:-', 'b1:b1-cm', 'a1:-', 'a1:a1-cm']);
  });

  it('WF5, ES2: runs that register the same event source at once all wait until its cache has synced', async () => {
    const annotation = 'sample.rxkube.dev/widget';
    for (const name of ['w1', 'w2', 'w3']) {
      await env.configMaps.create({ metadata: { name: `${name}-cm`, namespace: 'default', annotations: { [annotation]: name } } });
      await createWidget(env, widget(name));
    }
    const seen: string[] = [];
    const configMapDependent = {
      name: 'configmap',
      eventSource: { resource: CONFIGMAPS, toPrimaries: Mappers.fromAnnotation(annotation) } satisfies SecondarySpec,
      getSecondary: (_w: Widget, ctx: Context<Widget>) => ctx.getSecondaryResource('configmaps'),
    };
    const reconciler: Reconciler<Widget> = {
      reconcile(w, ctx) {
        seen.push(`${w.metadata!.name}:${ctx.getSecondaryResource('configmaps')?.metadata?.name ?? '-'}`);
        return UpdateControl.noUpdate();
      },
    };
    const op = env.operator();
    const ctrl = op.register(
      reconciler,
      widgetConfig({ workflow: workflow<Widget, Context<Widget>>().add(configMapDependent, { activationCondition: () => true }) }),
    );
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    for (const name of ['w1', 'w2', 'w3']) await outcomes.until(name, (o) => o.length >= 1, 'reconciled');
    // The first run of each widget (the one that registered the source) already saw its ConfigMap.
    expect(seen.slice(0, 3).sort()).to.deep.equal(['w1:w1-cm', 'w2:w2-cm', 'w3:w3-cm']);
  });

  it('ES8: two controllers in one operator, each with its label selector, reconcile only their widgets', async () => {
    const runsA = new RunTracker();
    const runsB = new RunTracker();
    const tracking = (runs: RunTracker, tier: string): Reconciler<Widget> => ({
      reconcile(w) {
        runs.begin(w)();
        return UpdateControl.patchStatus({ ...w, status: { [`tier-${tier}`]: w.spec?.value } });
      },
    });
    const op = env.operator();
    const a = op.register(tracking(runsA, 'a'), widgetConfig({ name: 'tier-a', labelSelector: { tier: 'a' } }));
    const b = op.register(
      tracking(runsB, 'b'),
      widgetConfig({ name: 'tier-b', labelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['b'] }] } }),
    );
    const outcomesA = recordOutcomes(a.outcome$);
    const outcomesB = recordOutcomes(b.outcome$);
    await op.start();
    await createWidget(env, widget('z', { value: 'a' }));
    await createWidget(env, widget('x', { value: 'a' }, 'default', { labels: { tier: 'a' } }));
    await createWidget(env, widget('y', { value: 'a' }, 'default', { labels: { tier: 'b' } }));
    await outcomesA.until('x', (o) => o.length === 1, 'x reconciled by tier-a');
    await outcomesB.until('y', (o) => o.length === 1, 'y reconciled by tier-b');
    expect((await getWidget(env, 'x'))?.status).to.deep.equal({ 'tier-a': 'a' });
    expect((await getWidget(env, 'y'))?.status).to.deep.equal({ 'tier-b': 'a' });

    // z enters tier a by a label change (not a generation change: it is an ADDED for that watch).
    await patchWidget(env, 'z', { metadata: { labels: { tier: 'a' } } });
    await outcomesA.until('z', (o) => o.length === 1, 'z reconciled by tier-a');
    expect([...runsA.counts.keys()].sort()).to.deep.equal(['default/x', 'default/z']);
    expect([...runsB.counts.keys()]).to.deep.equal(['default/y']);
    expect(outcomesB.of('z')).to.deep.equal([]);
  });

  it('OB5: stop() lets the run in flight finish (its write included), then closes every watch', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    let aborted: boolean | undefined;
    const reconciler: Reconciler<Widget> = {
      async reconcile(w, ctx) {
        inFlight();
        await gate;
        aborted = ctx.signal.aborted;
        return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
      },
    };
    const op = env.operator();
    const ctrl = op.register(reconciler, widgetConfig({ secondaries: [{ resource: CONFIGMAPS }] }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await env.watchesOpen(2);
    await createWidget(env, widget('w1'));
    await started;

    let stopped = false;
    const stopping = op.stop().then(() => (stopped = true));
    await createWidget(env, widget('w2')); // arrives after stop(): never runs
    await getWidget(env, 'w1'); // a round trip's worth of time for stop() to (wrongly) finish
    expect(stopped, 'stop() returned while a run was in flight').to.equal(false);
    release();
    await stopping;
    expect(aborted).to.equal(false);
    expect(outcomes.of('w1').map((o) => o.result)).to.deep.equal(['success']);
    expect((await getWidget(env, 'w1'))?.status).to.deep.equal({ observed: 'a' });
    expect(outcomes.of('w2')).to.deep.equal([]);
    await env.watchesOpen(0);
  });

  it('OB5: a run still in flight when the stop timeout ends is aborted through ctx.signal, with a warning', async () => {
    const { logger, lines } = capturingLogger('info');
    let signal: AbortSignal | undefined;
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const reconciler: Reconciler<Widget> = {
      reconcile(_w, ctx) {
        signal = ctx.signal;
        inFlight();
        return new Promise(() => {}); // never ends
      },
    };
    const op = env.operator({ logger, stopTimeoutMs: 50 });
    op.register(reconciler, widgetConfig());
    await op.start();
    await createWidget(env, widget('w1'));
    await started;
    await op.stop();
    expect(signal?.aborted).to.equal(true);
    expect(lines().find((l) => l['msg'] === 'runs still in flight at shutdown were aborted')?.['level']).to.equal(40);
    await env.watchesOpen(0);
  });

  it('OB4, OB5: with leader election only the leader reconciles; when it stops it releases the lease and the other takes over', async () => {
    const election = (identity: string) => ({
      leaderElection: {
        leaseName: 'widgets',
        leaseNamespace: 'default',
        identity,
        leaseDurationMs: 1500,
        renewDeadlineMs: 1000,
        retryPeriodMs: 100,
      },
    });
    const runsA = new RunTracker();
    const runsB = new RunTracker();
    const tracking = (runs: RunTracker, by: string): Reconciler<Widget> => ({
      reconcile(w) {
        runs.begin(w)();
        return UpdateControl.patchStatus({ ...w, status: { by } });
      },
    });
    const opA = env.operator(election('a'));
    const opB = env.operator(election('b'));
    opA.register(tracking(runsA, 'a'), widgetConfig());
    opB.register(tracking(runsB, 'b'), widgetConfig());
    const leading = { a: [] as boolean[], b: [] as boolean[] };
    opA.isLeader$.subscribe((l) => leading.a.push(l));
    opB.isLeader$.subscribe((l) => leading.b.push(l));
    await opA.start();
    await eventually('a leads', () => leading.a.at(-1) === true);
    await opB.start();
    await env.watchesOpen(3); // the follower keeps its cache warm (2 informers), and watches the lease

    await createWidget(env, widget('w1'));
    await eventually('w1 reconciled', async () => (await getWidget(env, 'w1'))?.status?.['by']);
    expect((await getWidget(env, 'w1'))?.status).to.deep.equal({ by: 'a' });
    expect(runsB.counts.size, 'the follower ran').to.equal(0);
    expect(leading.b.at(-1)).to.equal(false);

    await opA.stop();
    // OB5: the lease was released on stop, long before it could have expired.
    const lease = (await env.kubeConfig.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name: 'widgets', namespace: 'default' }))
      .spec;
    expect(lease?.holderIdentity ?? '').to.not.equal('a');
    await eventually('b leads', () => leading.b.at(-1) === true, 3000);
    await createWidget(env, widget('w2'));
    await eventually('w2 reconciled by b', async () => (await getWidget(env, 'w2'))?.status?.['by'] === 'b');
    expect(runsA.count('w2')).to.equal(0);
    expect(leading).to.deep.equal({ a: [false, true, false], b: [false, true] });
  });

  it('OB4: a leader that cannot renew its lease stops processing; events meanwhile run once a leader is back', async () => {
    const by: string[] = [];
    const registry = new Registry();
    const queued = async () => (await registry.getSingleMetric('rxkube_reconciliations_queued')?.get())?.values[0]?.value;
    const op = env.operator({
      registry,
      leaderElection: {
        leaseName: 'widgets',
        leaseNamespace: 'default',
        identity: 'a',
        leaseDurationMs: 1000,
        renewDeadlineMs: 500,
        retryPeriodMs: 100,
      },
    });
    op.register(
      {
        reconcile(w) {
          by.push(w.metadata!.name!);
          return UpdateControl.patchStatus({ ...w, status: { observed: w.spec?.value } });
        },
      },
      widgetConfig(),
    );
    const leading: boolean[] = [];
    op.isLeader$.subscribe((l) => leading.push(l));
    await op.start();
    await eventually('leading', () => leading.at(-1) === true);
    await createWidget(env, widget('w1'));
    await eventually('w1 reconciled', async () => (await getWidget(env, 'w1'))?.status?.['observed'] === 'a');

    const outage = env.server.faults.failRequests({ resource: 'leases', status: 500 });
    await eventually('stepped down', () => leading.at(-1) === false, 3000);
    await createWidget(env, widget('w2'));
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    // Both changes reached the controller and wait there: nothing runs while it does not lead.
    await eventually('two resources queued', async () => (await queued()) === 2);
    expect(by).to.deep.equal(['w1']);
    outage.remove();
    await eventually('leading again', () => leading.at(-1) === true, 3000);
    await eventually(
      'both changes reconciled',
      async () => (await getWidget(env, 'w1'))?.status?.['observed'] === 'b' && (await getWidget(env, 'w2'))?.status?.['observed'] === 'a',
    );
    expect(leading).to.deep.equal([false, true, false, true]);
  });

  it('OB3: healthUrl is set as soon as the health server listens, while the caches still sync: /readyz is 503 until start() resolves', async () => {
    const op = env.operator({ health: { port: 0, host: '127.0.0.1' } });
    op.register(observing, widgetConfig());
    expect(op.healthUrl, 'before start()').to.equal(undefined);
    const slowList = env.server.faults.delayRequests({ verb: 'list', resource: 'widgets', delayMs: 1000 });
    let started = false;
    const starting = op.start().then(() => (started = true));
    const url = await eventually('healthUrl set', () => op.healthUrl);
    const syncing = await fetch(`${url}/readyz`);
    expect([syncing.status, started]).to.deep.equal([503, false]);
    expect(await syncing.text()).to.match(/has not synced/);
    await starting;
    expect(slowList.hits).to.equal(1);
    expect((await fetch(`${url}/readyz`)).status).to.equal(200);
    await op.stop();
    expect(op.healthUrl, 'after stop()').to.equal(undefined);
  });

  it('OB3: a retry policy that breaks at run time fails that run only: processing and /healthz stay alive', async () => {
    const { logger, lines } = capturingLogger('info');
    const op = env.operator({ logger, health: { port: 0, host: '127.0.0.1' } });
    // Passes the probe at register() (attempts 1 to 3), answers -5 for the fourth retry.
    const breaksLater = { delayBefore: (attempt: number) => (attempt <= 3 ? 10 : -5) };
    const ctrl = op.register({ reconcile: () => Promise.reject(new Error('fails')) }, widgetConfig({ retry: breaksLater }));
    const outcomes = recordOutcomes(ctrl.outcome$);
    await op.start();
    await createWidget(env, widget('w1'));
    const [last] = (await outcomes.until('w1', (o) => o.length === 4, 'three retries')).slice(3);
    expect(String(last?.error)).to.match(/ConfigurationError: retry: delayBefore\(4\) returned -5.*not retried after: Error: fails/);
    expect(lines().some((l) => l['msg'] === 'processing pipeline failed')).to.equal(false);
    expect(lines().some((l) => l['msg'] === 'run of default/w1 failed' && /delayBefore\(4\)/.test(JSON.stringify(l['err'])))).to.equal(
      true,
    );
    expect((await fetch(`${op.healthUrl}/healthz`)).status).to.equal(200);
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    await outcomes.until('w1', (o) => o.length === 5, 'a run after the broken answer');
  });

  it('OB3: /readyz and /healthz fail, naming the controller, once its processing has died (here: a rate limiter answering NaN)', async () => {
    const { logger, lines } = capturingLogger('info');
    const op = env.operator({ logger, health: { port: 0, host: '127.0.0.1' } });
    const broken = { acquire: () => ({ state: undefined, waitMs: Number.NaN }) };
    op.register({ reconcile: () => Promise.reject(new Error('fails')) }, widgetConfig({ rateLimiter: broken }));
    op.register(observing, widgetConfig({ name: 'healthy' }));
    await op.start();
    const probe = async (path: string) => {
      const res = await fetch(`${op.healthUrl}${path}`);
      return { status: res.status, body: await res.text() };
    };
    expect((await probe('/readyz')).status).to.equal(200);
    await createWidget(env, widget('w1'));
    await eventually('processing failed', () => lines().some((l) => l['msg'] === 'processing pipeline failed'));
    const ready = await probe('/readyz');
    expect(ready.status).to.equal(503);
    expect(ready.body).to.match(
      /\[-\]widgets.sample.rxkube.dev failed: processing stopped: ConfigurationError: rateLimiter: acquire\(\) returned waitMs NaN/,
    );
    expect(ready.body).to.include('[+]healthy ok');
    const alive = await probe('/healthz');
    expect(alive.status).to.equal(503);
    expect(alive.body).to.match(/\[-\]widgets.sample.rxkube.dev failed: processing stopped/);
  });
});
