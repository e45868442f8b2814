import { expect } from 'chai';
import type { DependentResource } from '../../lib/dependent/index.js';
import { workflow, type WorkflowOptions } from '../../lib/workflow/index.js';
import { DEFAULT_MAX_CONCURRENT_DEPENDENTS } from '../../lib/workflow/workflow.js';
import { primary, World, type Ctx, type Item, type Primary } from './fakes.js';

const named = (name: string): DependentResource<Item, Primary, Ctx> => ({ name });

describe('workflow builder (WF1) and toMermaid', () => {
  it('WF1: a cycle is rejected at build time with its path', () => {
    const build = () =>
      workflow<Primary, Ctx>()
        .add(named('a'), { dependsOn: 'c' })
        .add(named('b'), { dependsOn: 'a' })
        .add(named('c'), { dependsOn: ['b'] })
        .add(named('d'))
        .build();
    expect(build).to.throw(/dependsOn forms a cycle: a -> c -> b -> a/);
  });

  it('WF1: a dependent depending on itself is a cycle', () => {
    expect(() => workflow<Primary>().add(named('a'), { dependsOn: 'a' }).build()).to.throw(/cycle: a -> a/);
  });

  it('WF1: an unknown dependsOn name is rejected, naming both dependents', () => {
    expect(() =>
      workflow<Primary>()
        .add(named('a'))
        .add(named('b'), { dependsOn: ['a', 'cm'] })
        .build(),
    ).to.throw("workflow: dependent 'b' dependsOn 'cm', which is not in the workflow");
  });

  it('WF1: dependsOn a dependent object that was never added is rejected', () => {
    const stray = named('stray');
    expect(() => workflow<Primary>().add(named('a'), { dependsOn: stray }).build()).to.throw(
      "workflow: dependent 'a' dependsOn a dependent object that was not added to the workflow (named 'stray')",
    );
  });

  it('WF1: a dependsOn entry that is neither a name nor a dependent is rejected', () => {
    expect(() =>
      workflow<Primary>()
        .add(named('a'), { dependsOn: [undefined as unknown as string] })
        .build(),
    ).to.throw("workflow: dependent 'a' has a dependsOn entry that is undefined; expected a dependent name or a dependent object");
  });

  it('WF1: dependsOn takes dependent objects, resolved to their names, in any add order', () => {
    const cm = named('configmap');
    const deploy = named('deployment');
    const wf = workflow<Primary>()
      .add(deploy, { dependsOn: [cm] })
      .add({ desired: () => ({ owner: 'x', dependent: 'svc' }) }, { name: 'service', dependsOn: [deploy, 'configmap'] })
      .add(cm)
      .build();
    expect(wf.nodes.map((n) => n.name)).to.deep.equal(['configmap', 'deployment', 'service']);
    expect(wf.nodes.map((n) => [n.name, n.dependsOn, n.dependents])).to.deep.equal([
      ['configmap', [], ['deployment', 'service']],
      ['deployment', ['configmap'], ['service']],
      ['service', ['deployment', 'configmap'], []],
    ]);
  });

  it('WF1: names must be present and unique; one dependent object cannot be added twice', () => {
    expect(() => workflow<Primary>().add(named('a')).add(named('a')).build()).to.throw(
      "workflow: two dependents are named 'a'; names must be unique",
    );
    expect(() => workflow<Primary>().add(named('a')).add({}).build()).to.throw(
      'workflow: dependent #2 has no name; set its name or pass { name } to add()',
    );
    const a = named('a');
    expect(() => workflow<Primary>().add(a).add(a, { name: 'a2' }).build()).to.throw(
      "workflow: the same dependent object was added twice (as 'a' and 'a2')",
    );
  });

  it('rejects a condition that is not a function and a bad maxConcurrentDependents, naming them', () => {
    expect(() =>
      workflow<Primary>()
        .add(named('a'), { readyPostcondition: true as unknown as () => boolean })
        .build(),
    ).to.throw("workflow: readyPostcondition of dependent 'a' must be a function, got boolean");
    expect(() => workflow<Primary>().build({ maxConcurrentDependents: 0 })).to.throw(
      'workflow: maxConcurrentDependents must be a positive integer or Infinity, got 0',
    );
    expect(() => workflow<Primary>().build({ maxConcurrentDependents: 1.5 })).to.throw(/maxConcurrentDependents/);
    expect(workflow<Primary>().build({ maxConcurrentDependents: Infinity }).maxConcurrentDependents).to.equal(Infinity);
    expect(workflow<Primary>().build().maxConcurrentDependents).to.equal(DEFAULT_MAX_CONCURRENT_DEPENDENTS);
  });

  it('refuses the old name maxConcurrency by name, in build() and in a run, instead of ignoring it', () => {
    const old = { maxConcurrency: 1 } as unknown as WorkflowOptions;
    expect(() => workflow<Primary>().build(old)).to.throw('workflow: maxConcurrency is now maxConcurrentDependents');
    const wf = workflow<Primary>().build();
    expect(() => wf.reconcile$({} as Primary, {}, old)).to.throw('workflow: maxConcurrency is now maxConcurrentDependents');
  });

  it('the builder is immutable: add returns a new builder', async () => {
    const w = new World();
    const base = workflow<Primary, Ctx, string>().add(w.dependent('a'));
    const extended = base.add(w.dependent('b'), { dependsOn: 'a' });
    expect(base.build().nodes.map((n) => n.name)).to.deep.equal(['a']);
    expect(extended.build().nodes.map((n) => n.name)).to.deep.equal(['a', 'b']);
  });

  it('conditions receive their own dependent, the primary and the context', async () => {
    const w = new World();
    const dep = w.dependent('a');
    const seen: unknown[] = [];
    const ctx: Ctx = {};
    await workflow<Primary, Ctx, string>()
      .add(dep, { readyPostcondition: (d, p, c) => (seen.push(d, p, c), true) })
      .build()
      .reconcile(primary, ctx);
    expect(seen).to.have.length(3);
    expect(seen[0]).to.equal(dep);
    expect(seen[1]).to.equal(primary);
    expect(seen[2]).to.equal(ctx);
  });

  it('toMermaid draws nodes, reconcile-order edges and conditions', () => {
    const yes = () => true;
    const wf = workflow<Primary>()
      .add(named('configmap'))
      .add(named('deployment'), { dependsOn: 'configmap', readyPostcondition: yes })
      .add(named('ingress'), {
        dependsOn: ['deployment', 'configmap'],
        reconcilePrecondition: yes,
        deletePostcondition: yes,
      })
      .add(named('route "a" <b>'), { activationCondition: yes })
      .build();
    expect(wf.toMermaid()).to.equal(
      [
        'graph TD',
        '  n0["configmap"]',
        '  n1["deployment<br/>ready postcondition"]',
        '  n2["ingress<br/>reconcile precondition<br/>delete postcondition"]',
        '  n3["route #quot;a#quot; #lt;b#gt;<br/>activation condition"]',
        '  n0 --> n1',
        '  n1 --> n2',
        '  n0 --> n2',
        '',
      ].join('\n'),
    );
  });
});
