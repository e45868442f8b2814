import { expect } from 'chai';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { UpdateControl, type Context, type Reconciler, type SecondarySpec } from '../../lib/controller/index.js';
import { workflow } from '../../lib/workflow/index.js';
import type { ReconcileOutcome } from '../../lib/core/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';

const CONFIGMAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' } as const;
const SECRETS = { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' } as const;

describe('controller: informers shared per operator (issue 11, embedded API server)', () => {
  let cluster: TestCluster;
  beforeEach(async () => {
    cluster = await startTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  const noop: Reconciler<KubernetesObject> = { reconcile: () => UpdateControl.noUpdate() };
  const watches = (resource: string) => cluster.server.requests.count({ verb: 'watch', resource });
  const lists = (resource: string) => cluster.server.requests.count({ verb: 'list', resource });

  function ran(outcomes: ReconcileOutcome[], name: string): boolean {
    return outcomes.some((o) => o.id.name === name && o.result === 'success');
  }

  function collect(outcome$: { subscribe(next: (o: ReconcileOutcome) => void): unknown }): ReconcileOutcome[] {
    const out: ReconcileOutcome[] = [];
    outcome$.subscribe((o) => out.push(o));
    return out;
  }

  it('ES1: two controllers on ConfigMaps open one list and one watch, and both run for every ConfigMap', async () => {
    const operator = cluster.operator();
    const first = collect(operator.register(noop, { name: 'first', resource: CONFIGMAPS }).outcome$);
    const second = collect(operator.register(noop, { name: 'second', resource: CONFIGMAPS }).outcome$);
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'before', namespace: 'default' }, data: { a: '1' } });
    await operator.start();
    await eventually('the watch is open', () => watches('configmaps') >= 1);
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'after', namespace: 'default' }, data: { a: '1' } });
    await eventually('both controllers ran for both ConfigMaps', () =>
      ['before', 'after'].every((name) => ran(first, name) && ran(second, name)),
    );
    expect(watches('configmaps'), 'watch requests').to.equal(1);
    expect(cluster.server.stats().watches, 'watches open').to.equal(1);
    expect(lists('configmaps'), 'lists').to.equal(1);
  });

  it('ES6: a controller with namespaces of its own, or with another transform, gets an informer of its own', async () => {
    const operator = cluster.operator();
    const all = collect(operator.register(noop, { name: 'all', resource: CONFIGMAPS }).outcome$);
    const own = collect(operator.register(noop, { name: 'own-namespaces', resource: CONFIGMAPS, namespaces: ['default'] }).outcome$);
    const raw = collect(operator.register(noop, { name: 'raw', resource: CONFIGMAPS, informer: { transform: (o) => o } }).outcome$);
    await operator.start();
    await eventually('three watches are open', () => watches('configmaps') >= 3);
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'cm', namespace: 'default' } });
    await eventually('every controller ran', () => [all, own, raw].every((outcomes) => ran(outcomes, 'cm')));
    expect(watches('configmaps')).to.equal(3);
  });

  it('ES3: a secondary source on ConfigMaps shares the informer another controller has for its primaries', async () => {
    const operator = cluster.operator();
    const configMaps = collect(operator.register(noop, { name: 'configmaps', resource: CONFIGMAPS }).outcome$);
    const secrets = collect(
      operator.register(noop, {
        name: 'secrets',
        resource: SECRETS,
        secondaries: [
          { resource: CONFIGMAPS, toPrimaries: (cm) => [{ name: cm.metadata?.name ?? '', namespace: cm.metadata?.namespace }] },
        ],
      }).outcome$,
    );
    await cluster.apply(SECRETS, { metadata: { name: 'same', namespace: 'default' } });
    await operator.start();
    await eventually('the secret ran', () => ran(secrets, 'same'));
    const runsBefore = secrets.length;
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'same', namespace: 'default' }, data: { a: '1' } });
    await eventually(
      'the ConfigMap ran its controller, and as a secondary ran the secret again',
      () => ran(configMaps, 'same') && secrets.length > runsBefore,
    );
    expect(watches('configmaps')).to.equal(1);
    expect(watches('secrets')).to.equal(1);
  });

  it('ES6: one of two controllers sharing an informer changes its namespaces: it moves to an informer of its own, the other keeps watching all', async () => {
    await cluster.client
      .resource({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false })
      .create({ metadata: { name: 'other' } });
    const operator = cluster.operator();
    const stays = collect(operator.register(noop, { name: 'stays', resource: CONFIGMAPS }).outcome$);
    const moving = operator.register(noop, { name: 'moves', resource: CONFIGMAPS });
    const moves = collect(moving.outcome$);
    await operator.start();
    await eventually('the watch is open', () => cluster.server.stats().watches === 1);
    moving.changeNamespaces(['other']);
    await eventually('the moved controller has a watch of its own', () => cluster.server.stats().watches === 2);
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'in-default', namespace: 'default' } });
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'in-other', namespace: 'other' } });
    await eventually('each ran what it watches', () => ran(stays, 'in-default') && ran(stays, 'in-other') && ran(moves, 'in-other'));
    expect(ran(moves, 'in-default')).to.equal(false);
    expect(moving.listEventSources()[0]?.namespaces).to.deep.equal(['other']);
  });

  it('WF5: a source an activation condition registers shares the informer the operator has; unregistering it releases only that share', async () => {
    let active = true;
    const configMapDependent = {
      name: 'configmap',
      eventSource: { resource: CONFIGMAPS, toPrimaries: () => [] } satisfies SecondarySpec,
      getSecondary: (_s: KubernetesObject, ctx: Context<KubernetesObject>) => ctx.getSecondaryResource('configmaps'),
    };
    const operator = cluster.operator();
    const configMaps = collect(operator.register(noop, { name: 'configmaps', resource: CONFIGMAPS }).outcome$);
    const secrets = operator.register(noop, {
      name: 'secrets',
      resource: SECRETS,
      workflow: workflow<KubernetesObject, Context<KubernetesObject>>().add(configMapDependent, { activationCondition: () => active }),
    });
    const secretRuns = collect(secrets.outcome$);
    await cluster.apply(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: { v: 'MQ==' } });
    await operator.start();
    await eventually(
      'the secret ran and registered its ConfigMap source',
      () => ran(secretRuns, 's') && secrets.listEventSources().some((s) => s.registeredBy !== undefined),
    );
    await eventually('the watches of ConfigMaps (shared) and Secrets are open', () => cluster.server.stats().watches === 2);
    expect(watches('configmaps')).to.equal(1);

    active = false;
    const runs = secretRuns.length;
    await cluster.apply(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: { v: 'Mg==' } });
    await eventually(
      'the source was unregistered',
      () => secretRuns.length > runs && !secrets.listEventSources().some((s) => s.registeredBy !== undefined),
    );
    await cluster.apply<V1ConfigMap>(CONFIGMAPS, { metadata: { name: 'still-watched', namespace: 'default' } });
    await eventually('the ConfigMaps controller still runs', () => ran(configMaps, 'still-watched'));
    expect(watches('configmaps'), 'the shared watch stayed open').to.equal(1);
    expect(cluster.server.stats().watches).to.equal(2);
  });

  it('WF5: a source registered at run time that no one else uses closes its watch when unregistered', async () => {
    let active = true;
    const configMapDependent = {
      name: 'configmap',
      eventSource: { resource: CONFIGMAPS, toPrimaries: () => [] } satisfies SecondarySpec,
      getSecondary: (_s: KubernetesObject, ctx: Context<KubernetesObject>) => ctx.getSecondaryResource('configmaps'),
    };
    const operator = cluster.operator();
    const secrets = operator.register(noop, {
      name: 'secrets',
      resource: SECRETS,
      workflow: workflow<KubernetesObject, Context<KubernetesObject>>().add(configMapDependent, { activationCondition: () => active }),
    });
    const secretRuns = collect(secrets.outcome$);
    await cluster.apply(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: { v: 'MQ==' } });
    await operator.start();
    await eventually('the ConfigMap source is watching', () => ran(secretRuns, 's') && cluster.server.stats().watches === 2);
    active = false;
    await cluster.apply(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: { v: 'Mg==' } });
    await eventually('its watch closed', () => cluster.server.stats().watches === 1);
  });

  it('OB5: stopping the operator closes the shared watch', async () => {
    const operator = cluster.operator();
    operator.register(noop, { name: 'first', resource: CONFIGMAPS });
    operator.register(noop, { name: 'second', resource: CONFIGMAPS });
    await operator.start();
    await eventually('the watch is open', () => cluster.server.stats().watches === 1);
    await operator.stop();
    await eventually('the server has no open watch', () => cluster.server.stats().watches === 0);
  });
});
