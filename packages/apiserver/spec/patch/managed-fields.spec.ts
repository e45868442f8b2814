import { expect } from 'chai';
import { applyConflictError, serverSideApply, trackUpdate, type ApplyArgs } from '../../src/patch/apply.js';
import { describeFieldsV1, type ManagedFieldsEntry } from '../../src/patch/managed-fields.js';
import { PatchError } from '../../src/patch/errors.js';
import { typeInfoFor } from '../../src/patch/schema.js';
import { deepClone, type JsonObject } from '../../src/base/json.js';

const deploymentType = typeInfoFor('apps', 'Deployment')!;
const T0 = '2024-05-01T10:00:00Z';
const T1 = '2024-05-01T10:05:00Z';
const T2 = '2024-05-01T10:10:00Z';

function config(spec: JsonObject, labels: JsonObject = { app: 'web' }): JsonObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', labels }, spec };
}

function webSpec(overrides: { replicas?: number; containers?: JsonObject[] } = {}): JsonObject {
  return {
    replicas: overrides.replicas ?? 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: overrides.containers ?? [{ name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
    },
  };
}

function apply(live: JsonObject | undefined, applied: JsonObject, manager: string, extra: Partial<ApplyArgs> = {}) {
  return serverSideApply({ live, applied, manager, force: false, apiVersion: 'apps/v1', now: T0, type: deploymentType, ...extra });
}

function applied(live: JsonObject | undefined, cfg: JsonObject, manager: string, extra: Partial<ApplyArgs> = {}): JsonObject {
  const result = apply(live, cfg, manager, extra);
  if (!result.ok) throw new Error(`unexpected conflicts: ${JSON.stringify(result.conflicts)}`);
  return result.object;
}

function managedFields(obj: JsonObject): ManagedFieldsEntry[] {
  return ((obj['metadata'] as JsonObject)['managedFields'] ?? []) as unknown as ManagedFieldsEntry[];
}

function entry(obj: JsonObject, manager: string, operation: 'Apply' | 'Update' = 'Apply'): ManagedFieldsEntry {
  const found = managedFields(obj).find((e) => e.manager === manager && e.operation === operation);
  if (!found) throw new Error(`no ${operation} entry for ${manager} in ${JSON.stringify(managedFields(obj))}`);
  return found;
}

function owned(obj: JsonObject, manager: string, operation: 'Apply' | 'Update' = 'Apply'): string[] {
  return describeFieldsV1(entry(obj, manager, operation).fieldsV1);
}

function containers(obj: JsonObject): JsonObject[] {
  return (((obj['spec'] as JsonObject)['template'] as JsonObject)['spec'] as JsonObject)['containers'] as JsonObject[];
}

function patchError(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PatchError);
    return err as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('apiserver/patch server-side apply', () => {
  describe('create', () => {
    it('creates the object and records the Apply field set exactly as Kubernetes writes it', () => {
      const obj = applied(undefined, config(webSpec()), 'kubectl');
      expect(obj['spec']).to.deep.equal(webSpec());
      expect((obj['metadata'] as JsonObject)['labels']).to.deep.equal({ app: 'web' });
      const entries = managedFields(obj);
      expect(entries).to.have.length(1);
      const [only] = entries as [ManagedFieldsEntry];
      expect({ ...only, fieldsV1: undefined }).to.deep.equal({
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: undefined,
      });
      expect(JSON.stringify(only.fieldsV1)).to.equal(
        JSON.stringify({
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"web"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                  },
                },
              },
            },
          },
        }),
      );
    });

    it('never tracks apiVersion, kind or identity metadata, and ignores uid/resourceVersion in the config', () => {
      const cfg = config(webSpec());
      (cfg['metadata'] as JsonObject)['uid'] = 'client-made-up';
      (cfg['metadata'] as JsonObject)['resourceVersion'] = '42';
      const obj = applied(undefined, cfg, 'kubectl');
      expect(obj['metadata']).to.not.have.property('uid');
      expect(obj['metadata']).to.not.have.property('resourceVersion');
      expect((obj['metadata'] as JsonObject)['name']).to.equal('web');
      const paths = owned(obj, 'kubectl');
      expect(
        paths.filter((p) => /^\.(apiVersion|kind)$|^\.metadata\.(name|namespace|uid|resourceVersion)$|^\.metadata$/.test(p)),
      ).to.deep.equal([]);
    });

    it('rejects metadata.managedFields in the config (400), and lists it cannot key (422)', () => {
      const withManaged = config(webSpec());
      (withManaged['metadata'] as JsonObject)['managedFields'] = [];
      const err = patchError(() => apply(undefined, withManaged, 'kubectl'));
      expect(err.code).to.equal(400);
      expect(err.message).to.equal('metadata.managedFields must be nil');

      const duplicate = patchError(() => apply(undefined, config(webSpec({ containers: [{ name: 'a' }, { name: 'a' }] })), 'kubectl'));
      expect(duplicate.code).to.equal(422);
      expect(duplicate.message).to.contain('.spec.template.spec.containers').and.contain('duplicate entries for key [name="a"]');

      const nameless = patchError(() => apply(undefined, config(webSpec({ containers: [{ image: 'x' }] })), 'kubectl'));
      expect(nameless.code).to.equal(422);
      expect(nameless.message).to.contain('no key field "name"');
    });
  });

  describe('re-apply', () => {
    it('an identical re-apply changes nothing, not even the timestamp', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const again = applied(live, config(webSpec()), 'kubectl', { now: T1 });
      expect(again).to.deep.equal(live);
    });

    it('a changing re-apply updates the object and the timestamp', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const next = applied(live, config(webSpec({ replicas: 3 })), 'kubectl', { now: T1 });
      expect((next['spec'] as JsonObject)['replicas']).to.equal(3);
      expect(entry(next, 'kubectl').time).to.equal(T1);
      expect(owned(next, 'kubectl')).to.deep.equal(owned(live, 'kubectl'));
    });
  });

  describe('two managers', () => {
    it('own different fields side by side', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const next = applied(
        live,
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { team: 'a' } } },
        'labeller',
        { now: T1 },
      );
      expect((next['metadata'] as JsonObject)['labels']).to.deep.equal({ app: 'web', team: 'a' });
      expect(owned(next, 'labeller')).to.deep.equal(['.metadata.labels.team']);
      expect(owned(next, 'kubectl')).to.include('.metadata.labels.app').and.not.include('.metadata.labels.team');
      expect(managedFields(next).map((e) => e.manager)).to.deep.equal(['kubectl', 'labeller']);
    });

    it('changing a field another manager owns is a conflict; the object is not touched', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const result = apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 5 } }, 'scaler');
      expect(result).to.deep.equal({
        ok: false,
        conflicts: [{ manager: 'kubectl', field: '.spec.replicas', operation: 'Apply', apiVersion: 'apps/v1' }],
      });
    });

    it('setting the same value is not a conflict: ownership is shared', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const next = applied(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } }, 'scaler');
      expect(owned(next, 'scaler')).to.deep.equal(['.spec.replicas']);
      expect(owned(next, 'kubectl')).to.include('.spec.replicas');
      // Now either co-owner changing it conflicts with the other.
      const change = apply(next, config(webSpec({ replicas: 4 })), 'kubectl', { now: T1 });
      expect(change.ok).to.equal(false);
      if (!change.ok) expect(change.conflicts.map((c) => `${c.manager} ${c.field}`)).to.deep.equal(['scaler .spec.replicas']);
    });

    it('force takes ownership away from the other manager', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const next = applied(
        live,
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 5 } },
        'scaler',
        {
          force: true,
          now: T1,
        },
      );
      expect((next['spec'] as JsonObject)['replicas']).to.equal(5);
      expect(owned(next, 'scaler')).to.deep.equal(['.spec.replicas']);
      expect(owned(next, 'kubectl')).to.not.include('.spec.replicas');
      // kubectl applying its old value now conflicts with scaler.
      const back = apply(next, config(webSpec()), 'kubectl', { now: T2 });
      expect(back.ok).to.equal(false);
      if (!back.ok) expect(back.conflicts.map((c) => `${c.manager} ${c.field}`)).to.deep.equal(['scaler .spec.replicas']);
    });

    it('conflicts on keyed list items name the item', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const result = apply(live, config(webSpec({ containers: [{ name: 'web', image: 'nginx:2' }] })), 'other');
      expect(result.ok).to.equal(false);
      if (!result.ok) expect(result.conflicts.map((c) => c.field)).to.deep.equal(['.spec.template.spec.containers[name="web"].image']);
    });
  });

  describe('fields dropped from the applied config', () => {
    it('disappear when only the applier owned them', () => {
      const live = applied(undefined, config(webSpec(), { app: 'web', tier: 'fe' }), 'kubectl');
      const next = applied(live, config(webSpec()), 'kubectl', { now: T1 });
      expect((next['metadata'] as JsonObject)['labels']).to.deep.equal({ app: 'web' });
      expect(owned(next, 'kubectl')).to.not.include('.metadata.labels.tier');
      expect(entry(next, 'kubectl').time).to.equal(T1);
    });

    it('stay when another manager co-owns them', () => {
      const live = applied(undefined, config(webSpec(), { app: 'web', tier: 'fe' }), 'kubectl');
      const shared = applied(
        live,
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { tier: 'fe' } } },
        'other',
      );
      const next = applied(shared, config(webSpec()), 'kubectl', { now: T1 });
      expect((next['metadata'] as JsonObject)['labels']).to.deep.equal({ app: 'web', tier: 'fe' });
      expect(owned(next, 'other')).to.deep.equal(['.metadata.labels.tier']);
    });

    it('a map emptied by pruning is removed', () => {
      const live = applied(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }, 'kubectl', {
        type: typeInfoFor('', 'ConfigMap'),
      });
      const next = applied(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, 'kubectl', {
        type: typeInfoFor('', 'ConfigMap'),
        now: T1,
      });
      expect(next).to.not.have.property('data');
      expect(next['metadata']).to.not.have.property('managedFields');
    });

    it('a list item disappears when solely owned and stays when co-owned', () => {
      const two = webSpec({
        containers: [
          { name: 'web', image: 'nginx:1' },
          { name: 'side', image: 'side:1' },
        ],
      });
      const live = applied(undefined, config(two), 'kubectl');
      const solo = applied(live, config(webSpec({ containers: [{ name: 'web', image: 'nginx:1' }] })), 'kubectl', { now: T1 });
      expect(containers(solo).map((c) => c['name'])).to.deep.equal(['web']);
      expect(owned(solo, 'kubectl').filter((p) => p.includes('side'))).to.deep.equal([]);

      const coOwned = applied(live, config(webSpec({ containers: [{ name: 'side', image: 'side:1' }] })), 'sidecar-injector');
      const kept = applied(coOwned, config(webSpec({ containers: [{ name: 'web', image: 'nginx:1' }] })), 'kubectl', { now: T1 });
      expect(containers(kept)).to.deep.equal([
        { name: 'web', image: 'nginx:1' },
        { name: 'side', image: 'side:1' },
      ]);
    });
  });

  describe('list items dropped from the applied config', () => {
    const two = () =>
      webSpec({
        containers: [
          { name: 'web', image: 'nginx:1' },
          { name: 'side', image: 'side:1' },
        ],
      });

    it('go even if another manager owns a field inside them (it does not own the item)', () => {
      const live = applied(undefined, config(two()), 'kubectl');
      const edited = deepClone(live);
      containers(edited)[1]['image'] = 'side:2';
      (edited['metadata'] as JsonObject)['managedFields'] = trackUpdate(
        { old: live, updated: edited, manager: 'editor', apiVersion: 'apps/v1', now: T1 },
        deploymentType,
      ) as unknown as JsonObject[];
      expect(owned(edited, 'editor', 'Update')).to.deep.equal(['.spec.template.spec.containers[name="side"].image']);
      const next = applied(edited, config(webSpec({ containers: [{ name: 'web', image: 'nginx:1' }] })), 'kubectl', { now: T2 });
      expect(containers(next).map((c) => c['name'])).to.deep.equal(['web']);
    });

    it('stay with their key fields when another manager owns the item itself', () => {
      const live = applied(undefined, config(two()), 'kubectl');
      const entries = managedFields(live);
      const withOwner = deepClone(live);
      (withOwner['metadata'] as JsonObject)['managedFields'] = [
        ...entries,
        {
          manager: 'owner',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: T0,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"side"}': {} } } } } },
        },
      ] as unknown as JsonObject[];
      const next = applied(withOwner, config(webSpec({ containers: [{ name: 'web', image: 'nginx:1' }] })), 'kubectl', { now: T1 });
      expect(containers(next)).to.deep.equal([{ name: 'web', image: 'nginx:1' }, { name: 'side' }]);
    });
  });

  describe('keyed lists', () => {
    it('merge items by name; each manager owns its items', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const withSidecar = applied(live, config(webSpec({ containers: [{ name: 'sidecar', image: 'envoy:1' }] })), 'injector');
      expect(containers(withSidecar)).to.deep.equal([
        { name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }] },
        { name: 'sidecar', image: 'envoy:1' },
      ]);
      expect(owned(withSidecar, 'injector').filter((p) => p.includes('containers'))).to.deep.equal([
        '.spec.template.spec.containers[name="sidecar"]',
        '.spec.template.spec.containers[name="sidecar"].image',
        '.spec.template.spec.containers[name="sidecar"].name',
      ]);
      // kubectl re-applying its own list does not remove the injector's container.
      const again = applied(withSidecar, config(webSpec()), 'kubectl', { now: T1 });
      expect(containers(again).map((c) => c['name'])).to.deep.equal(['web', 'sidecar']);
    });

    it('merge the fields of a shared item', () => {
      const live = applied(undefined, config(webSpec()), 'kubectl');
      const next = applied(live, config(webSpec({ containers: [{ name: 'web', env: [{ name: 'A', value: '1' }] }] })), 'env-injector');
      expect(containers(next)).to.deep.equal([
        { name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] },
      ]);
    });

    it('follow the order of the applied list for shared items and keep live-only items in place', () => {
      const three = webSpec({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
      const live = applied(undefined, config(three), 'kubectl');
      const next = applied(live, config(webSpec({ containers: [{ name: 'c' }, { name: 'a' }, { name: 'b' }, { name: 'd' }] })), 'kubectl', {
        now: T1,
      });
      expect(containers(next).map((c) => c['name'])).to.deep.equal(['c', 'a', 'b', 'd']);
    });

    it('Service ports are keyed by port and protocol, protocol defaulting to TCP', () => {
      const serviceType = typeInfoFor('', 'Service');
      const svc = (ports: JsonObject[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports } });
      const live = applied(undefined, svc([{ port: 80, targetPort: 8080 }]), 'kubectl', { type: serviceType, apiVersion: 'v1' });
      expect(owned(live, 'kubectl')).to.deep.equal([
        '.spec.ports[port=80,protocol="TCP"]',
        '.spec.ports[port=80,protocol="TCP"].port',
        '.spec.ports[port=80,protocol="TCP"].targetPort',
      ]);
      const next = applied(live, svc([{ port: 80, protocol: 'UDP' }]), 'other', { type: serviceType, apiVersion: 'v1' });
      expect((next['spec'] as JsonObject)['ports']).to.deep.equal([
        { port: 80, targetPort: 8080 },
        { port: 80, protocol: 'UDP' },
      ]);
    });
  });

  describe('custom resources (no TypeInfo)', () => {
    const cr = (spec: JsonObject): JsonObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec });
    const crApply = (live: JsonObject | undefined, cfg: JsonObject, manager: string, force = false) =>
      serverSideApply({ live, applied: cfg, manager, force, apiVersion: 'example.com/v1', now: T0, type: undefined });

    it('maps are granular, lists are atomic', () => {
      const first = crApply(undefined, cr({ size: 1, items: ['a', 'b'] }), 'm1');
      if (!first.ok) throw new Error('conflict');
      expect(JSON.stringify(managedFields(first.object)[0].fieldsV1)).to.equal('{"f:spec":{"f:items":{},"f:size":{}}}');
      const second = crApply(first.object, cr({ color: 'red' }), 'm2');
      expect(second.ok).to.equal(true);
      const conflict = crApply(first.object, cr({ items: ['c'] }), 'm2');
      expect(conflict.ok).to.equal(false);
      if (!conflict.ok) expect(conflict.conflicts.map((c) => c.field)).to.deep.equal(['.spec.items']);
      const forced = crApply(first.object, cr({ items: ['c'] }), 'm2', true);
      if (!forced.ok) throw new Error('conflict');
      expect(forced.object['spec']).to.deep.equal({ size: 1, items: ['c'] });
    });
  });

  describe('sets (finalizers)', () => {
    it('own each value; a value dropped by its only owner goes', () => {
      const meta = (finalizers: string[]): JsonObject => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', finalizers },
      });
      const a = applied(undefined, meta(['example.com/a']), 'm1');
      const ab = applied(a, meta(['example.com/b']), 'm2');
      expect((ab['metadata'] as JsonObject)['finalizers']).to.deep.equal(['example.com/a', 'example.com/b']);
      expect(JSON.stringify(entry(ab, 'm1').fieldsV1)).to.equal('{"f:metadata":{"f:finalizers":{"v:\\"example.com/a\\"":{}}}}');
      const b = applied(ab, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { x: 'y' } } }, 'm1', {
        now: T1,
      });
      expect((b['metadata'] as JsonObject)['finalizers']).to.deep.equal(['example.com/b']);
    });
  });

  it('null in the config removes the field but keeps it owned', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl');
    const cfg = config(webSpec());
    (cfg['spec'] as JsonObject)['replicas'] = null;
    const next = applied(live, cfg, 'kubectl', { now: T1 });
    expect(next['spec']).to.not.have.property('replicas');
    expect(owned(next, 'kubectl')).to.include('.spec.replicas');
  });

  it('keeps subresource entries apart and orders Apply entries before Update entries', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl', { now: T1 });
    const withStatus = applied(
      live,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, status: { replicas: 2 } },
      'kubectl',
      {
        subresource: 'status',
        now: T0,
      },
    );
    const entries = managedFields(withStatus);
    expect(entries.map((e) => [e.manager, e.operation, e.subresource ?? ''])).to.deep.equal([
      ['kubectl', 'Apply', 'status'],
      ['kubectl', 'Apply', ''],
    ]);
    const updatedEntries = trackUpdate(
      {
        old: withStatus,
        updated: { ...deepClone(withStatus), spec: { ...(withStatus['spec'] as JsonObject), paused: true } },
        manager: 'a-editor',
        apiVersion: 'apps/v1',
        now: T0,
      },
      deploymentType,
    );
    expect(updatedEntries.map((e) => [e.manager, e.operation])).to.deep.equal([
      ['kubectl', 'Apply'],
      ['kubectl', 'Apply'],
      ['a-editor', 'Update'],
    ]);
  });

  it('applyConflictError reads like the Kubernetes message', () => {
    const one = applyConflictError([{ manager: 'kubectl', field: '.spec.replicas', operation: 'Apply', apiVersion: 'apps/v1' }]);
    expect(one.code).to.equal(409);
    expect(one.message).to.equal('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    expect(one.causes).to.deep.equal([{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' }]);
    const two = applyConflictError([
      { manager: 'hpa', field: '.spec.replicas', operation: 'Update', apiVersion: 'apps/v1' },
      { manager: 'hpa', field: '.spec.paused', operation: 'Update', apiVersion: 'apps/v1', subresource: 'scale' },
    ]);
    expect(two.message).to.equal(
      'Apply failed with 2 conflicts: conflicts with "hpa" using apps/v1:\n- .spec.replicas\nconflicts with "hpa" with subresource "scale" using apps/v1:\n- .spec.paused',
    );
  });
});

describe('apiserver/patch trackUpdate', () => {
  const track = (old: JsonObject | undefined, updated: JsonObject, manager: string, now = T1, subresource?: string) =>
    trackUpdate({ old, updated, manager, apiVersion: 'apps/v1', now, ...(subresource ? { subresource } : {}) }, deploymentType);

  function withEntries(obj: JsonObject, entries: ManagedFieldsEntry[]): JsonObject {
    const copy = deepClone(obj);
    (copy['metadata'] as JsonObject)['managedFields'] = entries as unknown as JsonObject[];
    return copy;
  }

  it('a create records what the write set, in the Update shape of a real server', () => {
    const created = config(webSpec());
    const entries = track(undefined, created, 'kubectl-create', T0);
    expect(entries).to.have.length(1);
    expect(entries[0]).to.include({
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: T0,
      fieldsType: 'FieldsV1',
    });
    expect(JSON.stringify(entries[0].fieldsV1)).to.equal(
      JSON.stringify({
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"web"}': {
                  '.': {},
                  'f:image': {},
                  'f:name': {},
                  'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                },
              },
            },
          },
        },
      }),
    );
  });

  it('a custom resource create owns the new spec node itself, as on a real server', () => {
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' } },
      spec: { size: 1, items: ['x'] },
    };
    const entries = trackUpdate(
      { old: undefined, updated: widget, manager: 'controller', apiVersion: 'example.com/v1', now: T0 },
      undefined,
    );
    expect(JSON.stringify(entries[0].fieldsV1)).to.equal(
      '{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:items":{},"f:size":{}}}',
    );
  });

  it('takes ownership away from an applier; the applier then conflicts with the updater', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl');
    const scaled = deepClone(live);
    (scaled['spec'] as JsonObject)['replicas'] = 5;
    const entries = track(live, scaled, 'hpa');
    expect(entries.map((e) => `${e.operation}:${e.manager}`)).to.deep.equal(['Apply:kubectl', 'Update:hpa']);
    expect(JSON.stringify(entries[1].fieldsV1)).to.equal('{"f:spec":{"f:replicas":{}}}');
    expect(entries[1].time).to.equal(T1);
    expect(describeFieldsV1(entries[0].fieldsV1)).to.not.include('.spec.replicas');
    expect(entries[0].time).to.equal(T0);

    const stored = withEntries(scaled, entries);
    const result = apply(stored, config(webSpec()), 'kubectl', { now: T2 });
    expect(result.ok).to.equal(false);
    if (!result.ok) {
      expect(result.conflicts).to.deep.equal([{ manager: 'hpa', field: '.spec.replicas', operation: 'Update', apiVersion: 'apps/v1' }]);
      expect(applyConflictError(result.conflicts).message).to.equal(
        'Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas',
      );
    }
  });

  it('a write that changes nothing leaves the entries untouched', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl');
    expect(track(live, deepClone(live), 'someone', T2)).to.deep.equal(managedFields(live));
  });

  it("merges with the same manager's earlier Update entry and refreshes its time", () => {
    const created = withEntries(config(webSpec()), track(undefined, config(webSpec()), 'editor', T0));
    const edited = deepClone(created);
    (edited['spec'] as JsonObject)['paused'] = true;
    const entries = track(created, edited, 'editor', T2);
    expect(entries).to.have.length(1);
    expect(entries[0].time).to.equal(T2);
    expect(describeFieldsV1(entries[0].fieldsV1)).to.include('.spec.paused').and.include('.spec.replicas');
  });

  it('a removed field leaves every set; an emptied entry is dropped', () => {
    const live = applied(
      undefined,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { tier: 'fe' } } },
      'labeller',
    );
    const removed = deepClone(live);
    delete (removed['metadata'] as JsonObject)['labels'];
    expect(track(live, removed, 'cleaner')).to.deep.equal([]);
  });

  it('status writes are recorded with their subresource', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl');
    const withStatus = { ...deepClone(live), status: { readyReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] } };
    const entries = track(live, withStatus, 'controller', T1, 'status');
    const status = entries.find((e) => e.manager === 'controller')!;
    expect(status.subresource).to.equal('status');
    // Deployment status is a non-pointer struct in Go, so the write does not own `.status` itself.
    expect(describeFieldsV1(status.fieldsV1)).to.deep.equal([
      '.status.conditions',
      '.status.conditions[type="Available"]',
      '.status.conditions[type="Available"].status',
      '.status.conditions[type="Available"].type',
      '.status.readyReplicas',
    ]);
  });

  it('managedFields sent by the client replace the stored ones; [{}] clears them', () => {
    const live = applied(undefined, config(webSpec()), 'kubectl');
    const cleared = deepClone(live);
    (cleared['metadata'] as JsonObject)['managedFields'] = [{}];
    expect(track(live, cleared, 'kubectl-edit')).to.deep.equal([]);

    const emptyList = deepClone(live);
    (emptyList['metadata'] as JsonObject)['managedFields'] = [];
    expect(track(live, emptyList, 'kubectl-edit')).to.deep.equal(managedFields(live));

    const bad = deepClone(live);
    (bad['metadata'] as JsonObject)['managedFields'] = [
      { manager: 'x', operation: 'Delete', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
    ];
    const err = patchError(() => track(live, bad, 'kubectl-edit'));
    expect(err.code).to.equal(422);
    expect(err.message).to.contain('"Delete"');
  });
});
