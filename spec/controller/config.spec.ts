import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  Operator,
  Primaries,
  reconcilerRun,
  UpdateControl,
  type ControllerConfig,
  type OperatorOptions,
  type Reconciler,
  type ReconcilerRunOptions,
} from '../../lib/controller/index.js';
import { reconcileEach } from '../../lib/processing/index.js';
import { ConfigurationError } from '../../lib/core/index.js';
import { informer, readYourWrites } from '../../lib/cache/index.js';
import { secondarySource } from '../../lib/sources/index.js';
import {
  CONFIGMAPS,
  createWidget,
  getWidget,
  eventually,
  startEnv,
  widget,
  widgetConfig,
  WIDGET,
  type Env,
  type Widget,
} from './fixtures.js';

const noop: Reconciler<Widget> = { reconcile: () => UpdateControl.noUpdate() };

describe('controller configuration and startup', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  /** The ConfigurationError register() throws (fails when it throws nothing or something else). */
  function registerError(config: unknown, reconciler: unknown = noop): ConfigurationError {
    const op = env.operator();
    try {
      op.register(reconciler as Reconciler<Widget>, config as ControllerConfig<Widget>);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigurationError);
      return err as ConfigurationError;
    }
    throw new Error('register() accepted the configuration');
  }

  const cases: [string, unknown, unknown, string, RegExp][] = [
    ['a missing plural', { resource: { apiVersion: 'sample.rxkube.dev/v1', kind: 'Widget' } }, noop, 'resource.plural', /needs a plural/],
    [
      'a bad apiVersion',
      { resource: { ...WIDGET, apiVersion: 'Sample.rxkube.dev/v1' } },
      noop,
      'resource.apiVersion',
      /group 'Sample.rxkube.dev' is not a lowercase DNS subdomain/,
    ],
    [
      'an invalid namespace name',
      { resource: WIDGET, namespaces: ['default', 'Not_A_Namespace'] },
      noop,
      'namespaces[1]',
      /"Not_A_Namespace" is not a valid namespace name/,
    ],
    ['an empty namespace list', { resource: WIDGET, namespaces: [] }, noop, 'namespaces', /non-empty array/],
    ['a reconciler without reconcile', { resource: WIDGET }, { cleanup: () => undefined }, 'reconciler.reconcile', /must be a function/],
    ['a reconciler that is not an object', { resource: WIDGET }, () => undefined, 'reconciler', /must be an object with a reconcile/],
    ['a finalizer that is not a qualified name', { resource: WIDGET, finalizerName: 'no slash' }, noop, 'finalizerName', /qualified name/],
    ['an unknown patch strategy', { resource: WIDGET, patchStrategy: 'update' }, noop, 'patchStrategy', /'apply' or 'merge'/],
    [
      'zero concurrent reconciliations',
      { resource: WIDGET, maxConcurrentReconciliations: 0 },
      noop,
      'maxConcurrentReconciliations',
      /positive integer/,
    ],
    ['a retry without delayBefore', { resource: WIDGET, retry: {} }, noop, 'retry', /delayBefore/],
    [
      'a retry policy answering a negative delay',
      { resource: WIDGET, retry: { delayBefore: () => -5 } },
      noop,
      'retry',
      /delayBefore\(1\) returned -5/,
    ],
    [
      'a retry policy that throws',
      {
        resource: WIDGET,
        retry: {
          delayBefore: () => {
            throw new Error('no');
          },
        },
      },
      noop,
      'retry',
      /delayBefore\(1\) threw Error: no/,
    ],
    ['a lowercase kind', { resource: { ...WIDGET, kind: 'widget' } }, noop, 'resource.kind', /CamelCase.*"widget"/],
    [
      'a secondary without a plural',
      { resource: WIDGET, secondaries: [{ resource: { apiVersion: 'v1', kind: 'ConfigMap' } }] },
      noop,
      'secondaries[0].resource.plural',
      /needs a plural/,
    ],
    [
      'two secondaries of one name',
      { resource: WIDGET, secondaries: [{ resource: CONFIGMAPS }, { resource: CONFIGMAPS }] },
      noop,
      'secondaries',
      /two sources are named 'configmaps'/,
    ],
    [
      'a non-function mapper',
      { resource: WIDGET, secondaries: [{ resource: CONFIGMAPS, toPrimaries: 'owner' }] },
      noop,
      'secondaries[0].toPrimaries',
      /must be a function/,
    ],
    [
      'namespaces for a cluster-scoped kind',
      { resource: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }, namespaces: ['default'] },
      noop,
      'namespaces',
      /cluster-scoped/,
    ],
    ['a bad cache sync timeout', { resource: WIDGET, cacheSyncTimeoutMs: -1 }, noop, 'cacheSyncTimeoutMs', /positive number/],
    [
      'a misspelled option',
      { resource: WIDGET, maxConcurrentReconcilations: 5 },
      noop,
      'maxConcurrentReconcilations',
      /is not an option; did you mean 'maxConcurrentReconciliations'\?/,
    ],
    [
      'an option cut short',
      { resource: WIDGET, finalizer: 'x.io/f' },
      noop,
      'finalizer',
      /is not an option; did you mean 'finalizerName'\?/,
    ],
    [
      'an option unlike any',
      { resource: WIDGET, colour: 'blue' },
      noop,
      'colour',
      /is not an option \(the options: resource, name, namespaces/,
    ],
    [
      'a misspelled informer option',
      { resource: WIDGET, informer: { timeoutSecond: 5 } },
      noop,
      'informer.timeoutSecond',
      /did you mean 'timeoutSeconds'/,
    ],
    [
      'a misspelled sharding option',
      { resource: WIDGET, sharding: { leaseDuration: 5000 } },
      noop,
      'sharding.leaseDuration',
      /did you mean 'leaseDurationMs'/,
    ],
  ];
  for (const [what, config, reconciler, option, message] of cases) {
    it(`register() rejects ${what} with a ConfigurationError naming ${option}`, () => {
      const err = registerError(config, reconciler);
      expect(err.option).to.equal(option);
      expect(err.message).to.match(message);
      expect(err.message.startsWith(`${option}: `)).to.equal(true);
    });
  }

  it('reconcilerRun() validates the run-side options like register(), and needs a client and the primaries', () => {
    const widgets = informer<Widget>({ resource: WIDGET, kubeConfig: env.kubeConfig });
    const primaries = new Primaries(widgets);
    const runError = (options: Partial<ReconcilerRunOptions<Widget>>, reconciler: unknown = noop): ConfigurationError => {
      try {
        reconcilerRun(
          reconciler as Reconciler<Widget>,
          { resource: WIDGET, client: env.client, primaries, ...options } as ReconcilerRunOptions<Widget>,
        );
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigurationError);
        return err as ConfigurationError;
      }
      throw new Error('reconcilerRun() accepted the options');
    };
    expect(() => new Primaries(widgets, { finalizerName: 'no slash' })).to.throw(
      ConfigurationError,
      /^finalizerName: must be a qualified name/,
    );
    expect(() => new Primaries(widgets, { finalizerNmae: 'a.b/c' } as never)).to.throw(
      ConfigurationError,
      /^finalizerNmae: is not an option; did you mean 'finalizerName'\?/,
    );
    expect(runError({ primaries: readYourWrites(widgets) as never }).option).to.equal('primaries');
    expect(runError({ patchStrategy: 'update' as 'apply' }).option).to.equal('patchStrategy');
    expect(runError({}, { cleanup: () => undefined }).option).to.equal('reconciler.reconcile');
    expect(runError({ client: undefined }).option).to.equal('client');
    expect(runError({ primaries: undefined }).option).to.equal('primaries');
    expect(runError({ fieldManger: 'me' } as Partial<ReconcilerRunOptions<Widget>>).message).to.match(
      /^fieldManger: is not an option; did you mean 'fieldManager'\?/,
    );
    const configMaps = informer({ resource: CONFIGMAPS, kubeConfig: env.kubeConfig });
    const twice = [
      secondarySource<KubernetesObject, Widget>({ informer: configMaps, primary: WIDGET }),
      secondarySource<KubernetesObject, Widget>({ informer: configMaps, primary: WIDGET }),
    ];
    expect(runError({ secondaries: twice }).message).to.match(/secondaries\[1\]: two sources are named '.*configmaps'/);
    primaries.dispose();
  });

  it('FZ1: reconcilerRun() refuses primaries whose finalizer disagrees with the reconciler, naming the usual name', () => {
    const widgets = informer<Widget>({ resource: WIDGET, kubeConfig: env.kubeConfig });
    const withCleanup = { reconcile: () => undefined, cleanup: () => undefined } as Reconciler<Widget>;
    const without = new Primaries(widgets);
    const withFinalizer = new Primaries(widgets, { finalizerName: 'widgets.sample.rxkube.dev/finalizer' });
    const runError = (reconciler: Reconciler<Widget>, primaries: Primaries<Widget>): ConfigurationError => {
      try {
        reconcilerRun(reconciler, { resource: WIDGET, client: env.client, primaries });
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigurationError);
        return err as ConfigurationError;
      }
      throw new Error('reconcilerRun() accepted the primaries');
    };
    const missing = runError(withCleanup, without);
    expect(missing.option).to.equal('primaries');
    expect(missing.message).to.match(/finalizerName: 'widgets\.sample\.rxkube\.dev\/finalizer'/);
    expect(runError({ reconcile: () => undefined } as Reconciler<Widget>, withFinalizer).option).to.equal('primaries.finalizerName');
    expect(() => reconcilerRun(withCleanup, { resource: WIDGET, client: env.client, primaries: withFinalizer })).not.to.throw();
    without.dispose();
    withFinalizer.dispose();
  });

  it('new Operator() and reconcileEach() reject an option they do not have, naming the closest one', () => {
    const operatorError = (options: unknown): string => {
      try {
        new Operator(options as OperatorOptions);
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigurationError);
        return (err as Error).message;
      }
      throw new Error('new Operator() accepted the options');
    };
    expect(operatorError({ kubeConfig: env.kubeConfig, leaderElecton: { leaseName: 'x', leaseNamespace: 'default' } })).to.match(
      /^leaderElecton: is not an option; did you mean 'leaderElection'\?/,
    );
    expect(operatorError({ kubeConfig: env.kubeConfig, health: { prot: 8080 } })).to.match(
      /^health.prot: is not an option; did you mean 'port'\?/,
    );
    expect(() => reconcileEach(() => undefined, { maxConcurency: 4 } as never)).to.throw(
      ConfigurationError,
      /^maxConcurency: is not an option; did you mean 'maxConcurrency'\?/,
    );
  });

  it('register() rejects a second controller of the same name, naming both the option and the name', () => {
    const op = env.operator();
    op.register(noop, { resource: WIDGET });
    expect(() => op.register(noop, { resource: WIDGET }))
      .to.throw(ConfigurationError, /^name: a controller named 'widgets.sample.rxkube.dev' is already registered/)
      .with.property('option', 'name');
    expect(() => op.register(noop, { resource: WIDGET, name: 'second' })).to.not.throw();
  });

  it('ES6: changeNamespaces rejects an invalid namespace name like register() does, and keeps the old set', async () => {
    const op = env.operator();
    const ctrl = op.register(
      { reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { seen: true } }) },
      widgetConfig({ namespaces: ['default'] }),
    );
    await op.start();
    expect(() => ctrl.changeNamespaces(['default', 'Bad'])).to.throw(
      ConfigurationError,
      /^namespaces\[1\]: "Bad" is not a valid namespace name/,
    );
    await createWidget(env, widget('w1'));
    await eventually('w1 in default still reconciled', async () => (await getWidget(env, 'w1'))?.status?.['seen'] === true);
  });

  it('register() after start() is refused', async () => {
    const op = env.operator();
    op.register(noop, widgetConfig());
    await op.start();
    expect(() => op.register(noop, widgetConfig({ name: 'late' }))).to.throw(/before start\(\)/);
  });

  it('ES2: start() fails, naming the controller, when the primary cannot be listed (stopOnInformerErrorDuringStartup)', async () => {
    const op = env.operator();
    op.register(noop, widgetConfig({ resource: { apiVersion: 'nothing.rxkube.dev/v1', kind: 'Nothing', plural: 'nothings' } }));
    let error: unknown;
    await op.start().catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/controller nothings.nothing.rxkube.dev: caches did not sync: .*404/);
    await env.watchesOpen(0);
  });

  it('ES2: when one controller cannot start, start() stops the whole operator: the others close their watches', async () => {
    const op = env.operator();
    op.register(noop, widgetConfig());
    op.register(noop, { resource: CONFIGMAPS });
    // The ConfigMap list fails only after the widget controller has synced and opened its watch.
    env.server.faults.failRequests({ verb: 'list', resource: 'configmaps', status: 403, delayMs: 300 });
    let error: unknown;
    await op.start().catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/controller configmaps: caches did not sync: .*403/);
    await env.watchesOpen(0);
  });

  it('ES2: with stopOnInformerErrorDuringStartup false, start() waits out failing lists and runs once synced', async () => {
    const fault = env.server.faults.failRequests({ verb: 'list', resource: 'widgets', status: 500, count: 2 });
    await createWidget(env, widget('w1'));
    const op = env.operator();
    op.register(
      { reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { seen: true } }) },
      widgetConfig({ stopOnInformerErrorDuringStartup: false }),
    );
    await op.start();
    expect(fault.hits).to.equal(2);
    await eventually('w1 reconciled', async () => (await getWidget(env, 'w1'))?.status?.['seen'] === true);
  });
});
