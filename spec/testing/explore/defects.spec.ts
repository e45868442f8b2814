import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Operator } from '../../../lib/index.js';
import { customResourceDefinition } from '../../../lib/kube.js';
import { explore, replay, schemaWorkload, type ExploreOptions } from '../../../lib/testing/explore/index.js';
import { snapshot } from '../../../lib/testing/explore/state.js';
import { subjects } from './subjects.js';

const crdWith = (properties: Record<string, object>) =>
  customResourceDefinition({ group: 'defects.rxkube.dev', kind: 'Thing', plural: 'things', spec: { type: 'object', properties } });
const base = { apiVersion: 'defects.rxkube.dev/v1', kind: 'Thing', metadata: { name: 't' }, spec: {} };

describe("testing: the explorer's smaller defects", function () {
  this.timeout(120_000);

  it('schemaWorkload changes a spec whose only field is a map: empty, one entry, one of the wrong type', () => {
    const workload = schemaWorkload({ crd: crdWith({ labels: { type: 'object', additionalProperties: { type: 'string' } } }), base });
    expect(workload.cases).to.deep.equal([
      { field: 'spec.labels', value: {}, kind: 'boundary' },
      { field: 'spec.labels', value: { key: 'x' }, kind: 'valid' },
      { field: 'spec.labels', value: { key: 1 }, kind: 'invalid' },
    ]);
  });

  it("schemaWorkload offers no string its pattern forbids as a boundary: '' is invalid under ^[a-z]+$", () => {
    const workload = schemaWorkload({ crd: crdWith({ name: { type: 'string', pattern: '^[a-z]+$' } }), base });
    expect(workload.cases.map((c) => [c.value === '' ? "''" : String(c.value).length, c.kind])).to.deep.equal([
      ["''", 'invalid'],
      [256, 'boundary'],
      ['not a valid value!'.length, 'invalid'],
    ]);
  });

  it('coverage.inputCases counts distinct generated cases, not the seeds that picked them', async () => {
    const crd = crdWith({ on: { type: 'boolean' } });
    const options: ExploreOptions = {
      crds: [crd],
      setup: (operator: Operator) =>
        void operator.register(
          { reconcile: () => undefined },
          { resource: { apiVersion: 'defects.rxkube.dev/v1', kind: 'Thing', plural: 'things' } },
        ),
      observe: [{ apiVersion: 'defects.rxkube.dev/v1', kind: 'Thing', plural: 'things' }],
      workload: schemaWorkload({ crd, base }),
      budget: { runs: 6 },
    };
    const { coverage } = await explore(options);
    expect(coverage.inputCases).to.equal(2);
  });

  it('volatile names a key with dots, as a list of keys or with an escaped dot', () => {
    const seen = (value: string): KubernetesObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default', annotations: { 'example.com/seen': value, keep: 'k' } },
    });
    for (const path of [['metadata', 'annotations', 'example.com/seen'], 'metadata.annotations.example\\.com/seen']) {
      expect(snapshot([seen('1')], [path]).get('ConfigMap default/c'), JSON.stringify(path)).to.deep.equal(
        snapshot([seen('2')], [path]).get('ConfigMap default/c'),
      );
      expect(snapshot([seen('1')], [path]).get('ConfigMap default/c')).to.deep.nested.include({ 'metadata.annotations.keep': 'k' });
    }
  });

  it('counts the budget in seeds; the time cap says in the result that it cut the exploration short', async () => {
    const fixed = subjects.find((s) => s.name === 'generated-name')!.options('fixed');
    const full = await explore({ ...fixed, budget: { runs: 3 } });
    expect([full.seedsTried, full.cutShort]).to.deep.equal([3, undefined]);
    const capped = await explore({ ...fixed, budget: { runs: 50, timeMs: 1 } });
    expect(capped.cutShort?.byTimeMs).to.equal(1);
    expect(capped.cutShort?.seedsBudgeted).to.equal(50);
    expect(capped.seedsTried).to.be.below(50);
  });

  it("a Failure keeps the found run's verdict beside the shrunk one, and replay(seed) says it again", async () => {
    const buggy = subjects.find((s) => s.name === 'scale-down')!.options('buggy');
    const { failure } = await explore(buggy);
    expect(failure?.found.failed).to.equal(true);
    expect(failure?.found.trace.seed).to.equal(failure?.seed);
    const again = await replay(buggy, failure!.seed);
    expect({ oracle: again.oracle, message: again.message }).to.deep.equal({
      oracle: failure?.found.oracle,
      message: failure?.found.message,
    });
  });
});
