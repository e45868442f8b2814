import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { kubernetesDependent, PRIMARY_NAME_ANNOTATION, PRIMARY_NAMESPACE_ANNOTATION } from '../../lib/index.js';
import { resourceDeleted } from '../../lib/workflow/index.js';
import {
  CONFIGMAPS,
  createWidget,
  deleteWidget,
  eventually,
  FINALIZER,
  getWidget,
  patchWidget,
  consistently,
  startEnv,
  widget,
  type Env,
  type Widget,
} from '../controller/fixtures.js';
import { configMapOf, countWrites, startWidgets, widgetWorkflow, type ConfigMap } from './helpers.js';

/** A ConfigMap named after the widget, holding its spec.value. */
function configDependent(
  options: { name?: string; suffix?: string; garbageCollected?: boolean; data?: (w: Widget) => Record<string, string> } = {},
) {
  const suffix = options.suffix ?? 'config';
  return kubernetesDependent<ConfigMap, Widget>({
    resource: CONFIGMAPS,
    ...(options.name ? { name: options.name } : {}),
    ...(options.garbageCollected === undefined ? {} : { garbageCollected: options.garbageCollected }),
    desired: (w) => ({
      metadata: { name: `${w.metadata!.name!}-${suffix}` },
      data: options.data ? options.data(w) : { value: w.spec?.value ?? '' },
    }),
  });
}

describe('dependent: kubernetesDependent against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  it('DR2: creates the secondary with server-side apply, owner reference and primary annotations', async () => {
    const writes = countWrites(env);
    await startWidgets(env, widgetWorkflow().add(configDependent()));
    const created = await createWidget(env, widget('w1', { value: 'a' }));
    const cm = await eventually('w1-config', () => configMapOf(env, 'w1-config'));
    expect(cm.data).to.deep.equal({ value: 'a' });
    expect(cm.metadata?.ownerReferences).to.deep.equal([
      {
        apiVersion: 'sample.rxkube.dev/v1',
        kind: 'Widget',
        name: 'w1',
        uid: created.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(cm.metadata?.annotations).to.include({ [PRIMARY_NAME_ANNOTATION]: 'w1', [PRIMARY_NAMESPACE_ANNOTATION]: 'default' });
    const managers = (cm.metadata?.managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
    expect(managers).to.deep.equal(['widgets.sample.rxkube.dev/Apply']);
    expect(writes.hits).to.equal(1);
  });

  it('DR2: no write when the actual secondary matches the desired one, over many runs', async () => {
    const writes = countWrites(env);
    const recorded = await startWidgets(env, widgetWorkflow().add(configDependent()), { rescheduleMs: 10 });
    await createWidget(env, widget('w1', { value: 'a' }));
    const cm = await eventually('w1-config', () => configMapOf(env, 'w1-config'));
    const runsBefore = recorded.results.length;
    await eventually('10 more runs', () => recorded.results.length >= runsBefore + 10);
    expect(writes.hits).to.equal(1);
    expect((await configMapOf(env, 'w1-config'))?.metadata?.resourceVersion).to.equal(cm.metadata?.resourceVersion);
    expect(recorded.last()?.dependent('configmaps').reconcileResult?.operation).to.equal('unchanged');
  });

  it('DR2: a drifted secondary is applied again; fields other managers added stay', async () => {
    await startWidgets(env, widgetWorkflow().add(configDependent()));
    await createWidget(env, widget('w1', { value: 'a' }));
    await eventually('w1-config', () => configMapOf(env, 'w1-config'));
    await env.configMaps.mergePatch(
      { name: 'w1-config', namespace: 'default' },
      { data: { value: 'hacked', extra: 'theirs' } },
      { fieldManager: 'someone' },
    );
    const restored = await eventually('value restored', async () => {
      const cm = await configMapOf(env, 'w1-config');
      return cm?.data?.['value'] === 'a' ? cm : undefined;
    });
    expect(restored.data).to.deep.equal({ value: 'a', extra: 'theirs' });
  });

  for (const fieldManager of [undefined, 'custom-manager']) {
    it(`DR2: a field the controller applied before and no longer desires is removed (managedFields, ${fieldManager ?? 'default'} field manager)`, async () => {
      const dependent = configDependent({
        data: (w): Record<string, string> => (w.spec?.value === 'a' ? { keep: 'k', old: 'o' } : { keep: 'k' }),
      });
      const recorded = await startWidgets(env, widgetWorkflow().add(dependent), fieldManager ? { fieldManager } : {});
      await createWidget(env, widget('w1', { value: 'a' }));
      const first = await eventually('w1-config with old', async () => {
        const found = await configMapOf(env, 'w1-config');
        return found?.data?.['old'] === 'o' ? found : undefined;
      });
      expect(first.metadata?.managedFields?.map((m) => m.manager)).to.include(fieldManager ?? 'widgets.sample.rxkube.dev');
      // The new desired state is a subset of the actual one: only field ownership tells it apart.
      await patchWidget(env, 'w1', { spec: { value: 'b' } });
      const cm = await eventually('old removed', async () => {
        const found = await configMapOf(env, 'w1-config');
        return found && found.data?.['old'] === undefined ? found : undefined;
      });
      expect(cm.data).to.deep.equal({ keep: 'k' });
      expect(recorded.results.some((r) => r.dependent('configmaps').reconcileResult?.operation === 'updated')).to.equal(true);
    });
  }

  it('WF2: a reconcile precondition that turns false deletes the dependent and those depending on it', async () => {
    const config = configDependent({ name: 'config' });
    const extra = configDependent({ name: 'extra', suffix: 'extra' });
    const flow = widgetWorkflow()
      .add(config, { reconcilePrecondition: (_d, w) => w.spec?.value !== 'off' })
      .add(extra, { dependsOn: config });
    const recorded = await startWidgets(env, flow);
    await createWidget(env, widget('w1', { value: 'on' }));
    await eventually('both config maps', async () => (await configMapOf(env, 'w1-config')) && (await configMapOf(env, 'w1-extra')));
    await patchWidget(env, 'w1', { spec: { value: 'off' } });
    await eventually(
      'both deleted',
      async () => (await configMapOf(env, 'w1-config')) === undefined && (await configMapOf(env, 'w1-extra')) === undefined,
    );
    const result = await eventually('a result with deletes', () => recorded.results.find((r) => r.deleteCalled.length === 2));
    expect(result.dependent('config').markedForDelete).to.equal(true);
    expect(result.dependent('extra').outcome).to.equal('deleted');
    expect((await getWidget(env, 'w1'))?.metadata?.finalizers).to.equal(undefined);
  });

  it('WF2, WF4: cleanup deletes non-GC dependents in reverse order, waiting on resourceDeleted', async () => {
    const base = configDependent({ name: 'base', suffix: 'base', garbageCollected: false });
    const top = configDependent({ name: 'top', suffix: 'top', garbageCollected: false });
    const flow = widgetWorkflow()
      .add(base, { deletePostcondition: resourceDeleted })
      .add(top, { dependsOn: base, deletePostcondition: resourceDeleted });
    await startWidgets(env, flow);
    await createWidget(env, widget('w1'));
    await eventually('both config maps', async () => (await configMapOf(env, 'w1-base')) && (await configMapOf(env, 'w1-top')));
    const w1 = await getWidget(env, 'w1');
    expect(w1?.metadata?.finalizers).to.deep.equal([FINALIZER]);
    const topCm = await configMapOf(env, 'w1-top');
    expect(topCm?.metadata?.ownerReferences).to.equal(undefined);
    // Someone else's finalizer holds 'top' on the server after the workflow deleted it.
    await env.configMaps.mergePatch(
      { name: 'w1-top', namespace: 'default' },
      { metadata: { finalizers: ['example.com/hold'] } },
      { fieldManager: 'someone' },
    );

    await deleteWidget(env, 'w1');
    await eventually('top terminating', async () => (await configMapOf(env, 'w1-top'))?.metadata?.deletionTimestamp !== undefined);
    await consistently(
      'base waits for top to be gone, and the finalizer stays',
      async () =>
        (await configMapOf(env, 'w1-base')) !== undefined &&
        JSON.stringify((await getWidget(env, 'w1'))?.metadata?.finalizers) === JSON.stringify([FINALIZER]),
    );

    await env.configMaps.mergePatch(
      { name: 'w1-top', namespace: 'default' },
      { metadata: { finalizers: null } },
      { fieldManager: 'someone' },
    );
    await eventually(
      'base deleted and w1 gone',
      async () => (await configMapOf(env, 'w1-base')) === undefined && (await getWidget(env, 'w1')) === undefined,
    );
  });

  it('DR1: garbage-collected dependents need no finalizer and go with the primary (server GC)', async () => {
    await startWidgets(env, widgetWorkflow().add(configDependent()));
    await createWidget(env, widget('w1'));
    await eventually('w1-config', () => configMapOf(env, 'w1-config'));
    expect((await getWidget(env, 'w1'))?.metadata?.finalizers).to.equal(undefined);
    await deleteWidget(env, 'w1');
    await eventually('w1-config collected', async () => (await configMapOf(env, 'w1-config')) === undefined);
  });

  it('DR3: two ConfigMap dependents of one primary share a source and each targets its own', async () => {
    const writes = countWrites(env);
    const first = configDependent({ name: 'first', suffix: 'first', data: (w) => ({ which: 'first', value: w.spec?.value ?? '' }) });
    const second = configDependent({ name: 'second', suffix: 'second', data: (w) => ({ which: 'second', value: w.spec?.value ?? '' }) });
    expect(first.eventSource.name).to.equal('configmaps');
    expect(second.eventSource.name).to.equal('configmaps');
    const recorded = await startWidgets(env, widgetWorkflow().add(first).add(second), { rescheduleMs: 10 });
    await createWidget(env, widget('w1', { value: 'a' }));
    await eventually('both', async () => (await configMapOf(env, 'w1-first')) && (await configMapOf(env, 'w1-second')));
    const runs = recorded.results.length;
    await eventually('5 more runs', () => recorded.results.length >= runs + 5);
    expect(writes.hits, 'one apply each, then nothing').to.equal(2);
    expect((await configMapOf(env, 'w1-first'))?.data).to.deep.equal({ which: 'first', value: 'a' });
    expect((await configMapOf(env, 'w1-second'))?.data).to.deep.equal({ which: 'second', value: 'a' });

    await env.configMaps.mergePatch({ name: 'w1-second', namespace: 'default' }, { data: { which: 'first' } }, { fieldManager: 'someone' });
    await eventually('second restored', async () => (await configMapOf(env, 'w1-second'))?.data?.['which'] === 'second');
    expect(writes.hits, 'the edit and one apply of second').to.equal(4);
    const last = recorded.last()!;
    expect((last.dependent('first').reconcileResult?.resource as ConfigMap).metadata?.name).to.equal('w1-first');
    expect((last.dependent('second').reconcileResult?.resource as ConfigMap).metadata?.name).to.equal('w1-second');
  });

  it('DR3: resourceId discriminates without computing desired; a read-only dependent is only read', async () => {
    let desiredCalls = 0;
    const owned = kubernetesDependent<ConfigMap, Widget>({
      name: 'owned',
      resource: CONFIGMAPS,
      resourceId: (w) => ({ name: `${w.metadata!.name!}-owned` }),
      desired: (w) => {
        desiredCalls++;
        return { metadata: { name: `${w.metadata!.name!}-owned` }, data: { v: '1' } };
      },
    });
    const settings = kubernetesDependent<ConfigMap, Widget>({
      name: 'settings',
      resource: CONFIGMAPS,
      readOnly: true,
      resourceId: () => ({ name: 'shared-settings' }),
    });
    expect(settings).to.not.have.any.keys('create', 'update', 'delete');
    expect(settings.eventSource.name).to.equal('configmaps:settings');
    const recorded = await startWidgets(env, widgetWorkflow().add(owned).add(settings), { reconciler: { handlesWorkflowErrors: true } });
    await createWidget(env, widget('w1'));
    await eventually('w1-owned', () => configMapOf(env, 'w1-owned'));
    await eventually('a result', () => recorded.last());
    expect(recorded.last()!.dependent('settings').reconcileResult).to.deep.include({ operation: 'skipped', reason: 'noCreate' });
    expect(await owned.targetId(widget('w1'), {} as never)).to.deep.equal({ name: 'w1-owned', namespace: 'default' });
    const calls = desiredCalls;
    const cached = [{ metadata: { name: 'w1-other', namespace: 'default' } }, { metadata: { name: 'w1-owned', namespace: 'default' } }];
    const ctx = {
      getSecondaryResources: () => cached,
      secondaryClient: () => {
        throw new Error('no writes');
      },
    } as never;
    expect(await owned.getSecondary!(widget('w1'), ctx)).to.equal(cached[1]);
    expect(desiredCalls, 'getSecondary did not compute desired').to.equal(calls);

    // A read-only dependent's object, created by someone else, maps back to the primary by id.
    await env.configMaps.create({ metadata: { name: 'shared-settings', namespace: 'default' }, data: { color: 'blue' } });
    const seen = await eventually('settings seen', () =>
      recorded.results.find((r) => r.dependent('settings').reconcileResult?.operation === 'unchanged'),
    );
    expect((seen.dependent('settings').reconcileResult?.resource as ConfigMap).data).to.deep.equal({ color: 'blue' });
  });

  it('bad input: a desired() that throws fails only its node; independent nodes still reconcile', async () => {
    const broken = kubernetesDependent<ConfigMap, Widget>({
      name: 'broken',
      resource: CONFIGMAPS,
      desired: () => {
        throw new Error('no template for this widget');
      },
    });
    const after = configDependent({ name: 'after', suffix: 'after' });
    const fine = configDependent({ name: 'fine', suffix: 'fine' });
    const recorded = await startWidgets(env, widgetWorkflow().add(broken).add(after, { dependsOn: broken }).add(fine));
    await createWidget(env, widget('w1'));
    await eventually('w1-fine', () => configMapOf(env, 'w1-fine'));
    const failed = await recorded.outcomes.until('w1', (os) => os.some((o) => o.result === 'failure'), 'a failed run');
    const error = failed.find((o) => o.result === 'failure')!.error as Error;
    expect(error.name).to.equal('AggregatedOperatorError');
    expect(error.message).to.contain("'broken': no template for this widget").and.not.contain("'fine'");
    expect(await configMapOf(env, 'w1-after')).to.equal(undefined);
  });

  it('bad input: a desired object of the wrong kind, or without a name, fails its node with a message naming it', async () => {
    const wrongKind = kubernetesDependent<ConfigMap, Widget>({
      name: 'wrong-kind',
      resource: CONFIGMAPS,
      desired: () => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }),
    });
    const noName = kubernetesDependent<ConfigMap, Widget>({ name: 'no-name', resource: CONFIGMAPS, desired: () => ({ data: {} }) });
    const recorded = await startWidgets(env, widgetWorkflow().add(wrongKind).add(noName), { reconciler: { handlesWorkflowErrors: true } });
    await createWidget(env, widget('w1'));
    const result = await eventually('a result', () => recorded.last());
    expect(String(result.dependent('wrong-kind').error)).to.contain(
      "dependent 'wrong-kind': desired() returned kind 'Secret', but the dependent's resource is ConfigMap",
    );
    expect(String(result.dependent('no-name').error)).to.contain(
      "dependent 'no-name': desired() returned a ConfigMap without metadata.name",
    );
  });
});

describe('dependent: kubernetesDependent options', () => {
  it('bad input: configuration errors name the option', () => {
    const attempt = (options: unknown) => () => kubernetesDependent(options as never);
    expect(attempt({ resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: '' }, desired: () => ({}) })).to.throw(
      ConfigurationError,
      /^kubernetesDependent\.resource\.plural: ConfigMap \(v1\) needs a plural/,
    );
    expect(attempt({ resource: CONFIGMAPS })).to.throw(ConfigurationError, /kubernetesDependent\(configmaps\)\.desired: is required/);
    expect(attempt({ resource: CONFIGMAPS, desired: 'x' })).to.throw(
      ConfigurationError,
      /kubernetesDependent\(configmaps\)\.desired: must be a function/,
    );
    expect(attempt({ resource: CONFIGMAPS, desired: () => ({}), ownerReference: false })).to.throw(
      ConfigurationError,
      /ownerReference: is false, but garbageCollected needs the owner reference/,
    );
    expect(attempt({ resource: CONFIGMAPS, readOnly: true })).to.throw(ConfigurationError, /a read-only dependent needs resourceId/);
    expect(attempt({ resource: CONFIGMAPS, desired: () => ({}), garbageCollected: 'no' })).to.throw(
      ConfigurationError,
      /garbageCollected: must be a boolean/,
    );
  });

  it('DR1: traits follow the options: GC dependents have delete (for false preconditions) but are not deletable on cleanup', () => {
    const gc = kubernetesDependent<ConfigMap, Widget>({ resource: CONFIGMAPS, desired: () => ({ metadata: { name: 'x' } }) });
    expect(gc.garbageCollected).to.equal(true);
    expect([typeof gc.create, typeof gc.update, typeof gc.delete]).to.deep.equal(['function', 'function', 'function']);
    const flow = widgetWorkflow().add(gc).build();
    expect(flow.needsFinalizer).to.equal(false);
    const noGc = kubernetesDependent<ConfigMap, Widget>({
      resource: CONFIGMAPS,
      garbageCollected: false,
      desired: () => ({ metadata: { name: 'x' } }),
    });
    expect(widgetWorkflow().add(noGc).build().needsFinalizer).to.equal(true);
    expect(noGc.eventSource).to.include({ name: 'configmaps' });
  });

  it('bad input: an owner reference across namespaces is refused with a hint', async () => {
    const dependent = kubernetesDependent<ConfigMap, Widget>({
      name: 'elsewhere',
      resource: CONFIGMAPS,
      desired: () => ({ metadata: { name: 'x', namespace: 'other' } }),
    });
    const primary = { ...widget('w1'), metadata: { name: 'w1', namespace: 'default', uid: 'u1' } };
    let error: unknown;
    try {
      await dependent.desired!(primary, {} as never);
    } catch (err) {
      error = err;
    }
    expect(String(error))
      .to.contain("ConfigMap 'x' in namespace 'other' cannot be owned by Widget default/w1")
      .and.contain('set garbageCollected: false');
  });
});
