/**
 * Validation of custom resources and of CRDs as the real server does it (issue 14): CEL rules,
 * formats, list types in validation and server-side apply, per-version schemas, the CRD's own
 * schema rules and unknown fields. Each case holds on a real cluster the same way.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { failure, kubectlAvailable, raw, startWithClients, type Clients } from './helpers.js';

const run = promisify(execFile);

const WIDGET_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.min <= self.max', message: 'min must be <= max' },
        {
          rule: '!has(self.name) || self.name.lowerAscii() == self.name',
          messageExpression: "'name must be lower case, not ' + self.name",
          reason: 'FieldValueForbidden',
          fieldPath: '.name',
        },
      ],
      properties: {
        min: { type: 'integer', default: 0 },
        max: { type: 'integer', default: 10 },
        name: { type: 'string', maxLength: 63 },
        when: { type: 'string', format: 'date-time' },
        mode: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }] },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: {
            type: 'object',
            required: ['port'],
            properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, name: { type: 'string' } },
          },
        },
      },
    },
    status: {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: {
            type: 'object',
            required: ['type', 'status'],
            properties: { type: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' } },
          },
        },
      },
    },
  },
};

function crd(name: string, group: string, kind: string, versions: unknown[]): Record<string, unknown> {
  const plural = name.split('.')[0];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group, scope: 'Namespaced', names: { plural, kind }, versions },
  };
}

/** A CRD of one version (v1) whose spec has schema `spec`. */
function specCrd(plural: string, kind: string, spec: Record<string, unknown>): Record<string, unknown> {
  return crd(`${plural}.valid.rxkube.dev`, 'valid.rxkube.dev', kind, [
    { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } },
  ]);
}

const WIDGETS = crd('widgets.valid.rxkube.dev', 'valid.rxkube.dev', 'Widget', [
  { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: WIDGET_SCHEMA } },
]);

/** v1alpha1 keeps any spec field and has no bounds; v1 (storage) knows only `size`, at most 10, and defaults `replicas`. */
const GAUGES = crd('gauges.valid.rxkube.dev', 'valid.rxkube.dev', 'Gauge', [
  {
    name: 'v1alpha1',
    served: true,
    storage: false,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
  },
  {
    name: 'v1',
    served: true,
    storage: true,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { size: { type: 'integer', maximum: 10 }, replicas: { type: 'integer', default: 1 } } },
        },
      },
    },
  },
]);

const WIDGET_PATH = '/apis/valid.rxkube.dev/v1/namespaces/default/widgets';

describe('apiserver: CRD validation as the real server does it (issue 14)', () => {
  let c: Clients;
  const g = { group: 'valid.rxkube.dev', version: 'v1', namespace: 'default', plural: 'widgets' };
  const widget = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'valid.rxkube.dev/v1',
    kind: 'Widget',
    metadata: { name },
    spec,
  });
  const create = (name: string, spec: Record<string, unknown>) => c.custom.createNamespacedCustomObject({ ...g, body: widget(name, spec) });
  const causesOf = (status: Record<string, unknown>) => (status.details as { causes: unknown[] }).causes;
  /**
   * CRDs go as JSON, as kubectl sends them: client-node's typed serializer only knows the
   * TypeScript spellings (x_kubernetes_validations) and drops the JSON ones.
   */
  const postCrd = async (body: unknown): Promise<void> => {
    const res = await raw(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(body));
    if (res.status !== 201) throw new Error(`CRD not created: ${res.text}`);
  };
  const refusedCrd = async (body: unknown): Promise<{ code: number; status: Record<string, unknown> }> => {
    const res = await raw(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(body));
    return { code: res.status, status: res.json as Record<string, unknown> };
  };

  before(async () => {
    c = await startWithClients();
    await postCrd(WIDGETS);
    await postCrd(GAUGES);
  });
  after(async () => {
    await c.server.close();
  });

  describe('x-kubernetes-validations (CEL)', () => {
    it('rejects min > max with the rule message, on the field that declares the rule', async () => {
      const { code, status } = await failure(create('w-minmax', { min: 5, max: 1 }));
      expect(code).to.equal(422);
      expect(status.message).to.equal('Widget.valid.rxkube.dev "w-minmax" is invalid: spec: Invalid value: "object": min must be <= max');
      expect(causesOf(status)).to.deep.equal([
        { reason: 'FieldValueInvalid', message: 'Invalid value: "object": min must be <= max', field: 'spec' },
      ]);
      await create('w-ok', { min: 1, max: 5 });
    });

    it('takes rules from a CRD created with client-node in its TypeScript spelling (x_kubernetes_validations)', async () => {
      const spec = {
        type: 'object',
        x_kubernetes_validations: [{ rule: 'self.from <= self.to', message: 'from must be <= to' }],
        properties: { from: { type: 'integer' }, to: { type: 'integer' } },
      };
      await c.ext.createCustomResourceDefinition({ body: specCrd('ranges', 'Range', spec) as never });
      const ranges = { group: 'valid.rxkube.dev', version: 'v1', namespace: 'default', plural: 'ranges' };
      const body = { apiVersion: 'valid.rxkube.dev/v1', kind: 'Range', metadata: { name: 'r' }, spec: { from: 3, to: 1 } };
      const { status } = await failure(c.custom.createNamespacedCustomObject({ ...ranges, body }));
      expect(status.message).to.equal('Range.valid.rxkube.dev "r" is invalid: spec: Invalid value: "object": from must be <= to');
    });

    it('reports a rule of the root schema on the field "<nil>", as Go prints a nil field path', async () => {
      const rooted = crd('roots.valid.rxkube.dev', 'valid.rxkube.dev', 'Root', [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('r-')", message: 'name must start with r-' }],
              properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          },
        },
      ]);
      await postCrd(rooted);
      const roots = { group: 'valid.rxkube.dev', version: 'v1', namespace: 'default', plural: 'roots' };
      const { status } = await failure(
        c.custom.createNamespacedCustomObject({
          ...roots,
          body: { apiVersion: 'valid.rxkube.dev/v1', kind: 'Root', metadata: { name: 'x' } },
        }),
      );
      expect(status.message).to.equal('Root.valid.rxkube.dev "x" is invalid: <nil>: Invalid value: "object": name must start with r-');
      await c.custom.createNamespacedCustomObject({
        ...roots,
        body: { apiVersion: 'valid.rxkube.dev/v1', kind: 'Root', metadata: { name: 'r-x' } },
      });
    });

    it('evaluates rules on the defaulted object (defaults min 0, max 10)', async () => {
      await create('w-defaults', {});
      expect(await failure(create('w-default-max', { min: 11 }))).to.have.property('code', 422);
    });

    it('uses messageExpression, reason and fieldPath', async () => {
      const { status } = await failure(create('w-name', { name: 'Big' }));
      expect(causesOf(status)).to.deep.equal([
        { reason: 'FieldValueForbidden', message: 'Forbidden: name must be lower case, not Big', field: 'spec.name' },
      ]);
    });

    it('evaluates transition rules (oldSelf) on update only', async () => {
      const created = (await create('w-mode', { mode: 'fast' })) as { metadata: { resourceVersion: string } };
      const { code, status } = await failure(
        c.custom.replaceNamespacedCustomObject({
          ...g,
          name: 'w-mode',
          body: { ...widget('w-mode', { mode: 'slow' }), metadata: { name: 'w-mode', resourceVersion: created.metadata.resourceVersion } },
        }),
      );
      expect(code).to.equal(422);
      expect(causesOf(status)).to.deep.equal([
        { reason: 'FieldValueInvalid', message: 'Invalid value: "string": mode is immutable', field: 'spec.mode' },
      ]);
    });

    it('refuses a CRD whose rule does not compile, or names what the environment does not declare', async () => {
      const bad = (rule: string) => specCrd('bads', 'Bad', { type: 'object', 'x-kubernetes-validations': [{ rule }] });
      const syntax = await refusedCrd(bad('self.min <='));
      expect(syntax.code).to.equal(422);
      const [cause] = causesOf(syntax.status) as { field: string; message: string }[];
      expect(cause?.field).to.equal('spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule');
      expect(cause?.message).to.match(
        /^Invalid value: apiextensions\.ValidationRule\{Rule:"self\.min <=", .*\}: compilation failed: ERROR: /,
      );
      const undeclared = await refusedCrd(bad('size == 1'));
      expect((causesOf(undeclared.status)[0] as { message: string }).message).to.contain(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'size' (in container '')",
      );
    });

    it('refuses a rule whose estimated cost exceeds the per-rule budget (nested loops over unbounded lists)', async () => {
      const list: Record<string, unknown> = { type: 'array', items: { type: 'string' } };
      const costly = specCrd('costlies', 'Costly', {
        type: 'object',
        properties: { l: list },
        'x-kubernetes-validations': [{ rule: 'self.l.all(x, self.l.all(y, x == y))' }],
      });
      const { code, status } = await refusedCrd(costly);
      expect(code).to.equal(422);
      expect((causesOf(status)[0] as { message: string }).message).to.match(/^Forbidden: estimated rule cost exceeds budget by factor of /);
      // Bounded by maxItems, the same rule is cheap enough.
      list.maxItems = 100;
      await postCrd(costly);
    });
  });

  describe('formats', () => {
    it('rejects "not-a-date" for a date-time field and accepts an RFC 3339 time', async () => {
      const { status } = await failure(create('w-when', { when: 'not-a-date' }));
      expect(causesOf(status)).to.deep.equal([
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "not-a-date": spec.when in body must be of type date-time: "not-a-date"',
          field: 'spec.when',
        },
      ]);
      await create('w-when', { when: '2026-11-24T01:02:03Z' });
    });
  });

  describe('x-kubernetes-list-type', () => {
    it('rejects duplicates in a set and duplicate keys in a map list (keys defaulted first)', async () => {
      const set = await failure(create('w-dup-set', { tags: ['a', 'b', 'a'] }));
      expect(causesOf(set.status)).to.deep.equal([
        { reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"', field: 'spec.tags[2]' },
      ]);
      const map = await failure(create('w-dup-map', { ports: [{ port: 80 }, { port: 80, protocol: 'TCP' }] }));
      expect(causesOf(map.status)).to.deep.equal([
        {
          reason: 'FieldValueDuplicate',
          message: 'Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}',
          field: 'spec.ports[1]',
        },
      ]);
      await create('w-ports', { ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }] });
    });

    it('server-side apply merges a map list by key: two managers own their own status.conditions items', async () => {
      await create('w-ssa', {});
      const apply = (manager: string, condition: Record<string, string>) =>
        raw(
          c.server,
          'PATCH',
          `${WIDGET_PATH}/w-ssa/status?fieldManager=${manager}`,
          JSON.stringify({
            apiVersion: 'valid.rxkube.dev/v1',
            kind: 'Widget',
            metadata: { name: 'w-ssa' },
            status: { conditions: [condition] },
          }),
          { 'content-type': 'application/apply-patch+yaml' },
        );
      expect((await apply('ctrl-a', { type: 'Ready', status: 'True' })).status).to.equal(200);
      const second = await apply('ctrl-b', { type: 'Synced', status: 'False' });
      expect(second.status).to.equal(200);
      const obj = second.json as {
        status: { conditions: { type: string }[] };
        metadata: { managedFields: { manager: string; fieldsV1: unknown }[] };
      };
      expect(obj.status.conditions.map((x) => x.type)).to.deep.equal(['Ready', 'Synced']);
      const b = obj.metadata.managedFields.find((m) => m.manager === 'ctrl-b');
      expect(b?.fieldsV1).to.deep.equal({
        'f:status': { 'f:conditions': { 'k:{"type":"Synced"}': { '.': {}, 'f:status': {}, 'f:type': {} } } },
      });
      // ctrl-a dropping its item leaves ctrl-b's.
      const again = await raw(
        c.server,
        'PATCH',
        `${WIDGET_PATH}/w-ssa/status?fieldManager=ctrl-a`,
        JSON.stringify({ apiVersion: 'valid.rxkube.dev/v1', kind: 'Widget', metadata: { name: 'w-ssa' }, status: {} }),
        { 'content-type': 'application/apply-patch+yaml' },
      );
      expect((again.json as { status: { conditions: { type: string }[] } }).status.conditions.map((x) => x.type)).to.deep.equal(['Synced']);
    });
  });

  describe('multi-version CRDs (conversion None)', () => {
    const gauges = (version: string) => ({ group: 'valid.rxkube.dev', version, namespace: 'default', plural: 'gauges' });

    it("applies each version's schema: written through v1alpha1, pruned to v1 in storage, defaulted by v1 on read", async () => {
      await c.custom.createNamespacedCustomObject({
        ...gauges('v1alpha1'),
        body: {
          apiVersion: 'valid.rxkube.dev/v1alpha1',
          kind: 'Gauge',
          metadata: { name: 'g1' },
          spec: { size: 5, extra: 'kept by v1alpha1 only' },
        },
      });
      const v1 = (await c.custom.getNamespacedCustomObject({ ...gauges('v1'), name: 'g1' })) as { apiVersion: string; spec: unknown };
      expect(v1.apiVersion).to.equal('valid.rxkube.dev/v1');
      expect(v1.spec).to.deep.equal({ size: 5, replicas: 1 });
      const alpha = (await c.custom.getNamespacedCustomObject({ ...gauges('v1alpha1'), name: 'g1' })) as {
        apiVersion: string;
        spec: unknown;
      };
      expect(alpha.apiVersion).to.equal('valid.rxkube.dev/v1alpha1');
      // The pruned field is gone for good; v1's default shows, as the real server defaults what it reads from storage.
      expect(alpha.spec).to.deep.equal({ size: 5, replicas: 1 });
    });

    it("validates with the version written through: v1's maximum holds for v1 writes, not for v1alpha1 writes", async () => {
      await c.custom.createNamespacedCustomObject({
        ...gauges('v1alpha1'),
        body: { apiVersion: 'valid.rxkube.dev/v1alpha1', kind: 'Gauge', metadata: { name: 'g-big' }, spec: { size: 50 } },
      });
      const { code, status } = await failure(
        c.custom.createNamespacedCustomObject({
          ...gauges('v1'),
          body: { apiVersion: 'valid.rxkube.dev/v1', kind: 'Gauge', metadata: { name: 'g-big-v1' }, spec: { size: 50 } },
        }),
      );
      expect(code).to.equal(422);
      expect(causesOf(status)).to.deep.equal([
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: 50: spec.size in body should be less than or equal to 10',
          field: 'spec.size',
        },
      ]);
      // Ratcheting: a v1 update that leaves the out-of-range size alone is accepted; one that changes it to another bad value is not.
      await c.custom.patchNamespacedCustomObject({
        ...gauges('v1'),
        name: 'g-big',
        body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
      });
      expect(
        (
          await failure(
            c.custom.patchNamespacedCustomObject({
              ...gauges('v1'),
              name: 'g-big',
              body: [{ op: 'replace', path: '/spec/size', value: 60 }],
            }),
          )
        ).code,
      ).to.equal(422);
    });
  });

  describe('ratcheting compares values as JSON, not as text', () => {
    it('an update that sends an unchanged object with its keys in another order keeps a rule added after the object was written from failing on it', async () => {
      const spec = { type: 'object', properties: { low: { type: 'integer' }, high: { type: 'integer' } } };
      await postCrd(specCrd('spans', 'Span', spec));
      const path = '/apis/valid.rxkube.dev/v1/namespaces/default/spans';
      const created = await raw(
        c.server,
        'POST',
        path,
        JSON.stringify({ apiVersion: 'valid.rxkube.dev/v1', kind: 'Span', metadata: { name: 's' }, spec: { low: 5, high: 1 } }),
      );
      expect(created.status, created.text).to.equal(201);
      // The rule comes after the object: the stored spec breaks it.
      const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/spans.valid.rxkube.dev';
      const stored = (await raw(c.server, 'GET', crdPath)).json as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
      stored.spec.versions[0].schema.openAPIV3Schema = {
        type: 'object',
        properties: { spec: { ...spec, 'x-kubernetes-validations': [{ rule: 'self.low <= self.high', message: 'low must be <= high' }] } },
      };
      const tightened = await raw(c.server, 'PUT', crdPath, JSON.stringify(stored));
      expect(tightened.status, tightened.text).to.equal(200);
      const rvOf = (res: { json: unknown }) => (res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const put = (rv: string, specText: string) =>
        raw(
          c.server,
          'PUT',
          `${path}/s`,
          `{"apiVersion":"valid.rxkube.dev/v1","kind":"Span","metadata":{"name":"s","resourceVersion":"${rv}","labels":{"a":"b"}},"spec":${specText}}`,
        );
      const reordered = await put(rvOf(created), '{"high":1,"low":5}');
      expect(reordered.status, reordered.text).to.equal(200);
      const changed = await put(rvOf(reordered), '{"high":1,"low":6}');
      expect(changed.status, changed.text).to.equal(422);
      expect(changed.text).to.contain('low must be <= high');
    });
  });

  describe('enum compares values as JSON, not as text', () => {
    it('accepts an object listed in an enum with its keys in another order, and refuses one not listed', async () => {
      const spec = {
        type: 'object',
        properties: { size: { type: 'object', enum: [{ cpu: 1, memory: 2 }], 'x-kubernetes-preserve-unknown-fields': true } },
      };
      await postCrd(specCrd('shapes', 'Shape', spec));
      const path = '/apis/valid.rxkube.dev/v1/namespaces/default/shapes';
      const post = (name: string, sizeText: string) =>
        raw(
          c.server,
          'POST',
          path,
          `{"apiVersion":"valid.rxkube.dev/v1","kind":"Shape","metadata":{"name":"${name}"},"spec":{"size":${sizeText}}}`,
        );
      const reordered = await post('reordered', '{"memory":2,"cpu":1}');
      expect(reordered.status, reordered.text).to.equal(201);
      const other = await post('other', '{"memory":3,"cpu":1}');
      expect(other.status, other.text).to.equal(422);
      expect(other.text).to.contain('spec.size: Unsupported value');
    });
  });

  describe('the CRD itself', () => {
    const withSchema = (openAPIV3Schema: unknown) =>
      crd('things.valid.rxkube.dev', 'valid.rxkube.dev', 'Thing', [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } },
      ]);

    it('refuses a non-structural schema: a field without type, properties with additionalProperties', async () => {
      const typeless = await refusedCrd(withSchema({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }));
      expect(causesOf(typeless.status)).to.deep.equal([
        {
          reason: 'FieldValueRequired',
          message: 'Required value: must not be empty for specified object fields',
          field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type',
        },
      ]);
      const both = await refusedCrd(
        withSchema({
          type: 'object',
          properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } },
        }),
      );
      expect(causesOf(both.status)).to.deep.equal([
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: additionalProperties and properties are mutual exclusive',
          field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties',
        },
      ]);
    });

    it('refuses a map list without keys and an unknown list type', async () => {
      const { status } = await refusedCrd(
        withSchema({
          type: 'object',
          properties: {
            a: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } },
            b: { type: 'array', 'x-kubernetes-list-type': 'bag', items: { type: 'string' } },
          },
        }),
      );
      expect(causesOf(status)).to.deep.equal([
        {
          reason: 'FieldValueRequired',
          message: 'Required value: must not be empty if x-kubernetes-list-type is map',
          field: 'spec.versions[0].schema.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys',
        },
        {
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "bag": supported values: "atomic", "map", "set"',
          field: 'spec.versions[0].schema.openAPIV3Schema.properties[b].x-kubernetes-list-type',
        },
      ]);
    });

    it('refuses bad and duplicate version names, bad short names and spec.preserveUnknownFields', async () => {
      const body = crd('things.valid.rxkube.dev', 'valid.rxkube.dev', 'Thing', [
        { name: 'V1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        { name: 'V1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      ]);
      const spec = body.spec as Record<string, unknown>;
      spec.names = { plural: 'things', kind: 'Thing', shortNames: ['T_1'] };
      spec.preserveUnknownFields = true;
      const { code, status } = await refusedCrd(body);
      expect(code).to.equal(422);
      expect((causesOf(status) as { field: string }[]).map((x) => x.field)).to.deep.equal([
        'spec.names.shortNames[0]',
        'spec.preserveUnknownFields',
        'spec.versions[0].name',
        'spec.versions[1].name',
        'spec.versions[1].name',
      ]);
    });

    it("treats client-node's x_kubernetes_preserve_unknown_fields spelling as an unknown field: 400 with fieldValidation=Strict, a warning and a closed object otherwise", async () => {
      const body = withSchema({ type: 'object', x_kubernetes_preserve_unknown_fields: true });
      const strict = await raw(
        c.server,
        'POST',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict',
        JSON.stringify(body),
      );
      expect(strict.status).to.equal(400);
      expect((strict.json as { message: string }).message).to.equal(
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema.x_kubernetes_preserve_unknown_fields"',
      );
      const warned = await raw(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(body));
      expect(warned.status).to.equal(201);
      expect(String(warned.headers.warning)).to.contain(
        'unknown field \\"spec.versions[0].schema.openAPIV3Schema.x_kubernetes_preserve_unknown_fields\\"',
      );
      const stored = (warned.json as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } }).spec.versions[0].schema
        .openAPIV3Schema;
      expect(stored).to.deep.equal({ type: 'object' });
    });
  });

  describe('with kubectl', function () {
    let dir: string;
    let kubeconfig: string;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
      dir = await mkdtemp(join(tmpdir(), 'rxkube-crd-validation-'));
      kubeconfig = join(dir, 'kubeconfig');
      await c.server.writeKubeconfig(kubeconfig);
    });
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    const kubectl = async (...args: string[]): Promise<{ ok: boolean; out: string }> => {
      try {
        const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
          timeout: 30_000,
        });
        return { ok: true, out: stdout };
      } catch (err) {
        return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
      }
    };
    const applyJson = async (name: string, obj: unknown) => {
      const path = join(dir, name);
      await writeFile(path, JSON.stringify(obj));
      return kubectl('apply', '-f', path);
    };

    it('kubectl apply of a widget with min > max fails with the rule message', async () => {
      const res = await applyJson('w.json', widget('w-kubectl', { min: 5, max: 1 }));
      expect(res.ok).to.equal(false);
      expect(res.out).to.contain('The Widget "w-kubectl" is invalid: spec: Invalid value: "object": min must be <= max');
    });

    it('kubectl apply of a CRD with the x_kubernetes_preserve_unknown_fields spelling fails with a strict decoding error', async () => {
      const res = await applyJson(
        'crd.json',
        crd('spellings.valid.rxkube.dev', 'valid.rxkube.dev', 'Spelling', [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          },
        ]),
      );
      expect(res.ok).to.equal(false);
      expect(res.out).to.contain(
        'strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema.x_kubernetes_preserve_unknown_fields"',
      );
    });

    it('kubectl apply of a widget with a duplicate set item fails with Duplicate value', async () => {
      const res = await applyJson('dup.json', widget('w-kubectl-dup', { tags: ['x', 'x'] }));
      expect(res.ok).to.equal(false);
      expect(res.out).to.contain('spec.tags[1]: Duplicate value: "x"');
    });
  });
});
