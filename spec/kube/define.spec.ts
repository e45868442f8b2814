/**
 * A resource defined once with TypeBox: the structural schema derived from it, the CRD of every
 * version, the descriptor, and the CRD as the embedded API server and kubectl take it (valid objects
 * applied, invalid ones rejected with the schema's own messages).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Type } from 'typebox';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { ConfigurationError, statusCondition } from '../../lib/core/index.js';
import { manifestsToYaml } from '../../lib/index.js';
import {
  builtinResources,
  createKubeClient,
  crdToJson,
  customResourceDefinition,
  defineResource,
  installCustomResourceDefinition,
  StatusConditions,
  statusConditionsSchema,
  structuralSchema,
  type ResourceOf,
} from '../../lib/kube/index.js';

/** A resource with two versions, CEL rules, list and map types, an enum, int-or-string and a nullable field. */
const Gadget = defineResource({
  group: 'example.com',
  kind: 'Gadget',
  plural: 'gadgets',
  shortNames: ['gd'],
  categories: ['all'],
  versions: {
    v1: {
      storage: true,
      spec: Type.Object(
        {
          size: Type.Integer({ minimum: 1, maximum: 10, description: 'How many.' }),
          colour: Type.Optional(Type.Union([Type.Literal('red'), Type.Literal('green')], { default: 'red' })),
          port: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
          labels: Type.Optional(Type.Record(Type.String(), Type.String())),
          owner: Type.Optional(Type.Union([Type.String(), Type.Null()])),
          min: Type.Optional(Type.Integer()),
          max: Type.Optional(Type.Integer()),
          parts: Type.Optional(
            Type.Array(Type.Object({ name: Type.String(), count: Type.Integer({ exclusiveMinimum: 0 }) }), {
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
            }),
          ),
          extra: Type.Optional(Type.Unknown()),
        },
        {
          'x-kubernetes-validations': [
            { rule: '!has(self.min) || !has(self.max) || self.min <= self.max', message: 'min must not exceed max' },
          ],
        },
      ),
      status: Type.Object({ ready: Type.Optional(Type.Boolean()), conditions: Type.Optional(StatusConditions) }),
      printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
      validations: [{ rule: "self.metadata.name != 'forbidden'", message: 'that name is reserved' }],
    },
    v1beta1: { spec: Type.Object({ size: Type.Integer() }), deprecated: true, deprecationWarning: 'use example.com/v1 Gadget' },
  },
});
type Gadget = ResourceOf<typeof Gadget>;

const kubectlAvailable = (): Promise<boolean> =>
  new Promise((resolve) => execFile('kubectl', ['version', '--client'], { timeout: 20_000 }, (err) => resolve(!err)));

/** kubectl with a kubeconfig for the server and a cache directory of its own. */
interface KubectlSession {
  readonly dir: string;
  kubectl(...args: string[]): Promise<string>;
}

async function kubectlSession(server: ApiServer): Promise<KubectlSession> {
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-define-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await server.writeKubeconfig(kubeconfig);
  const kubectl = (...args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 30_000 },
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- it is an Error: Node types execFile's as an Omit<> of ExecException, which the rule does not recognise
        (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)),
      ),
    );
  return { dir, kubectl };
}

describe('kube: defineResource, a custom resource defined once with TypeBox', () => {
  describe('structuralSchema', () => {
    it('rewrites the TypeBox forms that have a structural equivalent', () => {
      const schema = Type.Object(
        {
          literal: Type.Literal('only'),
          choice: Type.Union([Type.Literal(1), Type.Literal(2)]),
          named: Type.Enum(['a', 'b']),
          nullable: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
          intOrString: Type.Union([Type.String(), Type.Integer()], { description: 'a port' }),
          map: Type.Record(Type.String(), Type.Boolean()),
          positive: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
          anything: Type.Unknown({ description: 'kept as it is' }),
          closed: Type.Object({ a: Type.String() }, { additionalProperties: false }),
          open: Type.Object({ a: Type.String() }, { additionalProperties: true }),
          both: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.Number()) })]),
        },
        { $id: 'Dropped', examples: [{}] },
      );
      expect(structuralSchema(schema)).to.deep.equal({
        type: 'object',
        required: ['literal', 'choice', 'named', 'nullable', 'intOrString', 'map', 'positive', 'anything', 'closed', 'open', 'both'],
        properties: {
          literal: { type: 'string', enum: ['only'] },
          choice: { type: 'integer', enum: [1, 2] },
          named: { type: 'string', enum: ['a', 'b'] },
          nullable: { type: 'string', minLength: 1, nullable: true },
          intOrString: { description: 'a port', 'x-kubernetes-int-or-string': true },
          map: { type: 'object', additionalProperties: { type: 'boolean' } },
          positive: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
          anything: { description: 'kept as it is', 'x-kubernetes-preserve-unknown-fields': true },
          closed: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
          open: { type: 'object', required: ['a'], properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true },
          both: { type: 'object', required: ['a'], properties: { a: { type: 'string' }, b: { type: 'number' } } },
        },
      });
    });

    const refused: [string, Parameters<typeof structuralSchema>[0], RegExp][] = [
      [
        'a union of two objects',
        Type.Object({ u: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) }),
        /^spec\.u: a union is structural only as literals/,
      ],
      [
        'a tuple',
        Type.Object({ t: Type.Tuple([Type.String(), Type.Number()]) }),
        /^spec\.t\.items: must be one schema: a tuple is not structural/,
      ],
      ['a reference', Type.Object({ r: Type.Ref('Other') }), /^spec\.r: a CRD schema cannot refer to other schemas/],
      [
        'a record keyed by a pattern',
        Type.Object({ m: Type.Record(Type.String({ pattern: '^x' }), Type.String()) }),
        /^spec\.m\.patternProperties: only Type\.Record\(Type\.String\(\), T\)/,
      ],
      ['null alone', Type.Object({ n: Type.Null() }), /^spec\.n\.type: "null" is not a CRD schema type/],
      [
        'a keyword Kubernetes does not know',
        Type.Object({ s: Type.String({ contentEncoding: 'base64' }) }),
        /^spec\.s\.contentEncoding: is not a keyword a CRD schema can hold/,
      ],
    ];
    for (const [what, schema, message] of refused) {
      it(`refuses ${what} with a ConfigurationError naming the path`, () => {
        expect(() => structuralSchema(schema, 'spec')).to.throw(ConfigurationError, message);
      });
    }

    it('statusConditionsSchema is StatusConditions in client-node typed form', () => {
      expect(
        crdToJson(
          customResourceDefinition({
            group: 'example.com',
            kind: 'Gadget',
            plural: 'gadgets',
            status: { type: 'object', properties: { conditions: statusConditionsSchema } },
          }),
        ).spec.versions[0]?.schema?.openAPIV3Schema?.properties?.['status']?.properties?.['conditions'],
      ).to.deep.equal(structuralSchema(StatusConditions));
    });
  });

  describe('the CRD and descriptor', () => {
    it('has every version, the storage version, subresources, printer columns, names and root CEL rules', () => {
      const { crd } = Gadget;
      expect(crd.metadata?.name).to.equal('gadgets.example.com');
      expect(crd.spec.names).to.deep.equal({
        plural: 'gadgets',
        singular: 'gadget',
        kind: 'Gadget',
        listKind: 'GadgetList',
        shortNames: ['gd'],
        categories: ['all'],
      });
      expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false])).to.deep.equal([
        ['v1', true, true, false],
        ['v1beta1', true, false, true],
      ]);
      const [v1, v1beta1] = crdToJson(crd).spec.versions;
      expect(v1?.subresources).to.deep.equal({ status: {} });
      expect(v1beta1?.subresources).to.equal(undefined);
      expect(v1?.additionalPrinterColumns).to.deep.equal([{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }]);
      const root = v1?.schema?.openAPIV3Schema as Record<string, unknown>;
      expect(root['required']).to.deep.equal(['spec']);
      expect(root['x-kubernetes-validations']).to.deep.equal([
        { rule: "self.metadata.name != 'forbidden'", message: 'that name is reserved' },
      ]);
      // client-node's typed form in `crd`, Kubernetes' spelling after crdToJson.
      expect(crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.['spec']?.x_kubernetes_validations).to.have.length(1);
      expect(Gadget.descriptor).to.deep.equal({ apiVersion: 'example.com/v1', kind: 'Gadget', plural: 'gadgets', namespaced: true });
      expect(Gadget.descriptorAt('v1beta1').apiVersion).to.equal('example.com/v1beta1');
      expect(Gadget.storageVersion).to.equal('v1');
    });

    it('a single version is the storage version; a cluster-scoped resource has a cluster-scoped descriptor', () => {
      const Zone = defineResource({
        group: 'example.com',
        kind: 'Zone',
        plural: 'zones',
        scope: 'Cluster',
        versions: { v2: { spec: Type.Object({}) } },
      });
      expect(Zone.descriptor).to.deep.equal({ apiVersion: 'example.com/v2', kind: 'Zone', plural: 'zones', namespaced: false });
      expect(Zone.crd.spec.versions[0]).to.include({ name: 'v2', served: true, storage: true });
      expect(Zone.crd.spec.scope).to.equal('Cluster');
    });

    const bad: [string, () => unknown, RegExp][] = [
      [
        'two versions and no storage version',
        () =>
          defineResource({
            group: 'example.com',
            kind: 'A',
            plural: 'as',
            versions: { v1: { spec: Type.Object({}) }, v2: { spec: Type.Object({}) } },
          }),
        /^versions: mark one of v1, v2 with storage: true/,
      ],
      [
        'two storage versions',
        () =>
          defineResource({
            group: 'example.com',
            kind: 'A',
            plural: 'as',
            versions: { v1: { storage: true, spec: Type.Object({}) }, v2: { storage: true, spec: Type.Object({}) } },
          }),
        /^versions: only one version is stored, but v1 and v2/,
      ],
      [
        'no version',
        () => defineResource({ group: 'example.com', kind: 'A', plural: 'as', versions: {} }),
        /^versions: A needs at least one version/,
      ],
      [
        'a group without a dot',
        () => defineResource({ group: 'example', kind: 'A', plural: 'as', versions: { v1: { spec: Type.Object({}) } } }),
        /^group: 'example' must be a domain with a dot/,
      ],
      [
        'a plural in capitals',
        () => defineResource({ group: 'example.com', kind: 'A', plural: 'As', versions: { v1: { spec: Type.Object({}) } } }),
        /^resource\.plural/,
      ],
      [
        'a schema a CRD cannot hold, naming its version and path',
        () =>
          defineResource({
            group: 'example.com',
            kind: 'A',
            plural: 'as',
            versions: { v1: { spec: Type.Object({ t: Type.Tuple([Type.String()]) }) } },
          }),
        /^versions\.v1\.spec\.t/,
      ],
    ];
    for (const [what, define, message] of bad) {
      it(`rejects ${what} with a ConfigurationError`, () => {
        expect(define).to.throw(ConfigurationError, message);
      });
    }

    it("types: ResourceOf gives spec and status their schemas' types, and wrong fields do not compile (checked by npm run typecheck)", () => {
      const gadget: Gadget = {
        apiVersion: Gadget.descriptor.apiVersion,
        kind: 'Gadget',
        metadata: { name: 'g' },
        spec: { size: 2, colour: 'green', port: 'http', labels: { a: 'b' }, owner: null, parts: [{ name: 'p', count: 1 }] },
        status: { ready: true, conditions: [statusCondition({}, { type: 'Ready', status: true, reason: 'Done' })] },
      };
      const size: number = gadget.spec.size;
      const older: ResourceOf<typeof Gadget, 'v1beta1'> = { spec: { size } };
      // @ts-expect-error: size is an integer, not a string
      const wrongType: Gadget = { spec: { size: '2' } };
      // @ts-expect-error: colour is 'red' or 'green'
      const wrongLiteral: Gadget = { spec: { size: 1, colour: 'blue' } };
      // @ts-expect-error: spec is required
      const noSpec: Gadget = { metadata: { name: 'g' } };
      // @ts-expect-error: v1beta1 has no status schema, so no status
      const olderStatus: ResourceOf<typeof Gadget, 'v1beta1'> = { spec: { size: 1 }, status: { ready: true } };
      // @ts-expect-error: no such version
      expect(() => Gadget.descriptorAt('v2')).to.throw(ConfigurationError, /^version: Gadget has no version 'v2' \(it has v1, v1beta1\)/);
      expect([gadget, older, wrongType, wrongLiteral, noSpec, olderStatus]).to.have.length(6);
    });
  });

  describe('against the embedded API server, with the real client and kubectl', () => {
    let server: ApiServer;
    let session: KubectlSession;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip();
      server = await startApiServer();
      session = await kubectlSession(server);
      await installCustomResourceDefinition(createKubeClient(server.kubeConfig()), Gadget.crd);
    });
    after(async () => {
      if (session) await rm(session.dir, { recursive: true, force: true });
      await server?.close();
    });

    async function apply(object: unknown): Promise<{ ok: boolean; out: string }> {
      const file = join(session.dir, 'object.json');
      await writeFile(file, JSON.stringify(object));
      try {
        return { ok: true, out: await session.kubectl('apply', '-f', file) };
      } catch (err) {
        return { ok: false, out: String((err as { stderr?: string }).stderr) };
      }
    }

    it('the server accepts the CRD, serves both versions and keeps the schema as given', async () => {
      const client = createKubeClient(server.kubeConfig());
      const stored = await client
        .resource<typeof Gadget.crd & KubernetesObject>(builtinResources.customResourceDefinition)
        .get({ name: 'gadgets.example.com' });
      expect(stored.spec.versions.map((v) => v.name)).to.deep.equal(['v1', 'v1beta1']);
      const resources = await session.kubectl('api-resources', '--api-group=example.com', '-o', 'name');
      expect(resources.trim()).to.equal('gadgets.example.com');
    });

    it('kubectl applies an object valid under the schema, and prints its columns', async () => {
      const result = await apply({
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'ok', namespace: 'default' },
        spec: { size: 3, port: 8080, min: 1, max: 2, parts: [{ name: 'a', count: 1 }] },
      });
      expect(result, result.out).to.deep.include({ ok: true });
      const table = await session.kubectl('get', 'gadgets', 'ok', '-n', 'default');
      expect(table)
        .to.match(/NAME\s+SIZE/)
        .and.match(/ok\s+3/);
      const got = JSON.parse(await session.kubectl('get', 'gadget', 'ok', '-n', 'default', '-o', 'json')) as Gadget;
      expect(got.spec.colour, 'the default from the schema').to.equal('red');
    });

    const invalid: [string, Record<string, unknown>, RegExp][] = [
      ['a CEL rule of spec', { size: 3, min: 5, max: 1 }, /min must not exceed max/],
      ['a minimum', { size: 0 }, /spec\.size: Invalid value: 0: spec\.size in body should be greater than or equal to 1/],
      ['an enum of literals', { size: 1, colour: 'blue' }, /spec\.colour: Unsupported value: "blue": supported values: "red", "green"/],
      ['an exclusive minimum', { size: 1, parts: [{ name: 'a', count: 0 }] }, /count in body should be greater than 0/],
      [
        'a map list with a duplicate key',
        {
          size: 1,
          parts: [
            { name: 'a', count: 1 },
            { name: 'a', count: 2 },
          ],
        },
        /spec\.parts\[1\]: Duplicate value/,
      ],
    ];
    for (const [what, spec, message] of invalid) {
      it(`the server rejects an object that breaks ${what}, with the schema's message`, async () => {
        const result = await apply({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'bad', namespace: 'default' }, spec });
        expect(result.ok).to.equal(false);
        expect(result.out).to.match(message);
      });
    }

    it('the CRD as rxkube manifests writes it (YAML) is applied by kubectl, and its CEL rules hold', async () => {
      const Widget = defineResource({
        group: 'example.com',
        kind: 'Widget',
        plural: 'widgets',
        scope: 'Cluster',
        versions: {
          v1: {
            spec: Type.Object(
              { a: Type.Integer(), b: Type.Integer() },
              { 'x-kubernetes-validations': [{ rule: 'self.a < self.b', message: 'a must be below b' }] },
            ),
          },
        },
      });
      const file = join(session.dir, 'crd.yaml');
      await writeFile(file, manifestsToYaml([crdToJson(Widget.crd)]));
      await session.kubectl('apply', '-f', file);
      await session.kubectl('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s');
      expect(await apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { a: 1, b: 2 } })).to.deep.include({
        ok: true,
      });
      const bad = await apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { a: 2, b: 1 } });
      expect(bad.ok).to.equal(false);
      expect(bad.out).to.match(/a must be below b/);
    });

    it("the server rejects an object that breaks a CEL rule on the object's root", async () => {
      const result = await apply({
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'forbidden', namespace: 'default' },
        spec: { size: 1 },
      });
      expect(result).to.deep.include({ ok: false });
      expect(result.out).to.match(/that name is reserved/);
    });
  });
});
